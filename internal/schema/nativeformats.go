package schema

import (
	"net/netip"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The fast path checks the formats order-like bodies use most with
// functions of the string itself. The library's checks take an any (one
// allocation per value to box the string) and split strings into slices;
// for a body with a handful of formatted fields that was a third of the
// allocations of a request. Each native check gives the verdict of the
// format as registered with the library (its check, plus the stricter rule
// of formats.go where there is one); TestNativeFormats and
// FuzzNativeFormats hold them to it. Other formats (email, uri, hostname,
// …) run the library's check.
var nativeFormats = map[string]func(string) bool{
	"uuid":      isUUID,
	"date":      isDate,
	"date-time": isDateTime,
	"ipv4":      isIPv4,
	"ipv6":      isIPv6,
}

// formatCheck returns the fast path's check for a compiled format.
func formatCheck(f *jsonschema.Format) func(string) bool {
	if check, ok := nativeFormats[f.Name]; ok {
		return check
	}
	return func(s string) bool { return f.Validate(s) == nil }
}

// isUUID: 8-4-4-4-12 hex digits, either case.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !ishex(s[i]) {
				return false
			}
		}
	}
	return true
}

// isDate: a full-date of RFC 3339, with the days of its month.
func isDate(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// isDateTime: an RFC 3339 date-time. A leap second (:60) is allowed only
// at 23:59 UTC, as the library allows it.
func isDateTime(s string) bool {
	return len(s) >= 20 && (s[10] == 'T' || s[10] == 't') && isDate(s[:10]) && isTime(s[11:])
}

// isTime: hh:mm:ss, an optional fraction, then Z or ±hh:mm.
func isTime(s string) bool {
	if len(s) < 9 || s[2] != ':' || s[5] != ':' {
		return false
	}
	h, ok1 := twoDigits(s[0:2])
	m, ok2 := twoDigits(s[3:5])
	sec, ok3 := twoDigits(s[6:8])
	if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || sec > 60 {
		return false
	}
	s = s[8:]
	if rest, ok := strings.CutPrefix(s, "."); ok {
		n := 0
		for n < len(rest) && '0' <= rest[n] && rest[n] <= '9' {
			n++
		}
		if n == 0 {
			return false
		}
		s = rest[n:]
	}
	if s != "Z" && s != "z" {
		if len(s) != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':' {
			return false
		}
		zh, ok1 := twoDigits(s[1:3])
		zm, ok2 := twoDigits(s[4:6])
		if !ok1 || !ok2 || zh > 23 || zm > 59 {
			return false
		}
		off := zh*60 + zm
		if s[0] == '+' {
			off = -off
		}
		hm := h*60 + m + off // in UTC
		if hm < 0 {
			hm += 24 * 60
		}
		h, m = hm/60, hm%60
	}
	return sec < 60 || h == 23 && m == 59
}

func twoDigits(s string) (int, bool) {
	if s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return 0, false
	}
	return int(s[0]-'0')*10 + int(s[1]-'0'), true
}

// isIPv4: four decimals 0-255 without leading zeros, digits and dots only.
func isIPv4(s string) bool {
	groups, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
			continue
		}
		g := s[start:i]
		if len(g) == 0 || len(g) > 3 || len(g) > 1 && g[0] == '0' {
			return false
		}
		n := 0
		for j := 0; j < len(g); j++ {
			n = n*10 + int(g[j]-'0')
		}
		if n > 255 {
			return false
		}
		groups++
		start = i + 1
	}
	return groups == 4
}

// isIPv6: an IPv6 address without a zone (IPv4-mapped forms included).
func isIPv6(s string) bool {
	if strings.IndexByte(s, ':') < 0 {
		return false
	}
	a, err := netip.ParseAddr(s)
	return err == nil && a.Zone() == ""
}
