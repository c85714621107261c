// Package yamljson reads YAML (and JSON, which goccy/go-yaml parses as
// YAML) into the generic values JSON Schema works on, keeping line numbers
// for error messages.
//
// It exists because decoding with goccy/go-yaml alone would lose what a
// contract needs: plain scalars such as 1e3 or a 30-digit integer come back
// as strings, and aliases are expanded without limit. Here a plain scalar in
// JSON number syntax becomes a json.Number with its exact text, and the
// total size of a document after alias expansion is bounded.
package yamljson

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// MaxNodes bounds the number of values one document may expand to, aliases
// counted at their full size each time they are used.
const MaxNodes = 1_000_000

// MaxText bounds the bytes of text (strings, numbers and keys) one
// document may expand to, counted as MaxNodes counts values: a few
// aliases of a long string are few values but much text, and the loader
// writes a schema out as JSON, expanded.
const MaxText = 64 << 20

// MaxDepth bounds the nesting of a document's collections written on
// one line or in flow style ([[[…]]], - - - x), which goccy/go-yaml's
// parser takes time and memory quadratic in: 100 KB of brackets took
// 13 s and 4.8 GB. (Nesting by indentation costs the file the square of
// its depth in blanks, as much as the parser spends.) A contract, a
// schema or a configuration file is nowhere near as deep.
const MaxDepth = 1000

// Error is a problem at a place in the source.
type Error struct {
	Line, Column int
	Message      string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.Message
	}
	return fmt.Sprintf("%d:%d: %s", e.Line, e.Column, e.Message)
}

// Split is the line and the message of err, for a message that names its
// file and line itself: an *Error's own, else line and err as they are.
func Split(err error, line int) (int, error) {
	var e *Error
	if errors.As(err, &e) {
		return e.Line, errors.New(e.Message)
	}
	return line, err
}

// Document is one non-empty YAML document of a file.
type Document struct {
	Body ast.Node
	Line int // where the document's content starts
}

// Parse returns the non-empty documents of src. A syntax error is an *Error
// with the position goccy/go-yaml reports.
//
// Documents are split here, before every line that is a "---" marker, and
// each is parsed on its own: goccy/go-yaml v1.19 drops the document that
// follows an empty one ("a: 1\n---\n---\nb: 2" loses b), and a contract that
// silently disappears is not enforced. Each part's tokens are moved down by
// the lines before it, so that positions are those of the whole file. (Not
// by padding each part with those lines: a file of many short documents
// would then take time quadratic in its length.)
//
// A byte order mark at the start of src, which YAML allows and Windows
// editors write, is skipped: goccy/go-yaml reads it as part of the first
// key.
//
// Line breaks written CR LF (a file saved on Windows) are read as LF, as
// YAML reads every line break in a scalar: goccy/go-yaml folds a quoted
// string's CR LF into a line feed, not the space an LF folds into
// ("x\r\n  y" was "x\ny", and a pattern or an enum so another).
func Parse(src []byte) ([]Document, error) {
	src = bytes.TrimPrefix(src, []byte("\ufeff"))
	if err := notUTF8(src); err != nil {
		return nil, err
	}
	if bytes.Contains(src, []byte("\r\n")) {
		src = bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
	}
	var docs []Document
	for _, p := range splitDocuments(src) {
		tokens := lexer.Tokenize(string(p.text))
		moveDown(tokens, p.line-1)
		if err := nesting(tokens); err != nil {
			return nil, err
		}
		f, err := parser.Parse(tokens, 0)
		if err != nil {
			e := syntaxError(err)
			if e.Message == "unexpected directive value. document not started" {
				e.Message = "a directive is given once and followed by a --- line (and comes first, or after a ... line)"
			}
			return nil, e
		}
		if err := escapes(p.text, tokens, p.line-1); err != nil {
			return nil, err
		}
		var found []ast.Node
		for _, d := range f.Docs {
			if dir, ok := d.Body.(*ast.DirectiveNode); ok {
				if err := directive(dir); err != nil {
					return nil, err
				}
				continue
			}
			if _, comment := d.Body.(*ast.CommentGroupNode); d.Body != nil && !comment {
				found = append(found, d.Body)
			}
		}
		if len(found) > 1 {
			return nil, errorAt(found[1], "more than one document without a --- marker between them")
		}
		for _, body := range found {
			docs = append(docs, Document{Body: body, Line: Line(body)})
		}
	}
	return docs, nil
}

