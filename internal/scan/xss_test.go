package scan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestScriptURL: every scheme that runs script, in any case, with the
// blanks and control characters browsers drop before and inside it, and
// the data: media types that hold markup.
func TestScriptURL(t *testing.T) {
	for s, want := range map[string]bool{
		"javascript:alert(1)":           true,
		"  JavaScript:alert(1)":         true,
		"java\tscript:alert(1)":         true,
		"java\nscript:alert(1)":         true,
		"\x01javascript:alert(1)":       true,
		"vbscript:msgbox(1)":            true,
		"LiveScript:alert(1)":           true,
		"data:text/html,<b>":            true,
		"data: \tTEXT/HTML;base64,PGI+": true,
		"data:image/svg+xml,<svg>":      true,
		"data:application/xhtml+xml,":   true,
		"data:image/png;base64,iVBO":    false,
		"data:text/plain,hello":         false,
		"java script:alert(1)x":         true, // a blank is dropped as well
		"java-script:alert(1)":          false,
		"https://example.com/a:b":       false,
		"mailto:ada@example.com":        false,
		"javascript":                    false,
		"note: javascript:alert(1)":     false,
	} {
		assert.Equal(t, want, scriptURL(s), "%q", s)
	}
}

// TestScriptURLCharacterReferences: a browser decodes the character
// references of an attribute value before it reads the URL, so
// "&#106;avascript:alert(1)" and "javascript&colon;alert(1)" in an href
// run script as "javascript:alert(1)" does (the OWASP cheat sheet's
// decimal, hexadecimal, unterminated and padded references, and its
// encoded tab). Text with references is not a script URL for that.
func TestScriptURLCharacterReferences(t *testing.T) {
	for s, want := range map[string]Class{
		"&#106;avascript:alert(1)":                                    XSS,
		"&#106&#97&#118&#97&#115&#99&#114&#105&#112&#116&#58alert(1)": XSS,
		"&#0000106&#0000097vascript:alert(1)":                         XSS,
		"&#x6A&#x61&#X76;ascript:alert(1)":                            XSS,
		"&#x6A&#x61&#X76ascript:alert(1)":                             None, // &#X76a is U+076A
		"javascript&colon;alert(1)":                                   XSS,
		"jav&#x09;ascript:alert(1)":                                   XSS,
		"jav&Tab;ascript:alert(1)":                                    XSS,
		"java&NewLine;script&colon;alert(1)":                          XSS,
		"vbscript&#58;msgbox(1)":                                      XSS,
		"data&colon;text/html,<b>":                                    XSS,
		"Tom &amp; Jerry: the movie":                                  None,
		"&#169; 2024: all rights reserved":                            None,
		"javascript&amp;colon;alert(1)":                               None, // &amp; is &: no colon
		"&#x6A;ava&#1000000000000000000000;script:alert(1)":           None,
		"AT&T: javascript:":                                           None,
	} {
		assert.Equal(t, want, String(s), "%q", s)
	}
}

// TestScriptURLDataMediaTypeReferences: the media type of a data: URL is
// read through the character references a browser decodes in an attribute
// value too, as its scheme is: "data:text&#47;html,…" in an iframe's src
// is "data:text/html,…" (found by review: the scheme was read through
// them, the media type as it is, and such a value was no script URL).
func TestScriptURLDataMediaTypeReferences(t *testing.T) {
	for s, want := range map[string]bool{
		"data:text&#47;html,%3Cscript%3Ealert(1)%3C/script%3E":    true,
		"data:&#116;ext/html,%3Cscript%3Ealert(1)%3C%2Fscript%3E": true,
		"data&colon;text&sol;html,x":                              true,
		"data:image&#x2F;svg+xml,%3Csvg onload%3Dalert(1)%3E":     true,
		"data:&Tab;text/html,%3Cscript%3Ealert(1)%3C/script%3E":   true,
		"data:&#32;application&#x2f;xhtml+xml,x":                  true,
		"data:text/ht&NewLine;ml,x":                               true,
		"data:text&#47;plain,hello":                               false,
		"data:text&amp;html,x":                                    false,
		"data:text&#47;htm":                                       false,
	} {
		assert.Equal(t, want, scriptURL(s), "%q", s)
	}
}

// TestScriptURLInAttribute: a script URL as an attribute's value, in
// markup or in a value meant for an attribute, written with a tab or a
// carriage return (or their references) in its "java", which a browser
// drops and libinjection's check of an href does not: the OWASP cheat
// sheet's "embedded tab" ran script in an href and passed. Text with an
// = and a colon is not a script URL for that.
func TestScriptURLInAttribute(t *testing.T) {
	for s, want := range map[string]Class{
		`<a href="jav&#x09;ascript:alert(1)">x</a>`:  XSS,
		"<a href=\"jav\tascript:alert(1)\">x</a>":    XSS,
		`<a href='jav&#13;ascript:alert(1)'>x</a>`:   XSS,
		`<a href=ja&Tab;vascript:alert(1)>x</a>`:     XSS,
		`<a href="vb&#x09;script:msgbox(1)">x</a>`:   XSS,
		`x" href="j&#9;avascript:alert(1)`:           XSS,
		`<a href="https://example.com/a:b">x</a>`:    None,
		`<a title="note: javascript:void">x</a>`:     None,
		"<b>a</b> = 1: see javascript docs":          None,
		"1;u=javascript:alert(1)":                    None, // a value of its own, not an attribute's
		`<img src="photo.png" alt="Tom & Jerry: 2">`: None,
	} {
		assert.Equal(t, want, String(s), "%q", s)
	}
	assert.Equal(t, None, String(strings.Repeat(`="&#32;`, 64<<10)), "each byte is read once")
}
