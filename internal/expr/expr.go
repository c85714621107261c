// Package expr compiles and evaluates contract invariants with cel-go
// (cel.dev/cel-go). Programs are compiled once and are safe for concurrent
// use; every evaluation runs under a cost limit, and every expression's
// estimated cost is bounded when it is compiled.
package expr

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/decls"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"
)

// Limits on the text of an expression.
const (
	// MaxExpressionLength is the longest expression accepted, in code points.
	MaxExpressionLength = 4096
	// MaxNesting is the deepest nesting of calls, selections and brackets.
	MaxNesting = 32
)

// Config sets the bounds of an Env.
type Config struct {
	// CostLimit stops every evaluation past this cost.
	CostLimit uint64
	// MaxEstimatedCost refuses, at compile time, expressions whose estimated
	// worst-case cost is higher. math.MaxUint64: no limit.
	MaxEstimatedCost uint64
	// MaxBodyBytes bounds the sizes of body values in estimates when the
	// schema does not.
	MaxBodyBytes int64
}

// Env is the base CEL environment of contracts: the variable context, the
// standard macros and the strings, math, lists, sets and optional-values
// extensions. ForSchema and ForType extend it with request (and data and
// self) for one contract or type.
type Env struct {
	env       *cel.Env
	pratt     astParser // env's parser, the Pratt way, for plain texts (parse.go)
	blank     *cel.Ast  // what prattChecked hands cel-go's optimizer to replace
	checking  *cel.Env  // env's declarations without its cost models and macros: what ForSchema extends
	explain   *cel.Env  // checking with env's macros: where a failed check is done again, for its message
	costLimit uint64
	maxCost   uint64
	maxBody   int64
}

// NewEnv returns the base environment.
func NewEnv(c Config) (*Env, error) {
	env, err := cel.NewEnv(
		cel.Variable("context", cel.MapType(cel.StringType, cel.DynType)),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(),
		ext.Math(),
		ext.Lists(),
		ext.Sets(),
		cel.ParserExpressionSizeLimit(MaxExpressionLength),
		cel.ParserRecursionLimit(MaxNesting),
	)
	if err != nil {
		return nil, err
	}
	if env, err = boundFormat(env, c.CostLimit); err != nil { // lengths.go
		return nil, err
	}
	if env, err = meterDistinct(env); err != nil { // compare.go
		return nil, err
	}
	checking, err := checkingEnv(env, false)
	if err != nil {
		return nil, err
	}
	explain, err := checkingEnv(env, true)
	if err != nil {
		return nil, err
	}
	pratt, err := newPratt(env)
	if err != nil {
		return nil, err
	}
	blank, iss := env.Parse("0")
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 1 << 20
	}
	return &Env{env: env, pratt: pratt, blank: blank, checking: checking, explain: explain, costLimit: c.CostLimit, maxCost: c.MaxEstimatedCost, maxBody: c.MaxBodyBytes}, nil
}

// Compile compiles src for a contract without a schema (request.body is dyn).
func (e *Env) Compile(src string) (*Program, error) {
	ce, err := e.ForSchema(nil)
	if err != nil {
		return nil, err
	}
	return ce.Compile(src)
}

// Program is a compiled invariant.
type Program struct {
	tracked bool // evaluated under the cost limit's tracker
	body    bool // reads the request's body (readsBody)
	// data: the fields of data it reads by name (dataFields); dataWhole:
	// it reads data otherwise too
	data      []string
	dataWhole bool
	nat       *native // the native fast path (native.go); nil: cel-go alone

	// cel-go's program. Planned when the expression compiles if the
	// native path does not cover it; else on the first evaluation that
	// falls back to cel-go (see compile).
	prg     cel.Program
	planErr error
	plan    func() (cel.Program, error) // nil once planned
	once    sync.Once
}

