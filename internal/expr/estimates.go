package expr

import (
	"strconv"
	"sync"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/overloads"
	"cel.dev/cel-go/common/types"
)

// Estimates remembers cel-go's cost estimates by an expression's shape,
// for the contracts of one load: a service's invariants repeat a few
// shapes (request.body.quantity <= 100, request.body.total > 0) over
// different fields and bounds, and each estimate was a twentieth of
// loading a contract (cel-go builds a new estimator, and copies its table
// of overload models, for every expression).
//
// The shape is everything cel-go's estimate reads: the tree of nodes with
// each one's kind, checked type, overloads, identifiers and literals, and
// the size the contract's sizer gives each node it can name (which is
// what the schema's bounds reach the estimate through). It leaves out only
// what the estimate cannot read: the names of selected fields, beyond the
// sizes and types they lead to, and the values of numbers compared, added,
// subtracted, multiplied, divided or negated (cel-go charges those
// operators a constant, and sizes a number 1 whatever its value).
//
// Only expressions whose every node is a scalar or an object have a
// shape. cel-go sizes a list, a map or a dyn value from the sizes of its
// elements too, asking the sizer about paths of its own (a list's
// "@items", a map's "@keys" and "@values", nested), and some models read
// them (join, flatten, slice): an expression with such a node, an index
// or a comprehension is estimated every time. TestEstimates_AsCEL and
// FuzzEstimatesVsCEL hold every remembered estimate to cel-go's own.
//
// A shape leaves out what one environment fixes for all its contracts
// (its cost model, MaxBodyBytes, which bounds a value no schema bounds):
// a memory is of the environment that made it, and estimates in any
// other are not remembered.
type Estimates struct {
	base *cel.Env // the environment the estimates are of
	m    sync.Map // shape → cost.CostEstimate
}

// NewEstimates returns an empty memory of e's estimates.
func (e *Env) NewEstimates() *Estimates { return &Estimates{base: e.env} }

// estimate is base's estimate of a, remembered by a's shape when m is of
// base and a has one.
func (m *Estimates) estimate(base *cel.Env, a *cel.Ast, sizes cost.Estimator) (cost.CostEstimate, error) {
	key, shaped := "", false
	if z, ok := sizes.(*sizer); ok && m != nil && m.base == base {
		key, shaped = shapeOf(a.NativeRep(), z)
	}
	if !shaped {
		return base.EstimateCost(a, sizes)
	}
	if est, found := m.m.Load(key); found {
		return est.(cost.CostEstimate), nil
	}
	est, err := base.EstimateCost(a, sizes)
	if err == nil {
		m.m.Store(key, est)
	}
	return est, err
}

// valueFreeOverloads are the overloads whose estimate does not read the
// value of a number among their arguments: cel-go charges them a
// constant, or (equality) the smaller of its arguments' sizes, and a
// number's size is 1.
var valueFreeOverloads = map[string]bool{}

func init() {
	for _, ids := range [][]string{
		{overloads.Equals, overloads.NotEquals},
		{overloads.LessInt64, overloads.LessUint64, overloads.LessDouble, overloads.LessInt64Double, overloads.LessInt64Uint64,
			overloads.LessUint64Int64, overloads.LessUint64Double, overloads.LessDoubleInt64, overloads.LessDoubleUint64},
		{overloads.LessEqualsInt64, overloads.LessEqualsUint64, overloads.LessEqualsDouble, overloads.LessEqualsInt64Double,
			overloads.LessEqualsInt64Uint64, overloads.LessEqualsUint64Int64, overloads.LessEqualsUint64Double,
			overloads.LessEqualsDoubleInt64, overloads.LessEqualsDoubleUint64},
		{overloads.GreaterInt64, overloads.GreaterUint64, overloads.GreaterDouble, overloads.GreaterInt64Double,
			overloads.GreaterInt64Uint64, overloads.GreaterUint64Int64, overloads.GreaterUint64Double,
			overloads.GreaterDoubleInt64, overloads.GreaterDoubleUint64},
		{overloads.GreaterEqualsInt64, overloads.GreaterEqualsUint64, overloads.GreaterEqualsDouble,
			overloads.GreaterEqualsInt64Double, overloads.GreaterEqualsInt64Uint64, overloads.GreaterEqualsUint64Int64,
			overloads.GreaterEqualsUint64Double, overloads.GreaterEqualsDoubleInt64, overloads.GreaterEqualsDoubleUint64},
		{overloads.AddInt64, overloads.AddUint64, overloads.AddDouble, overloads.SubtractInt64, overloads.SubtractUint64,
			overloads.SubtractDouble, overloads.MultiplyInt64, overloads.MultiplyUint64, overloads.MultiplyDouble,
			overloads.DivideInt64, overloads.DivideUint64, overloads.DivideDouble, overloads.ModuloInt64,
			overloads.ModuloUint64, overloads.NegateInt64, overloads.NegateDouble},
	} {
		for _, id := range ids {
			valueFreeOverloads[id] = true
		}
	}
}

