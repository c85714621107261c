package formats

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The formats are held to santhosh-tekuri/jsonschema's checks by
// internal/schema (TestNativeFormats, FuzzNativeFormats); these are the
// edges worth reading.
func TestFormats(t *testing.T) {
	for _, tt := range []struct {
		check func(string) bool
		good  []string
		bad   []string
	}{
		{UUID, []string{"6f1c2a9e-8d3b-4c5a-9e7f-1a2b3c4d5e6f", "6F1C2A9E-8D3B-4C5A-9E7F-1A2B3C4D5E6F"},
			[]string{"", "6f1c2a9e8d3b4c5a9e7f1a2b3c4d5e6f", "6f1c2a9e-8d3b-4c5a-9e7f-1a2b3c4d5e6g", "6f1c2a9e-8d3b-4c5a-9e7f_1a2b3c4d5e6f"}},
		{Date, []string{"2024-02-29", "2000-02-29", "0000-01-01", "2026-12-31"},
			[]string{"2023-02-29", "1900-02-29", "2026-13-01", "2026-00-10", "2026-04-31", "2026-1-01", "２０２６-01-01", "+026-01-01"}},
		{DateTime, []string{"2026-11-21T10:15:00Z", "2026-11-21t10:15:00.5+05:30", "2026-12-31T23:59:60Z", "2026-12-31T22:59:60-01:00"},
			[]string{"2026-11-21 10:15:00Z", "2026-11-21T24:00:00Z", "2026-11-21T10:15:00", "2026-11-21T10:15:60Z", "2026-11-21T+1:00:00Z"}},
		{IPv4, []string{"0.0.0.0", "255.255.255.255", "203.0.113.7"},
			[]string{"256.0.0.1", "01.2.3.4", "1.2.3", "1.2.3.4.5", "+1.2.3.4", "1..2.3"}},
		{IPv6, []string{"::", "::1", "2001:db8::1", "::ffff:1.2.3.4"},
			[]string{"1.2.3.4", "fe80::1%eth0", "2001:db8:::1", "12345::", "10:15", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9"}},
	} {
		for _, s := range tt.good {
			assert.True(t, tt.check(s), "%q", s)
		}
		for _, s := range tt.bad {
			assert.False(t, tt.check(s), "%q", s)
		}
	}
	for _, s := range []string{"2001:db8::1", "::ffff:1.2.3.4", "1:2:3:4:5:6:7:8", "10:15", "10:15:00", "Note: see below", "a:b:c"} {
		assert.Zero(t, testing.AllocsPerRun(10, func() { IPv6(s) }), "%q", s)
	}
	assert.True(t, IPv6("1:2:3:4:5:6:1.2.3.4"))
	assert.True(t, IPv6("1:2:3:4:5:6:7:8"))
}

// TestUnhex: every hexadecimal digit, in both cases, and IsHex on the
// rest.
func TestUnhex(t *testing.T) {
	for c := range 256 {
		v, err := strconv.ParseUint(string(rune(c)), 16, 8)
		if !IsHex(byte(c)) {
			if err == nil {
				t.Fatalf("IsHex(%q) false, but it is a hex digit", byte(c))
			}
			continue
		}
		if err != nil || byte(v) != Unhex(byte(c)) {
			t.Fatalf("Unhex(%q) = %d, want %d", byte(c), Unhex(byte(c)), v)
		}
	}
}