// nesting refuses tokens nested deeper than MaxDepth in flow style or on
// one line: the depth counted is that of the open brackets ([ and {)
// plus the block sequence entries and explicit keys (- and ?) written on
// the line of the last one of them, each of which opens a collection
// inside the one before it (- - x is [[x]]).
func nesting(tokens token.Tokens) error {
	flow, line, compact := 0, 0, 0
	for _, t := range tokens {
		switch t.Type {
		case token.SequenceStartType, token.MappingStartType:
			flow++
		case token.SequenceEndType, token.MappingEndType:
			flow = max(flow-1, 0) // one too many is the parser's to report
			continue
		case token.SequenceEntryType, token.MappingKeyType:
			if flow > 0 || t.Position == nil {
				continue
			}
			if t.Position.Line != line {
				line, compact = t.Position.Line, 0
			}
			compact++
		default:
			continue
		}
		if flow+compact > MaxDepth {
			e := &Error{Message: fmt.Sprintf("nested more than %d levels deep", MaxDepth)}
			if t.Position != nil {
				e.Line, e.Column = t.Position.Line, t.Position.Column
			}
			return e
		}
	}
	return nil
}

// notUTF8 is the error for src when it is not UTF-8, at its first byte
// that is not: goccy/go-yaml takes any bytes, and a file written in
// Latin-1 (endpoint: /caf\xe9) loaded with its bytes as they were, where
// YAML and JSON read UTF-8 (or, from a byte order mark, UTF-16 or 32,
// which are not read here).
func notUTF8(src []byte) error {
	if utf8.Valid(src) {
		return nil
	}
	// UTF-32LE's mark starts as UTF-16LE's does: looked for first.
	if bytes.HasPrefix(src, []byte{0xff, 0xfe, 0, 0}) || bytes.HasPrefix(src, []byte{0, 0, 0xfe, 0xff}) {
		return &Error{Line: 1, Column: 1, Message: "the file is UTF-32 (its byte order mark says so): save it as UTF-8"}
	}
	if bytes.HasPrefix(src, []byte{0xff, 0xfe}) || bytes.HasPrefix(src, []byte{0xfe, 0xff}) {
		return &Error{Line: 1, Column: 1, Message: "the file is UTF-16 (its byte order mark says so): save it as UTF-8"}
	}
	line, column := 1, 1
	for len(src) > 0 {
		r, size := utf8.DecodeRune(src)
		if r == utf8.RuneError && size == 1 {
			return &Error{Line: line, Column: column, Message: fmt.Sprintf("byte %#x is not UTF-8: save the file as UTF-8", src[0])}
		}
		column++
		if r == '\n' {
			line, column = line+1, 1
		}
		src = src[size:]
	}
	return nil
}

// escapes checks the escapes of the double-quoted scalars among tokens,
// lexed from text and moved down by lines. goccy/go-yaml reads any
// character as a hexadecimal digit ("\u00g1" is "ͱ", "\x4G" is "W"), a
// lone surrogate ("\udc00") or a code point past U+10FFFF as U+FFFD, and
// "\x" with too few characters after it as "x": a value other than the
// one written, where YAML has an error.
func escapes(text []byte, tokens token.Tokens, lines int) error {
	if bytes.IndexByte(text, '\\') < 0 {
		return nil
	}
	var starts []int // where each line of text starts
	// The last token's line, column and offset in text: a token further
	// on its line is found from there, not from the line's start (a line
	// of many quoted strings took time quadratic in its length).
	atLine, atColumn, at := 0, 0, 0
	for _, t := range tokens {
		if t.Type != token.DoubleQuoteType || t.Position == nil {
			continue
		}
		if starts == nil {
			starts = append(starts, 0)
			for i, c := range text {
				if c == '\n' {
					starts = append(starts, i+1)
				}
			}
		}
		line := t.Position.Line - lines
		if line < 1 || line > len(starts) {
			continue
		}
		// The token's column counts characters, and may stop at the blank
		// before the quote (after a tab, a tag).
		i, c := starts[line-1], 1
		if line == atLine && t.Position.Column >= atColumn {
			i, c = at, atColumn
		}
		for ; c < t.Position.Column && i < len(text) && text[i] != '\n'; c++ {
			_, size := utf8.DecodeRune(text[i:])
			i += size
		}
		atLine, atColumn, at = line, c, i
		for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
			i++
		}
		if i >= len(text) || text[i] != '"' {
			continue
		}
		if msg := badEscape(text[i+1:]); msg != "" {
			return &Error{Line: t.Position.Line, Column: t.Position.Column, Message: msg}
		}
	}
	return nil
}

