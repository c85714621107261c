package expr

import (
	"fmt"
	"strings"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"
)

// neverEqual finds a constant that a request variable can never hold, by
// the letter case of what the guard gives a rule: request.headers' names
// are lower case, request.method is upper case, and so is what
// upperAscii() gives (lowerAscii(): lower case); and request.path, which
// starts with "/". A rule that looks up
// request.headers['X-Admin'], asks has(request.headers.Authorization),
// request.headers.exists(k, k == 'X-Admin'), compares request.method with
// 'delete' or request.method.lowerAscii() with 'DELETE' would check
// nothing on any request, and pass (or refuse) every one; it is a load
// error, at the constant's position, as a misspelt field is.
func neverEqual(a *cel.Ast) error {
	native := a.NativeRep()
	c := &caseCheck{info: native.SourceInfo()}
	c.visit(native.Expr())
	return c.err
}

// caseKind is what neverEqual knows of the letter case of a string value.
type caseKind int

const (
	anyCase    caseKind = iota
	headerName          // a name of request.headers: lower case
	methodName          // request.method: upper case
	lowered             // what lowerAscii() gives
	uppered             // what upperAscii() gives
	pathName            // request.path: it starts with "/"
)

// caseCheck walks an expression with the comprehension variables in
// scope: each one's caseKind (anyCase for one that only shadows a name,
// request in [{'method': 'get'}].exists(request, …)).
type caseCheck struct {
	info  *celast.SourceInfo
	scope []caseBinding
	err   error
}

type caseBinding struct {
	name string
	kind caseKind
}

func (c *caseCheck) bound(name string) (caseKind, bool) {
	for i := len(c.scope) - 1; i >= 0; i-- {
		if c.scope[i].name == name {
			return c.scope[i].kind, true
		}
	}
	return anyCase, false
}

func (c *caseCheck) fail(at celast.Expr, format string, args ...any) {
	if c.err != nil {
		return
	}
	loc := c.info.GetStartLocation(at.ID())
	c.err = fmt.Errorf("%d:%d: "+format, append([]any{loc.Line(), loc.Column() + 1}, args...)...)
}

// requestField reports whether e is request.<name> (or request.?<name>)
// of the request, not of a comprehension's variable named request.
func (c *caseCheck) requestField(e celast.Expr, name string) bool {
	if _, ok := requestField(e, name); !ok {
		return false
	}
	_, shadowed := c.bound("request")
	return !shadowed
}

// kindOf is what e's value's letter case is known to be.
func (c *caseCheck) kindOf(e celast.Expr) caseKind {
	switch e.Kind() {
	case celast.IdentKind:
		k, _ := c.bound(e.AsIdent())
		return k
	case celast.SelectKind:
		switch {
		case c.requestField(e, "method"):
			return methodName
		case c.requestField(e, "path"):
			return pathName
		}
	case celast.CallKind:
		call := e.AsCall()
		if !call.IsMemberFunction() {
			switch call.FunctionName() {
			case "dyn", "string": // dyn(request.method): the same string
				if len(call.Args()) == 1 {
					return c.kindOf(call.Args()[0])
				}
			}
			return anyCase
		}
		switch call.FunctionName() {
		case "lowerAscii":
			if len(call.Args()) == 0 {
				return lowered
			}
		case "upperAscii":
			if len(call.Args()) == 0 {
				return uppered
			}
		case "orValue", "value": // request.?method.orValue(''): request.method is always there
			switch {
			case c.requestField(call.Target(), "method"):
				return methodName
			case c.requestField(call.Target(), "path"):
				return pathName
			}
		}
	}
	return anyCase
}

// never reports whether a value of kind k can never equal (or, for
// startsWith, endsWith and contains, hold) s, and what to write instead.
func never(k caseKind, s string) (string, bool) {
	var want string
	switch k {
	case headerName:
		want = strings.ToLower(s)
	case methodName:
		want = strings.ToUpper(s)
	case lowered:
		want = asciiCase(s, false)
	case uppered:
		want = asciiCase(s, true)
	case pathName: // Join's: "/" and a segment after each "/"
		if strings.HasPrefix(s, "/") {
			return "", false
		}
		want = "/" + s
	default:
		return "", false
	}
	return want, want != s
}

// asciiCase is s with its ASCII letters in upper case (up), else lower
// case, as upperAscii() and lowerAscii() give them.
func asciiCase(s string, up bool) string {
	b := []byte(s)
	for i, x := range b {
		switch {
		case up && 'a' <= x && x <= 'z':
			b[i] = x - ('a' - 'A')
		case !up && 'A' <= x && x <= 'Z':
			b[i] = x + ('a' - 'A')
		}
	}
	return string(b)
}

