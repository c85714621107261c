package schema

import (
	"errors"
	"strings"
	"unicode/utf8"

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
	{"iri", iriCharacters},
	{"iri-reference", iriCharacters},
	{"uri-template", uriTemplate},
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
// (Not in a uri-reference: the meta-schema holds $ref to that format,
// and a contract's $ref names its file as written, "schemas/été.json".)
func uriCharacters(s string) error { return refCharacters(s, false) }

// iriCharacters is uriCharacters for an IRI or IRI reference (RFC 3987):
// the characters of a URI, and beyond ASCII its ucschar anywhere and its
// iprivate in the query. (The library's iri took "http://a.com/a b",
// "http://a.com/<x>"; its iri-reference any text url.Parse does.)
func iriCharacters(s string) error { return refCharacters(s, true) }

func refCharacters(s string, iri bool) error {
	query, fragment := false, false // after a "?" before any "#": where an IRI may hold iprivate
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf && iri:
			r, size := utf8.DecodeRuneInString(s[i:])
			if !ucschar(r) && !(query && iprivate(r)) {
				return errors.New("character not allowed in an IRI")
			}
			i += size - 1
		case c == '?':
			query = !fragment
		case c == '#':
			query, fragment = false, true
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
// follows the scheme's "://", or a reference's leading "//" (after any
// userinfo), or the first "]" after it, which ends the host or comes
// before its port. ("foo:bar://[x]" and "a/b://[x]" have no authority:
// their brackets are in their paths.)
func hostBracket(s string, i int) bool {
	var start int
	if strings.HasPrefix(s, "//") {
		start = len("//")
	} else {
		colon := strings.IndexByte(s, ':') // the scheme's end: a scheme has no colon
		if colon <= 0 || !strings.HasPrefix(s[colon:], "://") || !scheme(s[:colon]) {
			return false
		}
		start = colon + len("://")
	}
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

// uriTemplate holds a URI template to RFC 6570's grammar: literals of
// the characters it allows (those of an IRI but for "'"; % only before two
// hex digits) and expressions {[operator]varspec,...}, none nested or
// left open. (The library's uri-template took any text Go's url.Parse
// does: `"><script>`, "a b", "http://x/{{a}}", "}a{".)
func uriTemplate(s string) error {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return errors.New("an expression not closed")
			}
			if !templateExpression(s[i+1 : i+end]) {
				return errors.New("an expression not of RFC 6570's grammar")
			}
			i += end + 1
			continue
		case c == '%':
			if !pctEncoded(s, i) {
				return errors.New("% not followed by two hex digits")
			}
			i += 3
			continue
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s[i:])
			if !ucschar(r) && !iprivate(r) {
				return errors.New("character not allowed in a URI template")
			}
			i += size
			continue
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$&()*+,-./:;=?@[]_~", c) >= 0:
		default:
			return errors.New("character not allowed in a URI template")
		}
		i++
	}
	return nil
}

// templateExpression reports whether e, an expression of a URI template
// without its braces, is an optional operator and a list of varspecs:
// names of letters, digits, "_" and percent-escapes, dotted, each with an
// optional prefix length (":" 1 to 9999) or explode ("*").
func templateExpression(e string) bool {
	if e != "" && strings.IndexByte("+#./;?&=,!@|", e[0]) >= 0 {
		e = e[1:]
	}
	for spec := range strings.SplitSeq(e, ",") {
		name, modifier := spec, ""
		if j := strings.IndexAny(spec, ":*"); j >= 0 {
			name, modifier = spec[:j], spec[j:]
		}
		if !templateVarname(name) {
			return false
		}
		switch {
		case modifier == "", modifier == "*":
		case modifier[0] == ':':
			n := modifier[1:]
			if n == "" || len(n) > 4 || n[0] == '0' || strings.Trim(n, "0123456789") != "" {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func templateVarname(name string) bool {
	if name == "" || name[0] == '.' || name[len(name)-1] == '.' || strings.Contains(name, "..") {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '.':
		case c == '%' && pctEncoded(name, i):
			i += 2
		default:
			return false
		}
	}
	return true
}

// pctEncoded reports whether s holds a percent-escape at i: % and two hex
// digits.
func pctEncoded(s string, i int) bool {
	return i+2 < len(s) && s[i] == '%' && formats.IsHex(s[i+1]) && formats.IsHex(s[i+2])
}

// scheme reports whether s is a URI scheme: a letter, then letters,
// digits, "+", "-" and ".".
func scheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}

// ucschar reports whether r is a character RFC 3987 allows beyond ASCII
// in any part of an IRI.
func ucschar(r rune) bool {
	switch {
	case 0xA0 <= r && r <= 0xD7FF, 0xF900 <= r && r <= 0xFDCF, 0xFDF0 <= r && r <= 0xFFEF:
		return true
	case 0xE0000 <= r && r <= 0xE0FFF: // plane 14 from E1000 only: not its tags (E0001, E0020-E007F)
		return false
	case 0x10000 <= r && r <= 0xEFFFD:
		return r&0xFFFF <= 0xFFFD // each plane but its last two code points
	}
	return false
}

// iprivate reports whether r is a private use character, which RFC 3987
// allows in an IRI's query.
func iprivate(r rune) bool {
	return 0xE000 <= r && r <= 0xF8FF || 0xF0000 <= r && r <= 0xFFFFD || 0x100000 <= r && r <= 0x10FFFD
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
