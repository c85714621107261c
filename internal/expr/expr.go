// Package expr compiles and evaluates contract invariants with cel-go
// (cel.dev/cel-go). Programs are compiled once and are safe for concurrent
// use; every evaluation runs under a cost limit.
package expr

import (
	"errors"
	"fmt"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"
)

// Env is the CEL environment of file and in-code contracts: the variables
// request and context, the standard macros and the strings, math, lists,
// sets and optional-values extensions.
type Env struct {
	env       *cel.Env
	costLimit uint64
}

// NewEnv returns the environment; costLimit bounds every evaluation.
func NewEnv(costLimit uint64) (*Env, error) {
	env, err := cel.NewEnv(
		cel.Variable("request", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("context", cel.MapType(cel.StringType, cel.DynType)),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(),
		ext.Math(),
		ext.Lists(),
		ext.Sets(),
	)
	if err != nil {
		return nil, err
	}
	return &Env{env: env, costLimit: costLimit}, nil
}

// Program is a compiled invariant.
type Program struct {
	prg cel.Program
}

// Compile parses and checks src. The error is one line: position and reason.
func (e *Env) Compile(src string) (*Program, error) {
	if strings.TrimSpace(src) == "" {
		return nil, errors.New("empty expression")
	}
	ast, iss := e.env.Compile(src)
	if iss.Err() != nil {
		return nil, compileError(iss.Err())
	}
	switch t := ast.OutputType(); {
	case t.IsExactType(types.BoolType), t.IsExactType(types.DynType):
	default:
		return nil, fmt.Errorf("must evaluate to a bool, not %s", t)
	}
	prg, err := e.env.Program(ast,
		cel.CostLimit(e.costLimit),
		cel.EvalOptions(cel.OptOptimize),
	)
	if err != nil {
		return nil, err
	}
	return &Program{prg: prg}, nil
}

// compileError keeps the first line of cel-go's report ("ERROR: <input>:1:5:
// undeclared reference to 'x'"), without the source excerpt below it.
func compileError(err error) error {
	lines := strings.Split(err.Error(), "\n")
	var first []string
	for _, l := range lines {
		if strings.HasPrefix(l, "ERROR: ") {
			first = append(first, strings.TrimPrefix(strings.TrimPrefix(l, "ERROR: "), "<input>:"))
		}
	}
	if len(first) == 0 {
		return errors.New(lines[0])
	}
	return errors.New(strings.Join(first, "; "))
}

// Eval runs the program. It reports true only when the result is the bool
// true; an evaluation error (a missing key, a type mismatch at run time, the
// cost limit) is returned with false, so callers fail closed.
func (p *Program) Eval(act interpreter.Activation) (bool, error) {
	out, _, err := p.prg.Eval(act)
	if err != nil {
		return false, err
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("evaluated to %s, not a bool", out.Type().TypeName())
	}
	return bool(b), nil
}