// compile parses src in e's base environment (its macros and syntax; a
// plain text with the Pratt parser, parse.go),
// type-checks it in env (which declares the rule's variables and types),
// estimates its cost with the base's model (compiled once: no contract
// adds a function) against e's limits, and plans it in plan, the
// environment the program keeps: env when the program needs env's types
// at run time (the Go types of a struct-tag rule), else the base, so that
// env is garbage once the contract is compiled. o: what differs between
// contracts and struct-tag rules.
func compile(e *Env, env, plan *cel.Env, src string, sizes cost.Estimator, o compileOpts) (*Program, error) {
	base, costLimit, maxCost := e.env, e.costLimit, e.maxCost
	ast, err := checked(e, env, src, o.again)
	if err != nil {
		return nil, err
	}
	if o.vars != nil {
		if err := o.vars.misreads(ast); err != nil {
			return nil, err
		}
	}
	if err := neverEqual(ast); err != nil {
		return nil, err
	}
	switch t := ast.OutputType(); {
	case t.IsExactType(types.BoolType), t.IsExactType(types.DynType):
	default:
		return nil, fmt.Errorf("must evaluate to a bool, not %s", t)
	}
	est, err := o.estimates.estimate(base, ast, sizes)
	if err != nil {
		return nil, fmt.Errorf("cost: %w", err)
	}
	if maxCost != math.MaxUint64 && est.Max > maxCost {
		return nil, fmt.Errorf("estimated cost %s exceeds the limit of %d: bound the lists and strings it reads with maxItems and maxLength",
			costString(est.Max), maxCost)
	}
	opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize)}
	sorts, keys, consts := sortKeys(ast), lookupKeys(ast), lookedUpMaps(ast) // compare.go
	tracked := est.Max > costLimit || readsUnbounded(ast) || sorts != nil || keys != nil || tracksCalls(ast, sizes) || buildsMapsOfData(ast)
	if tracked { // what is metered is metered only when the cost is tracked (compare.go)
		opts = append(opts, cel.CostLimit(costLimit), trackComparisons, trackIndexOf)
		if sorts != nil {
			opts = append(opts, meterSortKeys(sorts))
		}
		if keys != nil {
			opts = append(opts, meterLookupKeys(keys))
		}
		if built := builtComparisons(ast); built != nil {
			opts = append(opts, meterBuiltComparisons(base, built))
		}
		if sets := builtSets(ast); sets != nil {
			opts = append(opts, meterBuiltSets(base, sets))
		}
		if maps, keys := builtMaps(ast, consts); maps != nil {
			opts = append(opts, meterBuiltMaps(maps, keys))
		}
	}
	if looksUpStrings(ast) {
		opts = append(opts, keepInCalls) // compare.go
	}
	if consts != nil {
		opts = append(opts, buildLookedUpMaps(consts)) // compare.go
	}
	p := &Program{tracked: tracked, body: readsBody(ast)}
	p.data, p.dataWhole = dataFields(ast)
	budget := uint64(unlimited)
	if p.tracked {
		budget = costLimit
	}
	if p.nat = translate(ast.NativeRep(), budget, o.vars); p.nat != nil && !constantCall(ast.NativeRep().Expr()) {
		// Planned when an evaluation first falls back, which most
		// programs the native path covers never do: planning was a
		// thirtieth of loading a contract. No error moves from here to a
		// request. cel-go's planner refuses three things of the subset:
		// a constant pattern of matches that does not compile and an index
		// by a constant null (neither translates), and a conversion of a
		// constant that fails
		// (int('a'): OptOptimize folds conversions of constants), which
		// takes a call of constants (constantCall), planned now.
		// FuzzNativeVsCEL plans every program it translates.
		later := o.later
		if later == nil {
			later = func() (*cel.Ast, error) { return ast, nil }
		}
		p.plan = func() (cel.Program, error) {
			ast, err := later()
			if err != nil {
				return nil, err
			}
			return plan.Program(ast, opts...)
		}
		return p, nil
	}
	prg, err := plan.Program(ast, opts...)
	if err != nil {
		return nil, err
	}
	p.prg = prg
	return p, nil
}

// compileOpts is what compile is told besides the text and its
// environments.
type compileOpts struct {
	// again is env's declarations with the macros, when env has none (see
	// recheck); nil when env has them.
	again func() (*cel.Env, error)
	// later checks src again when the program is planned later, so that
	// the checked AST is not kept until then; nil: keep it.
	later func() (*cel.Ast, error)
	// estimates remembers cost estimates by shape; nil: none.
	estimates *Estimates
	// vars are the variables of a struct-tag rule, for the native path;
	// nil for contracts.
	vars *typedVars
}

