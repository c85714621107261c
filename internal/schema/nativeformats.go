package schema

import (
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/contractguard/contractguard/internal/formats"
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
	"uuid":      formats.UUID,
	"date":      formats.Date,
	"date-time": formats.DateTime,
	"ipv4":      formats.IPv4,
	"ipv6":      formats.IPv6,
}

// formatCheck returns the fast path's check for a compiled format.
func formatCheck(f *jsonschema.Format) func(string) bool {
	if check, ok := nativeFormats[f.Name]; ok {
		return check
	}
	return func(s string) bool { return f.Validate(s) == nil }
}