// badEscape reads a double-quoted scalar from after its opening quote to
// its closing one, and says what is wrong with its first escape that is
// not a character; "" when every one is.
func badEscape(s []byte) string {
	hex := func(i, n int) (rune, bool) {
		if i+n > len(s) {
			return 0, false
		}
		v, err := strconv.ParseUint(string(s[i:i+n]), 16, 32)
		return rune(v), err == nil // base 16: no sign, prefix or _ is read
	}
	shown := func(i, n int) string { // the escape at i, n characters long at most, as written
		e := s[i:min(i+n, len(s))]
		if j := bytes.IndexFunc(e[1:], func(r rune) bool { return r < '!' || r > '~' || r == '"' }); j >= 0 {
			e = e[:j+1]
		}
		return string(e)
	}
	for i := 0; i < len(s); {
		switch s[i] {
		case '"':
			return ""
		case '\\':
			if i+1 >= len(s) {
				return ""
			}
			switch s[i+1] {
			case 'x':
				if _, ok := hex(i+2, 2); !ok {
					return "invalid escape " + shown(i, 4) + " in a quoted string: \\x takes 2 hexadecimal digits"
				}
				i += 4
			case 'U':
				v, ok := hex(i+2, 8)
				if !ok {
					return "invalid escape " + shown(i, 10) + " in a quoted string: \\U takes 8 hexadecimal digits"
				}
				if !utf8.ValidRune(v) {
					return "invalid escape " + shown(i, 10) + " in a quoted string: not a Unicode character"
				}
				i += 10
			case 'u':
				v, ok := hex(i+2, 4)
				if !ok {
					return "invalid escape " + shown(i, 6) + " in a quoted string: \\u takes 4 hexadecimal digits"
				}
				if v >= 0xdc00 && v <= 0xdfff {
					return "invalid escape " + shown(i, 6) + " in a quoted string: half of a UTF-16 surrogate pair"
				}
				i += 6
				if v >= 0xd800 && v <= 0xdbff {
					low, ok := rune(0), i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u'
					if ok {
						low, ok = hex(i+2, 4)
					}
					if !ok || low < 0xdc00 || low > 0xdfff {
						return "invalid escape " + shown(i-6, 6) + " in a quoted string: half of a UTF-16 surrogate pair"
					}
					i += 6
				}
			default:
				i += 2
			}
		default:
			i++
		}
	}
	return ""
}

// moveDown adds lines to the line of every token's position (tokens may
// share one).
func moveDown(tokens token.Tokens, lines int) {
	if lines == 0 {
		return
	}
	moved := map[*token.Position]bool{}
	for _, t := range tokens {
		if p := t.Position; p != nil && !moved[p] {
			moved[p] = true
			p.Line += lines
		}
	}
}

type part struct {
	text []byte
	line int // line of the part's first line in the file
}