// checked is src parsed in e's base environment and type-checked in env
// (see compile).
func checked(e *Env, env *cel.Env, src string, again func() (*cel.Env, error)) (*cel.Ast, error) {
	if strings.TrimSpace(src) == "" {
		return nil, errors.New("empty expression")
	}
	var iss *cel.Issues
	ast := e.prattChecked(env, src) // nil: parsed and checked again below, for the reference's verdict and message
	if ast == nil {
		if ast, iss = e.env.Parse(src); iss.Err() == nil {
			ast, iss = env.Check(ast)
		}
	}
	if iss.Err() != nil {
		if err := recheck(e, again, src); err != nil {
			return nil, err
		}
		return nil, compileError(iss.Err())
	}
	return ast, nil
}

// constantCall reports whether e has a call whose arguments are all
// constants (literals, and lists of them): where cel-go's planner starts
// to fold constants.
func constantCall(e celast.Expr) bool {
	found := false
	celast.PostOrderVisit(e, celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() == celast.CallKind && !found {
			c := e.AsCall()
			found = (c.IsMemberFunction() || len(c.Args()) > 0) && constant(c.Target()) && every(c.Args(), constant)
		}
	}))
	return found
}

// constant reports whether e is a literal or a list of constants; an
// absent target (a global call's) counts as one.
func constant(e celast.Expr) bool {
	switch e.Kind() {
	case celast.UnspecifiedExprKind, celast.LiteralKind:
		return true
	case celast.ListKind:
		return every(e.AsList().Elements(), constant)
	}
	return false
}

func every(es []celast.Expr, f func(celast.Expr) bool) bool {
	for _, e := range es {
		if !f(e) {
			return false
		}
	}
	return true
}

// program is cel-go's program, planned on the first call when compile
// left it for later.
func (p *Program) program() (cel.Program, error) {
	p.once.Do(func() {
		if p.plan != nil {
			p.prg, p.planErr = p.plan()
			p.plan = nil
		}
	})
	return p.prg, p.planErr
}

// recheck is the error of src checked again where again declares what
// the first environment did, and the macros: cel-go's checker reads an
// environment's macros only for the suggestions of its messages ("did you
// mean 'exists'?"), and a contract's environment declares none, since
// every environment cel-go extends builds a parser of its macros, which
// was a twentieth of loading a contract. nil when again is nil or the
// second check finds nothing to report: the verdict stays the first
// check's, and so does its message.
// (TestCheckingEnvChecksAsEnv holds the messages to the base's.)
func recheck(e *Env, again func() (*cel.Env, error), src string) error {
	if again == nil {
		return nil
	}
	env, err := again()
	if err != nil {
		return nil
	}
	_, err = checked(e, env, src, nil)
	return err
}

// readsUnbounded reports whether an expression reads values whose sizes
// the estimate cannot bound for sure: context.user (whatever the
// application returns) and the request line and headers (bounded by the
// server's MaxHeaderBytes, which an application may raise). Such
// expressions, and those estimated over the limit, are tracked at run
// time; the others cannot exceed their estimate, which is within the limit,
// and run without the tracker's cost. request is bounded only where it is
// selected for its body or method: read any other way ([request][0],
// a comprehension over it, an index of it), it may lead to the headers,
// which the estimate then sizes as a body.
func readsUnbounded(a *cel.Ast) bool {
	found := false
	requests, bounded := 0, 0
	celast.PostOrderVisit(a.NativeRep().Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		switch e.Kind() {
		case celast.IdentKind:
			switch e.AsIdent() {
			case "context":
				found = true
			case "request":
				requests++
			}
		case celast.SelectKind:
			sel := e.AsSelect()
			if op := sel.Operand(); op.Kind() == celast.IdentKind && op.AsIdent() == "request" {
				switch sel.FieldName() {
				case "body", "method":
					bounded++
				}
			}
		}
	}))
	return found || requests > bounded
}

// readsBody reports whether a reads the request's body: request.body,
// request whole (an index, a function of it), or a variable of a
// struct-tag rule (data, self, which are the body decoded). Only
// context, a comprehension's own variables and request's other fields
// (request.query, …) read nothing of it.
func readsBody(a *cel.Ast) bool {
	own := map[string]bool{"context": true}
	requests, others := 0, 0
	var idents []string
	celast.PostOrderVisit(a.NativeRep().Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		switch e.Kind() {
		case celast.ComprehensionKind:
			c := e.AsComprehension()
			own[c.IterVar()], own[c.AccuVar()] = true, true
			if c.HasIterVar2() {
				own[c.IterVar2()] = true
			}
		case celast.IdentKind:
			if id := e.AsIdent(); id == "request" {
				requests++
			} else {
				idents = append(idents, id)
			}
		case celast.SelectKind:
			sel := e.AsSelect()
			if op := sel.Operand(); op.Kind() == celast.IdentKind && op.AsIdent() == "request" && sel.FieldName() != "body" {
				others++
			}
		}
	}))
	for _, id := range idents {
		if !own[id] {
			return true
		}
	}
	return requests > others
}

