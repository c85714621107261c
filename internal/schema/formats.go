package schema

import (
	"errors"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/contractguard/contractguard/internal/formats"
)

// The library's checks for some formats accept values their RFCs forbid
// (the JSON-Schema-Test-Suite shows three; reading the code, a sign in a
// time: "+1:00:00Z"). Each is registered here as the library's own check
// followed by the rule it misses; the other formats are the library's
// unchanged.
var stricterFormats = []struct {
	name  string
	extra func(string) error
}{
	{"uri", uriCharacters},
	{"email", emailLocalPart},
	{"ipv4", ipv4Digits},
	{"date-time", func(s string) error {
		if len(s) < 11 {
			return nil // the library rejects it
		}
		return timeSigns(s[11:])
	}},
	{"time", timeSigns},
}

func registerFormats(c *jsonschema.Compiler) {
	for _, f := range stricterFormats {
		base := libraryFormat(f.name)
		extra := f.extra
		c.RegisterFormat(&jsonschema.Format{Name: f.name, Validate: func(v any) error {
			if err := base(v); err != nil {
				return err
			}
			if s, ok := v.(string); ok {
				return extra(s)
			}
			return nil
		}})
	}
}

// libraryFormat returns the library's check for a format, taken from a
// schema compiled with it (the library does not export its table).
func libraryFormat(name string) func(any) error {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("format.json", map[string]any{"format": name}); err != nil {
		panic(err)
	}
	s, err := c.Compile("format.json")
	if err != nil || s.Format == nil {
		panic("schema: the library has no format " + name)
	}
	return s.Format.Validate
}

// uriCharacters allows only the characters RFC 3986 allows in a URI, %
// only before two hex digits, and [ ] only around an IP literal host.
func uriCharacters(s string) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~:/?#@!$&'()*+,;=", c) >= 0:
		case c == '%':
			if i+2 >= len(s) || !formats.IsHex(s[i+1]) || !formats.IsHex(s[i+2]) {
				return errors.New("% not followed by two hex digits")
			}
		case c == '[' || c == ']':
			if !hostBracket(s, i) {
				return errors.New("[ and ] are allowed only around an IP literal host")
			}
		default:
			return errors.New("character not allowed in a URI")
		}
	}
	return nil
}

// hostBracket reports whether position i of a URI is a bracket of an IP
// literal host: the "[" that starts the host of the authority that
// follows the scheme's "://" (after any userinfo), or the first "]" after
// it, which ends the host or comes before its port. ("foo:bar://[x]" has
// no authority: its brackets are in its path.)
func hostBracket(s string, i int) bool {
	colon := strings.IndexByte(s, ':') // the scheme's end: a scheme has no colon
	if colon <= 0 || !strings.HasPrefix(s[colon:], "://") {
		return false
	}
	start := colon + len("://")
	end := len(s)
	if j := strings.IndexAny(s[start:], "/?#"); j >= 0 {
		end = start + j
	}
	host := start
	if at := strings.LastIndexByte(s[start:end], '@'); at >= 0 {
		host = start + at + 1
	}
	if host >= end || s[host] != '[' {
		return false
	}
	closing := strings.IndexByte(s[host:end], ']')
	if closing < 0 {
		return false
	}
	closing += host
	if closing+1 < end && s[closing+1] != ':' {
		return false
	}
	return i == host || i == closing
}

func emailLocalPart(s string) error {
	if strings.LastIndexByte(s, '@') == 0 {
		return errors.New("missing local part")
	}
	return nil
}

func ipv4Digits(s string) error {
	for i := 0; i < len(s); i++ {
		if s[i] != '.' && (s[i] < '0' || s[i] > '9') {
			return errors.New("only digits and dots")
		}
	}
	return nil
}

// timeSigns allows + and - in a time only where its offset starts (six
// from the end, after hh:mm:ss): the library reads the numbers of hh:mm:ss
// and of the offset with strconv.Atoi, which takes "+1" and "-0".
func timeSigns(s string) error {
	offset := len(s) - 6
	if offset < len("hh:mm:ss") || strings.HasSuffix(s, "Z") || strings.HasSuffix(s, "z") {
		offset = -1
	}
	for i := 0; i < len(s); i++ {
		if (s[i] == '+' || s[i] == '-') && i != offset {
			return errors.New("a sign only before the offset")
		}
	}
	return nil
}
