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
// are lower case, request.method is upper case. A rule that looks up
// request.headers['X-Admin'], asks has(request.headers.Authorization) or
// compares request.method with 'delete' would check nothing on any
// request, and pass (or refuse) every one; it is a load error, at the
// constant's position, as a misspelt field is.
func neverEqual(a *cel.Ast) error {
	native := a.NativeRep()
	var err error
	fail := func(at celast.Expr, format string, args ...any) {
		if err != nil {
			return
		}
		loc := native.SourceInfo().GetStartLocation(at.ID())
		err = fmt.Errorf("%d:%d: "+format, append([]any{loc.Line(), loc.Column() + 1}, args...)...)
	}
	header := func(at celast.Expr, name string) {
		if name != strings.ToLower(name) {
			fail(at, "request.headers has no %q: its names are lower case; write %q", name, strings.ToLower(name))
		}
	}
	method := func(at celast.Expr, m string) {
		if m != strings.ToUpper(m) {
			fail(at, "request.method is never %q: it is upper case; write %q", m, strings.ToUpper(m))
		}
	}
	shadowed := shadowedRequests(native.Expr())
	requestField := func(e celast.Expr, name string) bool {
		r, ok := requestField(e, name)
		return ok && !shadowed[r.ID()]
	}
	celast.PostOrderVisit(native.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		switch e.Kind() {
		case celast.SelectKind: // request.headers.Name, has(request.headers.Name)
			if s := e.AsSelect(); requestField(s.Operand(), "headers") {
				header(e, s.FieldName())
			}
		case celast.CallKind:
			c := e.AsCall()
			args := c.Args()
			if len(args) != 2 {
				return
			}
			switch c.FunctionName() {
			case operators.Index, operators.OptIndex, operators.OptSelect: // request.headers['Name'], [?'Name'], .?Name
				if s, ok := stringConst(args[1]); ok && requestField(args[0], "headers") {
					header(args[1], s)
				}
			case operators.In: // 'Name' in request.headers, request.method in ['get']
				if s, ok := stringConst(args[0]); ok && requestField(args[1], "headers") {
					header(args[0], s)
				}
				if requestField(args[0], "method") && args[1].Kind() == celast.ListKind {
					for _, el := range args[1].AsList().Elements() {
						if s, ok := stringConst(el); ok {
							method(el, s)
						}
					}
				}
			case operators.Equals, operators.NotEquals: // request.method == 'get'
				for i, x := range args {
					if s, ok := stringConst(args[1-i]); ok && requestField(x, "method") {
						method(args[1-i], s)
					}
				}
			}
		}
	}))
	return err
}

// shadowedRequests are the identifiers "request" in e that name a
// comprehension's variable ([{'method': 'get'}].exists(request, …)), not
// the request.
func shadowedRequests(e celast.Expr) map[int64]bool {
	out := map[int64]bool{}
	celast.PostOrderVisit(e, celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() != celast.ComprehensionKind {
			return
		}
		c := e.AsComprehension()
		var in []celast.Expr // where the comprehension's variables are in scope
		if c.IterVar() == "request" || c.IterVar2() == "request" {
			in = []celast.Expr{c.LoopCondition(), c.LoopStep()}
		}
		if c.AccuVar() == "request" {
			in = []celast.Expr{c.LoopCondition(), c.LoopStep(), c.Result()}
		}
		for _, sub := range in {
			celast.PostOrderVisit(sub, celast.NewExprVisitor(func(x celast.Expr) {
				if x.Kind() == celast.IdentKind && x.AsIdent() == "request" {
					out[x.ID()] = true
				}
			}))
		}
	}))
	return out
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