// ReadsBody reports whether the expression reads the request's body.
func (p *Program) ReadsBody() bool { return p.body }

// DataFields is the names of the fields of data (a struct-tag rule's
// struct) the expression reads, tests or selects optionally (data.x,
// has(data.x), data.?x); whole reports that it reads data otherwise too
// (as a value, or a comprehension's variable of that name hides it), so
// that any field may be read.
func (p *Program) DataFields() (names []string, whole bool) { return p.data, p.dataWhole }

// dataFields finds what DataFields reports.
func dataFields(a *cel.Ast) (names []string, whole bool) {
	root := a.NativeRep().Expr()
	isData := func(e celast.Expr) bool { return e.Kind() == celast.IdentKind && e.AsIdent() == "data" }
	selected := map[int64]bool{} // the data idents that are the operand of a select by name
	idents := 0                  // the data idents
	celast.PostOrderVisit(root, celast.NewExprVisitor(func(e celast.Expr) {
		switch e.Kind() {
		case celast.IdentKind:
			if isData(e) {
				idents++
			}
		case celast.SelectKind, celast.CallKind:
			if op, f, ok := fieldSelect(e); ok && isData(op) {
				names = append(names, f)
				selected[op.ID()] = true
			}
		case celast.ComprehensionKind:
			c := e.AsComprehension()
			if c.IterVar() == "data" || c.AccuVar() == "data" || c.HasIterVar2() && c.IterVar2() == "data" {
				whole = true
			}
		}
	}))
	return names, whole || idents > len(selected) // a data ident not selected by name
}

// fieldSelect is e as the select of a field by its name: x.f (has(x.f)
// too), or the optional x.?f, a call of _?._ with a string literal; it
// gives x and f.
func fieldSelect(e celast.Expr) (operand celast.Expr, field string, ok bool) {
	switch e.Kind() {
	case celast.SelectKind:
		s := e.AsSelect()
		return s.Operand(), s.FieldName(), true
	case celast.CallKind:
		c := e.AsCall()
		if c.FunctionName() != operators.OptSelect || len(c.Args()) != 2 {
			return nil, "", false
		}
		if f, ok := stringConst(c.Args()[1]); ok {
			return c.Args()[0], f, true
		}
	}
	return nil, "", false
}

// Tracked reports whether cel-go's evaluations run under the cost
// limit's tracker.
func (p *Program) Tracked() bool { return p.tracked }

// Native reports whether the program has a native fast path, which Eval
// takes for an *Activation.
func (p *Program) Native() bool { return p.nat != nil }

func costString(c uint64) string {
	if c == math.MaxUint64 {
		return "unbounded"
	}
	return fmt.Sprint(c)
}

// compileError keeps the first line of cel-go's report ("ERROR: <input>:1:5:
// undeclared reference to 'x'"), without the source excerpt below it.
func compileError(err error) error {
	lines := strings.Split(err.Error(), "\n")
	var first []string
	for _, l := range lines {
		if strings.HasPrefix(l, "ERROR: ") {
			l = strings.TrimPrefix(strings.TrimPrefix(l, "ERROR: "), "<input>:")
			first = append(first, strings.TrimPrefix(l, "-1:0: ")) // limits have no position
		}
	}
	if len(first) == 0 {
		return errors.New(lines[0])
	}
	return errors.New(strings.Join(first, "; "))
}

// Eval runs the program. It reports true only when the result is the bool
// true; an evaluation error (a missing key, a type mismatch at run time, the
// cost limit) is returned with false, so callers fail closed. The error
// holds no value of the activation (see valueFree): it is for logs.
func (p *Program) Eval(act interpreter.Activation) (bool, error) {
	if a, ok := act.(*Activation); ok && p.nat != nil {
		if ok, err, done := p.nat.eval(a); done {
			return ok, err
		}
	}
	return p.evalCEL(act)
}