// equal reports a constant at that a value of kind k is compared with
// (==, !=, in) and can never equal.
func (c *caseCheck) equal(k caseKind, at celast.Expr) {
	s, ok := stringConst(at)
	if !ok {
		return
	}
	want, bad := never(k, s)
	if !bad {
		return
	}
	switch k {
	case headerName:
		c.fail(at, "request.headers has no %q: its names are lower case; write %q", s, want)
	case methodName:
		c.fail(at, "request.method is never %q: it is upper case; write %q", s, want)
	case lowered:
		c.fail(at, "lowerAscii() is never %q: it gives lower case; write %q", s, want)
	case uppered:
		c.fail(at, "upperAscii() is never %q: it gives upper case; write %q", s, want)
	case pathName:
		c.fail(at, "request.path is never %q: it starts with \"/\"; write %q", s, want)
	}
}

// substring reports the argument at of fn (startsWith, endsWith,
// contains) called on a value of kind k, when it can never be true.
func (c *caseCheck) substring(k caseKind, fn string, at celast.Expr) {
	s, ok := stringConst(at)
	if !ok || k == pathName && (fn != "startsWith" || s == "") { // only its start is known
		return
	}
	want, bad := never(k, s)
	if !bad {
		return
	}
	what := map[caseKind]string{
		headerName: "request.headers' names are lower case",
		methodName: "request.method is upper case",
		lowered:    "lowerAscii() gives lower case",
		uppered:    "upperAscii() gives upper case",
		pathName:   "request.path starts with \"/\"",
	}[k]
	c.fail(at, "%s: %s(%q) is never true; write %q", what, fn, s, want)
}

func (c *caseCheck) visit(e celast.Expr) {
	if c.err != nil {
		return
	}
	switch e.Kind() {
	case celast.SelectKind: // request.headers.Name, has(request.headers.Name)
		s := e.AsSelect()
		c.visit(s.Operand())
		if name := s.FieldName(); c.requestField(s.Operand(), "headers") && name != strings.ToLower(name) {
			c.fail(e, "request.headers has no %q: its names are lower case; write %q", name, strings.ToLower(name))
		}
	case celast.ListKind:
		for _, el := range e.AsList().Elements() {
			c.visit(el)
		}
	case celast.MapKind:
		for _, en := range e.AsMap().Entries() {
			m := en.AsMapEntry()
			c.visit(m.Key())
			c.visit(m.Value())
		}
	case celast.StructKind:
		for _, f := range e.AsStruct().Fields() {
			c.visit(f.AsStructField().Value())
		}
	case celast.ComprehensionKind:
		x := e.AsComprehension()
		c.visit(x.IterRange())
		c.visit(x.AccuInit())
		n := len(c.scope)
		iter := anyCase
		if c.requestField(x.IterRange(), "headers") { // request.headers.exists(k, …): k is a name
			iter = headerName
		}
		c.scope = append(c.scope, caseBinding{x.AccuVar(), anyCase}, caseBinding{x.IterVar(), iter})
		if x.HasIterVar2() {
			c.scope = append(c.scope, caseBinding{x.IterVar2(), anyCase})
		}
		c.visit(x.LoopCondition())
		c.visit(x.LoopStep())
		c.scope = append(c.scope[:n], caseBinding{x.AccuVar(), anyCase})
		c.visit(x.Result())
		c.scope = c.scope[:n]
	case celast.CallKind:
		call := e.AsCall()
		if call.IsMemberFunction() {
			c.visit(call.Target())
		}
		args := call.Args()
		for _, a := range args {
			c.visit(a)
		}
		switch fn := call.FunctionName(); fn {
		case operators.Index, operators.OptIndex, operators.OptSelect: // request.headers['Name'], [?'Name'], .?Name
			if len(args) == 2 && c.requestField(args[0], "headers") {
				c.equal(headerName, args[1])
			}
		case operators.In: // 'Name' in request.headers, request.method in ['get'], in {'get': …}
			if len(args) != 2 {
				return
			}
			if c.requestField(args[1], "headers") {
				c.equal(headerName, args[0])
			}
			k := c.kindOf(args[0])
			switch args[1].Kind() {
			case celast.ListKind:
				for _, el := range args[1].AsList().Elements() {
					c.equal(k, el)
				}
			case celast.MapKind:
				for _, en := range args[1].AsMap().Entries() {
					c.equal(k, en.AsMapEntry().Key())
				}
			}
		case operators.Equals, operators.NotEquals: // request.method == 'get'
			if len(args) == 2 {
				c.equal(c.kindOf(args[0]), args[1])
				c.equal(c.kindOf(args[1]), args[0])
			}
		case "startsWith", "endsWith", "contains": // k.startsWith('X-')
			if call.IsMemberFunction() && len(args) == 1 {
				c.substring(c.kindOf(call.Target()), fn, args[0])
			}
		}
	}
}

// requestField reports whether e is request.<name>, or its optional
// select request.?<name>, and gives the identifier request in it.
func requestField(e celast.Expr, name string) (celast.Expr, bool) {
	r, field, ok := fieldSelect(e)
	return r, ok && field == name && r.Kind() == celast.IdentKind && r.AsIdent() == "request"
}

// stringConst is e's value when e is a string literal.
func stringConst(e celast.Expr) (string, bool) {
	if e.Kind() != celast.LiteralKind {
		return "", false
	}
	s, ok := e.AsLiteral().(types.String)
	return string(s), ok
}