// scalarOrObject are the kinds of value cel-go sizes by themselves: the
// kinds of the nodes of an expression that has a shape.
var scalarOrObject = map[types.Kind]bool{
	types.BoolKind: true, types.IntKind: true, types.UintKind: true, types.DoubleKind: true,
	types.StringKind: true, types.BytesKind: true, types.NullTypeKind: true, types.StructKind: true,
}

// shapeOf writes a's shape (see Estimates); false when a has none.
func shapeOf(a *celast.AST, z *sizer) (string, bool) {
	w := shapeWriter{a: a, z: z}
	w.node(a.Expr(), false)
	return string(w.b), !w.none
}

type shapeWriter struct {
	a    *celast.AST
	z    *sizer
	b    []byte
	none bool // a node without a shape was met
}

// node writes e and returns its path as cel-go tracks it (a variable and
// the fields selected from it; nil for any other node), whose size it
// writes last. valueFree: e is an argument of a valueFreeOverloads call.
func (w *shapeWriter) node(e celast.Expr, valueFree bool) (path []string) {
	if w.none {
		return nil
	}
	t := w.a.GetType(e.ID())
	if !scalarOrObject[t.Kind()] {
		w.none = true // sized from its elements too: see Estimates
		return nil
	}
	w.b = append(w.b, '(', byte('0'+e.Kind()))
	w.b = append(w.b, t.String()...)
	switch e.Kind() {
	case celast.LiteralKind:
		w.b = append(w.b, ' ')
		switch v := e.AsLiteral().(type) {
		case types.Int:
			if !valueFree { // else its type is all the estimate reads
				w.b = strconv.AppendInt(w.b, int64(v), 10)
			}
		case types.Uint:
			if !valueFree {
				w.b = strconv.AppendUint(w.b, uint64(v), 10)
			}
		case types.Double:
			if !valueFree {
				w.b = strconv.AppendFloat(w.b, float64(v), 'g', -1, 64)
			}
		case types.String:
			w.b = strconv.AppendQuote(w.b, string(v))
		case types.Bytes:
			w.b = strconv.AppendQuote(w.b, string(v))
		case types.Bool:
			w.b = strconv.AppendBool(w.b, bool(v))
		case types.Null:
			w.b = append(w.b, "null"...)
		default:
			w.none = true
		}
	case celast.IdentKind:
		w.b = append(w.b, ' ')
		w.b = append(w.b, e.AsIdent()...)
		path = []string{e.AsIdent()}
	case celast.SelectKind:
		sel := e.AsSelect()
		if sel.IsTestOnly() {
			w.b = append(w.b, '?')
		}
		if p := w.node(sel.Operand(), false); p != nil {
			path = append(p[:len(p):len(p)], sel.FieldName())
		}
	case celast.CallKind:
		c := e.AsCall()
		switch c.FunctionName() {
		case operators.Index, operators.OptIndex, operators.OptSelect, "cel.@block":
			w.none = true // paths and sizes of their own
			return nil
		}
		w.b = append(w.b, ' ')
		w.b = append(w.b, c.FunctionName()...)
		ids := w.a.GetOverloadIDs(e.ID())
		free := len(ids) > 0
		for _, id := range ids {
			w.b = append(w.b, ' ')
			w.b = append(w.b, id...)
			free = free && valueFreeOverloads[id]
		}
		if c.IsMemberFunction() {
			w.b = append(w.b, '.')
			w.node(c.Target(), false)
		}
		for _, arg := range c.Args() {
			w.node(arg, free)
		}
	default: // lists, maps, structs, comprehensions: sizes of their own
		w.none = true
		return nil
	}
	if path != nil {
		w.size(path, t)
	}
	w.b = append(w.b, ')')
	return path
}

// size writes the size the sizer gives a node at path of type t.
func (w *shapeWriter) size(path []string, t *types.Type) {
	s := w.z.EstimateSize(shapeNode{path: path, t: t})
	if s == nil {
		w.b = append(w.b, " -"...)
		return
	}
	w.b = append(w.b, ' ')
	w.b = strconv.AppendUint(w.b, s.Min, 10)
	w.b = append(w.b, '-')
	w.b = strconv.AppendUint(w.b, s.Max, 10)
}

// shapeNode is a node as the sizer reads it: its path and type.
type shapeNode struct {
	path []string
	t    *types.Type
}

func (n shapeNode) Path() []string                   { return n.path }
func (n shapeNode) Type() *types.Type                { return n.t }
func (n shapeNode) Expr() celast.Expr                { return nil }
func (n shapeNode) ComputedSize() *cost.SizeEstimate { return nil }