// evalCEL is Eval by cel-go alone.
func (p *Program) evalCEL(act interpreter.Activation) (bool, error) {
	prg, err := p.program()
	if err != nil {
		return false, err
	}
	out, err := p.run(prg, act)
	if err != nil {
		return false, evalError{err}
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("evaluated to %s, not a bool", out.Type().TypeName())
	}
	return bool(b), nil
}

// run evaluates prg on act. A tracked program on an *Activation runs in
// a frame of its own, which its body's values reach through the
// Activation's meter: their comparisons charge cel-go's cost tracker of
// that frame as they go (compare.go).
func (p *Program) run(prg cel.Program, act interpreter.Activation) (ref.Val, error) {
	a, ok := act.(*Activation)
	if !ok || !p.tracked {
		out, _, err := prg.Eval(act)
		return out, err
	}
	frame, err := interpreter.NewExecutionFrame(a)
	if err != nil {
		return nil, err
	}
	a.meter = meter{frame: frame}
	out, _, err := prg.Eval(frame)
	a.meter.frame, a.built = nil, [len(a.built)]ref.Val{} // out is read for its type alone: no builtMap outlives the evaluation
	frame.Close()
	return out, err
}

// evalPhrases open the CEL evaluation errors whose reason may be logged.
// What follows one may be a value of the request: after a colon (no such
// key: name), in quotes (invalid RFC 3339 timestamp "x"), or bare
// (unsupported index value x in list).
var evalPhrases = []string{
	"no such key", "no such attribute", "no such overload", "no such field",
	"invalid RFC 3339 timestamp", "invalid timestamp", "division by zero", "modulus by zero",
	"integer overflow", "unsigned integer overflow", "duration overflow", "timestamp overflow",
	"index out of bounds", "index", "type conversion error", "unsupported index value", "range error",
	"invalid UTF-8",
}

// evalError is an evaluation error as Eval returns it: its text is
// valueFree's, worked out only when something reads it (a debug log), not
// on every request whose rule fails to evaluate.
type evalError struct{ err error }

func (e evalError) Error() string { return valueFree(e.err) }

// valueFree is the text of err with no value of the request in it: a
// cancellation (the cost limit) as it is, as CEL writes it without one;
// another error as the phrase it opens with, its quoted values emptied and
// any other text after it cut; an error of no known phrase as a bare
// "evaluation error".
func valueFree(err error) string {
	var cancelled interpreter.EvalCancelledError
	if errors.As(err, &cancelled) {
		return err.Error()
	}
	msg := err.Error()
	for _, p := range evalPhrases {
		rest, ok := strings.CutPrefix(msg, p)
		if !ok || rest != "" && isWordByte(rest[0]) {
			continue
		}
		if q := withoutQuoted(rest); strings.Trim(q, ` "…'`) == "" {
			return p + q
		}
		return p + ": …"
	}
	return "evaluation error"
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// withoutQuoted replaces what is between double quotes in s (as %q
// writes it, escapes included) with "…".
func withoutQuoted(s string) string {
	var b strings.Builder
	in, escaped := false, false
	for _, c := range s {
		switch {
		case !in:
			b.WriteRune(c)
			in = c == '"'
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == '"':
			b.WriteString("…\"")
			in = false
		}
	}
	if in {
		b.WriteString("…")
	}
	return b.String()
}

// checkingEnv is env's declarations (variables, functions, checker
// options, types) without the cost models of its extension libraries,
// and with env's macros if macros. A contract's environment only
// type-checks: its expressions are parsed in env (with env's macros and
// optional syntax), their costs estimated and their programs planned in
// env. Extending env itself made cel-go rebuild and validate those cost
// models for every contract, about 15% of loading one
// (TestCheckingEnvChecksAsEnv holds the two alike). The macros are only
// for the checker's suggestions ("did you mean"): see recheck.
func checkingEnv(env *cel.Env, macros bool) (*cel.Env, error) {
	fns := slices.SortedFunc(maps.Values(env.Functions()), func(a, b *decls.FunctionDecl) int { return strings.Compare(a.Name(), b.Name()) })
	opts := []cel.EnvOption{
		cel.CustomTypeProvider(env.CELTypeProvider()),
		cel.CustomTypeAdapter(env.CELTypeAdapter()),
		cel.VariableDecls(env.Variables()...),
		cel.FunctionDecls(fns...),
		cel.CrossTypeNumericComparisons(true),
	}
	if macros {
		opts = append(opts, cel.Macros(env.Macros()...))
	}
	return cel.NewCustomEnv(opts...)
}