// splitDocuments cuts src before every line that is a document marker:
// "---" at the start of a line, followed by a space, a tab or the line end.
// YAML forbids such a line inside any scalar, so a cut is always at a
// document boundary. Directives ("%YAML 1.2"), at the start or after a
// "..." end marker, are the next document's: the cut is made before them,
// and before the comments and blank lines among them.
func splitDocuments(src []byte) []part {
	var parts []part
	start, startLine := 0, 1
	lead, leadLine := -1, 0 // where the directives before the next marker begin (-1: none)
	ended := true           // no document is open: directives may come
	for i, line := 0, 1; i < len(src); line++ {
		end := bytes.IndexByte(src[i:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += i
		}
		switch l := src[i:end]; {
		case isMarker(l):
			cut, cutLine := i, line
			if lead >= 0 {
				cut, cutLine = lead, leadLine
			}
			if cut > start {
				parts = append(parts, part{src[start:cut], startLine})
				start, startLine = cut, cutLine
			}
			lead, ended = -1, false
		case len(l) > 0 && l[0] == '%' && ended:
			if lead < 0 {
				lead, leadLine = i, line
			}
		case isEnd(l):
			lead, ended = -1, true
		case !blankOrComment(l):
			lead, ended = -1, false
		}
		i = end + 1
	}
	return append(parts, part{src[start:], startLine})
}

// isEnd reports whether a line is a document end marker, "...", after
// which directives may come.
func isEnd(l []byte) bool {
	return bytes.HasPrefix(l, []byte("...")) && blankOrComment(l[3:])
}

// blankOrComment reports whether a line holds nothing but white space and
// a comment.
func blankOrComment(l []byte) bool {
	l = bytes.TrimLeft(l, " \t\r")
	return len(l) == 0 || l[0] == '#'
}

// directive checks a directive before a document: the version this
// package reads, YAML 1.2, may be declared; any other version would be
// read otherwise than its author meant (YAML 1.1's yes and 017), and tag
// handles are not supported.
func directive(d *ast.DirectiveNode) error {
	name := ""
	if d.Name != nil {
		name = d.Name.String()
	}
	switch {
	case name == "YAML" && len(d.Values) == 1 && d.Values[0].String() == "1.2":
		return nil
	case name == "YAML":
		return errorAt(d, "%s: this file is read as YAML 1.2 (in which yes is a string, not true); declare %%YAML 1.2, or no version", d)
	case name == "TAG":
		return errorAt(d, "%%TAG directives are not supported")
	}
	return errorAt(d, "%%%s: unknown directive (only %%YAML 1.2 may be declared)", name)
}

func isMarker(l []byte) bool {
	return len(l) >= 3 && l[0] == '-' && l[1] == '-' && l[2] == '-' &&
		(len(l) == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r')
}

var positionPrefix = regexp.MustCompile(`^\[(\d+):(\d+)\] `)

func syntaxError(err error) *Error {
	msg := err.Error()
	// goccy's message is "[line:col] text" followed by a source excerpt;
	// keep the first line, with the position as fields.
	if i := indexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	e := &Error{Message: msg}
	if m := positionPrefix.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Column, _ = strconv.Atoi(m[2])
		e.Message = msg[len(m[0]):]
	}
	return e
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// Line is the source line of n, 0 when unknown.
func Line(n ast.Node) int {
	if n == nil {
		return 0
	}
	if m, ok := n.(*ast.MappingNode); ok && len(m.Values) > 0 {
		n = m.Values[0].Key
	}
	if t := n.GetToken(); t != nil && t.Position != nil {
		return t.Position.Line
	}
	return 0
}

func errorAt(n ast.Node, format string, args ...any) *Error {
	e := &Error{Message: fmt.Sprintf(format, args...)}
	if n != nil {
		if t := n.GetToken(); t != nil && t.Position != nil {
			e.Line, e.Column = t.Position.Line, t.Position.Column
		}
	}
	return e
}

// Value converts a node to map[string]any, []any, string, json.Number,
// bool or nil. Anchors and aliases are resolved within the node.
func Value(n ast.Node) (any, error) {
	return ValueWith(n, NewAnchors())
}

// Anchors are the anchors (&name) of the nodes converted with them, for
// the nodes of one document converted one after the other: the items of
// a list of contracts, each read on its own, where an alias (*name) in
// one item may stand for an anchor in an item before it, as it does in
// the document.
type Anchors struct {
	m map[string]anchored
}

// NewAnchors returns an empty set of anchors.
func NewAnchors() *Anchors { return &Anchors{m: map[string]anchored{}} }

// ValueWith is Value for a node whose aliases may also stand for anchors
// of the nodes converted before it with a (which gets n's anchors). The
// bounds on a document's size (MaxNodes, MaxText) apply to n, with
// aliases counted at their full size.
func ValueWith(n ast.Node, a *Anchors) (any, error) {
	c := converter{anchors: a.m}
	v, _, err := c.value(n)
	return v, err
}

type anchored struct {
	v       any
	size    expansion
	pending bool // the anchor's own node is being converted
}

// expansion is the size of a value with its aliases expanded.
type expansion struct {
	values, text int
}

func (e *expansion) add(o expansion) {
	e.values += o.values
	e.text += o.text
}

type converter struct {
	anchors map[string]anchored
	total   expansion
}

// grow counts e, and fails at n when the document has grown too large.
func (c *converter) grow(n ast.Node, e expansion) error {
	c.total.add(e)
	if c.total.values > MaxNodes {
		return errorAt(n, "document expands to more than %d values", MaxNodes)
	}
	if c.total.text > MaxText {
		return errorAt(n, "document expands to more than %d MiB of text", MaxText>>20)
	}
	return nil
}

var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// value returns the converted node and its expanded size.
func (c *converter) value(n ast.Node) (any, expansion, error) {
	none := expansion{}
	if err := c.grow(n, expansion{values: 1}); err != nil {
		return nil, none, err
	}
	switch n := n.(type) {
	case nil:
		return nil, expansion{values: 1}, nil
	case *ast.NullNode:
		return nil, expansion{values: 1}, nil
	case *ast.BoolNode:
		return n.Value, expansion{values: 1}, nil
	case *ast.StringNode:
		if n.Token.Type != token.StringType {
			return c.text(n, n.Value) // quoted
		}
		// A plain scalar goccy/go-yaml left as text may still be a number
		// in YAML 1.2: 1e3, +1e3, .5e400, or one too big for 64 bits
		// (12345678901234567890123, 0x10000000000000000); or +.inf, its
		// infinity as .inf is, which JSON has not.
		if corePlusInf.MatchString(n.Value) {
			return nil, none, errorAt(n, "%s is not a JSON number", n.Value)
		}
		num, ok, err := coreNumber(n, n.Value)
		if err != nil {
			return nil, none, err
		}
		if !ok {
			return c.text(n, n.Value)
		}
		if zeros(n.Value) {
			// 08 and 01e3 are text in YAML 1.1, which goccy/go-yaml reads,
			// and 8 and 1000 in YAML 1.2.
			return nil, none, errorAt(n, "%s is octal or text in YAML 1.1 but %s in YAML 1.2: write %s, or quote it for the text", n.Value, num, num)
		}
		return c.text(n, json.Number(num))
	case *ast.LiteralNode:
		return c.text(n, n.Value.Value)
	case *ast.IntegerNode:
		if jsonNumber.MatchString(n.Token.Value) {
			return c.text(n, json.Number(n.Token.Value))
		}
		v := fmt.Sprint(n.Value) // 0x10, 0o17
		if d, ok := leadingZeros(n.Token.Value); ok && d != v {
			octal := "0o" + strings.TrimLeft(strings.TrimLeft(n.Token.Value, "+-"), "0")
			if strings.HasPrefix(n.Token.Value, "-") {
				octal = v // -0o10 is text in YAML 1.2: an octal number has no sign
			}
			return nil, none, errorAt(n, "%s is %s in YAML 1.1 (octal) but %s in YAML 1.2: write %s or %s", n.Token.Value, v, d, octal, d)
		}
		num, ok, err := coreNumber(n, n.Token.Value)
		if err != nil {
			return nil, none, err
		}
		if !ok {
			return nil, none, notCore(n, n.Token.Value, v)
		}
		return c.text(n, json.Number(num)) // +1, 0x10, 0o17
	case *ast.FloatNode:
		if jsonNumber.MatchString(n.Token.Value) {
			return c.text(n, json.Number(n.Token.Value))
		}
		if math.IsInf(n.Value, 0) || math.IsNaN(n.Value) {
			return nil, none, errorAt(n, "%s is not a JSON number", n.Token.Value)
		}
		num, ok, err := coreNumber(n, n.Token.Value)
		if err != nil {
			return nil, none, err
		}
		if !ok {
			return nil, none, notCore(n, n.Token.Value, strconv.FormatFloat(n.Value, 'g', -1, 64))
		}
		return c.text(n, json.Number(num)) // .5, +1.5, 1., exactly: not rounded to a float64
	case *ast.InfinityNode, *ast.NanNode:
		return nil, none, errorAt(n, "%s is not a JSON number", n.GetToken().Value)
	case *ast.MappingNode:
		m := make(map[string]any, len(n.Values))
		size := expansion{values: 1}
		for _, mv := range n.Values {
			if _, ok := mv.Key.(*ast.MergeKeyNode); ok {
				return nil, none, errorAt(mv.Key, "YAML merge keys (<<) are not supported")
			}
			k, err := Key(mv.Key)
			if err != nil {
				return nil, none, err
			}
			if _, dup := m[k]; dup {
				return nil, none, errorAt(mv.Key, "duplicate key %q", k)
			}
			if err := c.grow(mv.Key, expansion{text: len(k)}); err != nil {
				return nil, none, err
			}
			v, s, err := c.value(mv.Value)
			if err != nil {
				return nil, none, err
			}
			m[k] = v
			size.add(s)
			size.text += len(k)
		}
		return m, size, nil
	case *ast.MappingValueNode:
		return c.value(&ast.MappingNode{BaseNode: n.BaseNode, Values: []*ast.MappingValueNode{n}})
	case *ast.SequenceNode:
		a := make([]any, 0, len(n.Values))
		size := expansion{values: 1}
		for _, e := range n.Values {
			v, s, err := c.value(e)
			if err != nil {
				return nil, none, err
			}
			a = append(a, v)
			size.add(s)
		}
		return a, size, nil
	case *ast.AnchorNode:
		// An alias inside the node stands for the node itself, whose
		// anchor comes before it (YAML: the last anchor of the name before
		// the alias), not for an earlier anchor of the same name.
		name := n.Name.GetToken().Value
		prev, had := c.anchors[name]
		c.anchors[name] = anchored{pending: true}
		v, s, err := c.value(n.Value)
		if err != nil {
			if had { // as before the node, for the nodes converted after it (ValueWith)
				c.anchors[name] = prev
			} else {
				delete(c.anchors, name)
			}
			return nil, none, err
		}
		c.anchors[name] = anchored{v: v, size: s}
		return v, s, nil
	case *ast.AliasNode:
		name := n.Value.GetToken().Value
		a, ok := c.anchors[name]
		if !ok {
			return nil, none, errorAt(n, "alias *%s refers to no anchor before it", name)
		}
		if a.pending {
			return nil, none, errorAt(n, "alias *%s is inside the node it names", name)
		}
		if err := c.grow(n, a.size); err != nil {
			return nil, none, err
		}
		return a.v, a.size, nil
	case *ast.TagNode:
		switch n.Start.Value {
		case "!!str": // the scalar's text as written: !!str 017 is "017", not "15"
			switch s := n.Value.(type) {
			case *ast.StringNode:
				return c.text(n, s.Value)
			case *ast.LiteralNode:
				return c.text(n, s.Value.Value)
			case *ast.NullNode:
				if t := s.GetToken(); t != nil && t.Type == token.ImplicitNullType {
					return c.text(n, "") // no text: the null goccy/go-yaml makes up reads "null"
				} else if t != nil {
					return c.text(n, t.Value)
				}
			case *ast.AnchorNode, *ast.AliasNode, *ast.TagNode:
			case ast.ScalarNode:
				if t := s.GetToken(); t != nil {
					return c.text(n, t.Value)
				}
			}
		case "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq":
			v, size, err := c.value(n.Value)
			if err == nil && !tagged(n.Start.Value, v) {
				err = errorAt(n, "YAML tag %s on a value of another type (%s)", n.Start.Value, strings.TrimSpace(n.Value.GetToken().Value))
			}
			return v, size, err
		}
		return nil, none, errorAt(n, "YAML tag %s is not supported", n.Start.Value)
	}
	return nil, none, errorAt(n, "unsupported YAML node %s", n.Type())
}

// The plain scalars YAML 1.2's core schema reads as numbers (YAML 1.2.2,
// 10.3.2); coreFloat covers the decimal integers too.
var (
	coreOctal = regexp.MustCompile(`^0o[0-7]+$`)
	coreHex   = regexp.MustCompile(`^0x[0-9a-fA-F]+$`)
	coreFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
	// goccy/go-yaml reads .inf and -.inf as infinities, +.inf as text.
	corePlusInf = regexp.MustCompile(`^\+\.(inf|Inf|INF)$`)
)

// maxBaseDigits bounds the digits of a hexadecimal or octal number, which
// is written out in decimal (as long as the body's number literals may be).
const maxBaseDigits = 1000

// coreNumber is the plain scalar t, at n, as YAML 1.2's core schema reads
// it: when it is a number (ok), that number in JSON's syntax with its
// exact value: +1.50 is 1.50, .5 is 0.5, 0x10 is 16. goccy/go-yaml reads
// some of these as text (a sign, digits past 64 bits) and the rest as a
// float64, rounded.
func coreNumber(n ast.Node, t string) (num string, ok bool, err error) {
	switch {
	case jsonNumber.MatchString(t):
		return t, true, nil
	case coreHex.MatchString(t), coreOctal.MatchString(t):
		if len(t)-2 > maxBaseDigits {
			return "", false, errorAt(n, "%s…: a hexadecimal or octal number of more than %d digits", t[:10], maxBaseDigits)
		}
		base := 16
		if t[1] == 'o' {
			base = 8
		}
		i, _ := new(big.Int).SetString(t[2:], base)
		return i.String(), true, nil
	case coreFloat.MatchString(t):
		neg := t[0] == '-'
		t = strings.TrimLeft(t, "+-")
		mantissa, exponent := t, ""
		if i := strings.IndexAny(t, "eE"); i >= 0 {
			mantissa, exponent = t[:i], t[i:]
		}
		whole, fraction, _ := strings.Cut(mantissa, ".")
		num = cmp.Or(strings.TrimLeft(whole, "0"), "0")
		if fraction != "" {
			num += "." + fraction
		}
		if neg {
			num = "-" + num
		}
		return num + exponent, true, nil
	}
	return "", false, nil
}

// notCore is the error for t, which goccy/go-yaml reads as the number v,
// as YAML 1.1 reads 1_000 and 0b101 (or as no YAML reads -0x10), but
// YAML 1.2 as text.
func notCore(n ast.Node, t, v string) error {
	return errorAt(n, "%s is the number %s in YAML 1.1 but text in YAML 1.2: write %s, or quote it for the text", t, v, v)
}

// zeros reports whether the number t has a leading zero before another
// digit and no fraction (017, -08, 01e3), which YAML 1.1 reads as octal,
// or as text, where YAML 1.2 reads decimal.
func zeros(t string) bool {
	t = strings.TrimLeft(t, "+-")
	return len(t) > 1 && t[0] == '0' && t[1] >= '0' && t[1] <= '9' && !strings.Contains(t, ".")
}

// leadingZeros is the decimal value of t when t is digits with leading
// zeros (017, -017), which goccy/go-yaml reads as YAML 1.1 does, in octal,
// and YAML 1.2 (the YAML language server, for one) in decimal.
func leadingZeros(t string) (string, bool) {
	sign, digits := "", t
	if digits != "" && (digits[0] == '-' || digits[0] == '+') {
		sign, digits = digits[:1], digits[1:]
	}
	if len(digits) < 2 || digits[0] != '0' || strings.Trim(digits, "0123456789") != "" {
		return "", false
	}
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return "0", true
	}
	if sign == "+" {
		sign = ""
	}
	return sign + digits, true
}

// tagged reports whether v, read without its tag, is of the type the tag
// names: !!int '12' is a string here, not the integer YAML makes it.
func tagged(tag string, v any) bool {
	switch v := v.(type) {
	case json.Number:
		return tag == "!!float" || tag == "!!int" && !strings.ContainsAny(string(v), ".eE")
	case bool:
		return tag == "!!bool"
	case nil:
		return tag == "!!null"
	case map[string]any:
		return tag == "!!map"
	case []any:
		return tag == "!!seq"
	}
	return false
}

// text is a scalar of text t (a string or a json.Number), counted.
func (c *converter) text(n ast.Node, t any) (any, expansion, error) {
	var size int
	switch t := t.(type) {
	case string:
		size = len(t)
	case json.Number:
		size = len(t)
	}
	if err := c.grow(n, expansion{text: size}); err != nil {
		return nil, expansion{}, err
	}
	return t, expansion{1, size}, nil
}

// Aliases is the node each alias (*name) of doc stands for: the node of
// the last anchor (&name) of that name before it, as Value reads it. An
// alias with no anchor before it is not in the map (Value reports it).
func Aliases(doc ast.Node) map[*ast.AliasNode]ast.Node {
	v := aliasVisitor{anchors: map[string]ast.Node{}, aliases: map[*ast.AliasNode]ast.Node{}}
	ast.Walk(v, doc)
	return v.aliases
}

type aliasVisitor struct {
	anchors map[string]ast.Node
	aliases map[*ast.AliasNode]ast.Node
}

// Visit sees nodes in document order. An anchor is visited before its own
// value, but Value rejects an alias inside the value it names, and so does
// Aliases' caller, which follows aliases only so far.
func (v aliasVisitor) Visit(n ast.Node) ast.Visitor {
	switch n := n.(type) {
	case *ast.AnchorNode:
		v.anchors[n.Name.GetToken().Value] = n.Value
	case *ast.AliasNode:
		if t, ok := v.anchors[n.Value.GetToken().Value]; ok {
			v.aliases[n] = t
		}
	}
	return v
}

// Key is the text of a mapping key: a quoted key unquoted, an anchored or
// tagged key without its anchor (&name) or tag. An alias (*name) as a key
// is refused: goccy/go-yaml's token of an anchor, an alias or a tag is
// "&", "*" or the tag, not the key.
func Key(n ast.MapKeyNode) (string, error) {
	switch k := n.(type) {
	case *ast.StringNode:
		return k.Value, nil
	case *ast.AnchorNode, *ast.TagNode:
		if inner, ok := Unwrap(k).(ast.MapKeyNode); ok {
			return Key(inner)
		}
	case *ast.AliasNode:
		return "", errorAt(n, "an alias (*%s) cannot be a key", k.Value.GetToken().Value)
	case ast.ScalarNode:
		if t := k.GetToken(); t != nil {
			return t.Value, nil
		}
	}
	return "", errorAt(n, "a key must be a plain value")
}

// Find returns the node at a JSON pointer's tokens below n, or the deepest
// node on the way there, so that an error about a value can name its line.
func Find(n ast.Node, tokens []string) ast.Node {
	for _, tok := range tokens {
		next := child(n, tok)
		if next == nil {
			return n
		}
		n = next
	}
	return n
}

// KeyLine is the line of the value at tokens below n, except that when the
// last token names a key of a mapping it is the line of that key: where an
// author looks for "unknown key".
func KeyLine(n ast.Node, tokens []string) int {
	if len(tokens) == 0 {
		return Line(n)
	}
	parent := Find(n, tokens[:len(tokens)-1])
	if m, ok := Unwrap(parent).(*ast.MappingNode); ok {
		for _, mv := range m.Values {
			if k, err := Key(mv.Key); err == nil && k == tokens[len(tokens)-1] {
				return Line(mv.Key)
			}
		}
	}
	return Line(Find(n, tokens))
}

// FindRef returns the line of the first "$ref" below n whose value, resolved
// against base, is target: fragments ignored when target has none, else
// compared unescaped; 0 when there is none.
func FindRef(n ast.Node, base, target string) int {
	b, err := url.Parse(base)
	if err != nil {
		return 0
	}
	target, fragment, hasFragment := strings.Cut(target, "#")
	if f, err := url.PathUnescape(fragment); err == nil {
		fragment = f
	}
	v := &refFinder{base: b, target: target, fragment: fragment, hasFragment: hasFragment}
	ast.Walk(v, n)
	return v.line
}

type refFinder struct {
	base        *url.URL
	target      string
	fragment    string // unescaped
	hasFragment bool   // the fragment must match too
	line        int
}

func (v *refFinder) Visit(n ast.Node) ast.Visitor {
	if v.line != 0 {
		return nil
	}
	mv, ok := n.(*ast.MappingValueNode)
	if !ok {
		return v
	}
	if k, err := Key(mv.Key); err == nil && k == "$ref" {
		if s, ok := Unwrap(mv.Value).(*ast.StringNode); ok {
			if u, err := url.Parse(s.Value); err == nil {
				abs := v.base.ResolveReference(u)
				fragment := abs.Fragment
				abs.Fragment, abs.RawFragment = "", ""
				if abs.String() == v.target && (!v.hasFragment || fragment == v.fragment) {
					v.line = Line(mv.Key)
					return nil
				}
			}
		}
	}
	return v
}

// Unwrap is the node under any anchors (&name) and tags (!!str) on n.
func Unwrap(n ast.Node) ast.Node {
	for {
		switch a := n.(type) {
		case *ast.AnchorNode:
			n = a.Value
		case *ast.TagNode:
			n = a.Value
		default:
			return n
		}
	}
}

func child(n ast.Node, tok string) ast.Node {
	switch n := Unwrap(n).(type) {
	case *ast.MappingNode:
		for _, mv := range n.Values {
			if k, err := Key(mv.Key); err == nil && k == tok {
				return mv.Value
			}
		}
	case *ast.MappingValueNode:
		if k, err := Key(n.Key); err == nil && k == tok {
			return n.Value
		}
	case *ast.SequenceNode:
		i, err := strconv.Atoi(tok)
		if err == nil && i >= 0 && i < len(n.Values) {
			return n.Values[i]
		}
	}
	return nil
}
