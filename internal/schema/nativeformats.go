package schema

import (
	"sync"

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
// FuzzNativeFormats hold them to it. Other formats (uri, hostname, …) run
// the library's check.
var nativeFormats = map[string]func(string) bool{
	"uuid":      formats.UUID,
	"date":      formats.Date,
	"date-time": formats.DateTime,
	"ipv4":      formats.IPv4,
	"ipv6":      formats.IPv6,
	"email":     email,
}

// email is formats.Email, with the library's check (as registered) for
// the IP literals it leaves undecided, which are rare.
func email(s string) bool {
	ok, literal := formats.Email(s)
	if literal {
		return libraryEmail().Validate(s) == nil
	}
	return ok
}

// libraryEmail is the email format as NewCompiler registers it (the
// library's check and the rule of formats.go), compiled by the library
// alone.
var libraryEmail = sync.OnceValue(func() *jsonschema.Format {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.AssertFormat()
	registerFormats(c)
	const u = Root + "format-email.json"
	err := c.AddResource(u, map[string]any{"format": "email"})
	var sch *jsonschema.Schema
	if err == nil {
		sch, err = c.Compile(u)
	}
	if err != nil || sch.Format == nil { // a schema of one keyword: tested
		panic("schema: the email format does not compile")
	}
	return sch.Format
})

// formatCheck returns the fast path's check for a compiled format.
func formatCheck(f *jsonschema.Format) func(string) bool {
	if check, ok := nativeFormats[f.Name]; ok {
		return check
	}
	return func(s string) bool { return f.Validate(s) == nil }
}
