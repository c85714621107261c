package expr

import (
	"encoding/json"
	"math/bits"
	"reflect"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/interpreter"

	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/shape"
)

// Source supplies the parts of a request that are costly to build. Each
// method is called at most once per Activation, and only when an
// expression reads that part.
type Source interface {
	Params() map[string]string  // path parameters
	Query() map[string]string   // name -> first value
	Headers() map[string]string // lower-case name -> first value
	Path() string               // the path as matched
	User() any                  // what Options.User returned
}

// Activation binds the variables of one request: request.body, .params,
// .query, .headers, .method, .path, and context.user. Set Body and Shape
// before each contract's evaluation; the rest is shared by all contracts
// of the request. It is not safe for concurrent use.
type Activation struct {
	Body   *jsonbody.Doc // nil: null
	Shape  *shape.Numbers
	Method string
	Path   string
	Src    Source

	// Data and Self are the variables of struct-tag rules: a pointer to the
	// struct the rule is declared on, and the field's value.
	Data, Self any

	params, query, headers map[string]string
	got                    uint8 // which of the above are fetched
	user                   ref.Val
	body                   ref.Val // request.body for bodyShape, built on first use
	bodyShape              *shape.Numbers
	bodyMeter              *meter // the meter body's values count in: this Activation's (not a copy's)

	// built are request.params, .query, .headers and context.user as the
	// tracked evaluation running reads them (builtMaps of its tracker:
	// lookedUpMap), made on first use; run clears them when it ends.
	built [4]ref.Val

	// meter counts the comparison units of a tracked cel-go evaluation
	// (compare.go).
	meter meter
}

const (
	gotParams uint8 = 1 << iota
	gotQuery
	gotHeaders
)

var _ interpreter.Activation = (*Activation)(nil)

// ResolveName implements interpreter.Activation.
func (a *Activation) ResolveName(name string) (any, bool) {
	switch name {
	case "request":
		return (*requestVal)(a), true
	case "context":
		return (*contextVal)(a), true
	case "data":
		return a.Data, a.Data != nil
	case "self":
		return a.Self, true
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (a *Activation) Parent() interpreter.Activation { return nil }

// requestMap is request.params, .query or .headers: part is gotParams,
// gotQuery or gotHeaders.
func (a *Activation) requestMap(part uint8) map[string]string {
	switch part {
	case gotParams:
		return a.part(gotParams, &a.params, Source.Params)
	case gotQuery:
		return a.part(gotQuery, &a.query, Source.Query)
	}
	return a.part(gotHeaders, &a.headers, Source.Headers)
}

// Reroute forgets request.params, request.path and request.query as
// fetched, for a Source that now reads the request another way (another
// reading of its path); the body, headers and user stay.
func (a *Activation) Reroute() {
	a.Path, a.params, a.query = "", nil, nil
	a.got &^= gotParams | gotQuery
}

// requestPath is request.path: Path, else the Source's, fetched once.
func (a *Activation) requestPath() string {
	if a.Path == "" && a.Src != nil {
		a.Path = a.Src.Path()
	}
	return a.Path
}

func (a *Activation) part(bit uint8, m *map[string]string, fetch func(Source) map[string]string) map[string]string {
	if a.got&bit == 0 {
		a.got |= bit
		if a.Src != nil {
			*m = fetch(a.Src)
		}
		if *m == nil {
			*m = map[string]string{}
		}
	}
	return *m
}

func (a *Activation) userValue() ref.Val {
	if a.user == nil {
		var u any
		if a.Src != nil {
			u = a.Src.User()
		}
		a.user = userValue(u, &a.meter)
	}
	return a.user
}

// UserValue presents whatever Options.User returned as a CEL map: a map
// of strings as it is, anything else (a map, a struct with json tags, a
// pointer to one) through its JSON encoding. nil is an empty map.
func UserValue(u any) ref.Val { return userValue(u, nil) }

// userValue is UserValue whose objects and arrays count their
// comparisons in m.
func userValue(u any, m *meter) ref.Val {
	switch u := u.(type) {
	case nil:
		return types.NewStringInterfaceMap(types.DefaultTypeAdapter, map[string]any{})
	case ref.Val:
		return u
	case map[string]string:
		return types.DefaultTypeAdapter.NativeToValue(u)
	}
	b, err := json.Marshal(u)
	if err != nil {
		return types.NewErr("context.user: %v", err)
	}
	doc, err := jsonbody.Parse(b, jsonbody.MaxDepthLimit)
	if err != nil {
		return types.NewErr("context.user: %v", err)
	}
	if doc.Root().Kind() != jsonbody.Object {
		return types.NewErr("context.user: %T is not an object", u)
	}
	return valueIn(doc.Root(), nil, m)
}

// requestVal is the variable request, a map with fixed keys whose values
// are built on first use.
type requestVal Activation

var requestKeys = []string{"body", "headers", "method", "params", "path", "query"}

func (r *requestVal) FindStringKey(k string) (any, bool) {
	a := (*Activation)(r)
	switch k {
	case "body":
		if a.Body == nil {
			return types.NullValue, true
		}
		if a.body == nil || a.bodyShape != a.Shape || a.bodyMeter != &a.meter {
			a.body, a.bodyShape, a.bodyMeter = valueIn(a.Body.Root(), a.Shape, &a.meter), a.Shape, &a.meter
		}
		return a.body, true
	case "params":
		return a.lookedUpMap(gotParams), true
	case "query":
		return a.lookedUpMap(gotQuery), true
	case "headers":
		return a.lookedUpMap(gotHeaders), true
	case "method":
		return types.String(a.Method), true
	case "path":
		return types.String(a.requestPath()), true
	}
	return nil, false
}

func (r *requestVal) Find(key ref.Val) (ref.Val, bool) { return findVia(r, key) }
func (r *requestVal) Get(key ref.Val) ref.Val          { return mapGet(r, key) }
func (r *requestVal) Contains(key ref.Val) ref.Val     { return mapContains(r, key) }
func (r *requestVal) Size() ref.Val                    { return types.Int(len(requestKeys)) }
func (r *requestVal) Iterator() traits.Iterator        { return &keyIterator{keys: requestKeys} }
func (r *requestVal) Type() ref.Type                   { return types.MapType }
func (r *requestVal) Value() any                       { return r }
func (r *requestVal) Equal(other ref.Val) ref.Val      { return mapEqual(r, other) }
func (r *requestVal) ConvertToType(t ref.Type) ref.Val { return convertToType(r, types.MapType, t) }
func (r *requestVal) ConvertToNative(t reflect.Type) (any, error) {
	return nativeOf(r, requestKeys, t)
}

// contextVal is the variable context; its one key is user.
type contextVal Activation

var contextKeys = []string{"user"}

func (c *contextVal) FindStringKey(k string) (any, bool) {
	if k == "user" {
		a := (*Activation)(c)
		u := a.userValue()
		if m, ok := u.(traits.Mapper); ok && a.meter.counting() && !isBodyValue(u) {
			return a.builtMap(gotUser, func() traits.Mapper { return m }), true // a Go map (compare.go)
		}
		return u, true
	}
	return nil, false
}

// gotUser is context.user's place in built, after the request's maps'.
const gotUser uint8 = gotHeaders << 1

// lookedUpMap is part, one of the request's maps (gotParams, gotQuery,
// gotHeaders), as cel-go reads it: a Go map, which hashes a key looked
// up in it whole; in a tracked evaluation, a builtMap, whose lookups
// count the units of that hashing first (compare.go).
func (a *Activation) lookedUpMap(part uint8) any {
	m := a.requestMap(part)
	if !a.meter.counting() {
		return m
	}
	return a.builtMap(part, func() traits.Mapper { return types.NewStringStringMap(types.DefaultTypeAdapter, m) })
}

// builtMap is the builtMap of part (a got bit) for the tracked evaluation
// running, of the map of mapper, made on its first read in the
// evaluation: later reads allocate nothing. One made for another
// evaluation's tracker is not used (run clears built when an evaluation
// ends, so that none is kept past it).
func (a *Activation) builtMap(part uint8, mapper func() traits.Mapper) ref.Val {
	t, i := a.meter.frame.CostTracker(), bits.TrailingZeros8(part)
	if b, ok := a.built[i].(builtMap); ok && b.tracker == t {
		return a.built[i]
	}
	a.built[i] = builtMap{Mapper: mapper(), tracker: t}
	return a.built[i]
}

func (c *contextVal) Find(key ref.Val) (ref.Val, bool) { return findVia(c, key) }
func (c *contextVal) Get(key ref.Val) ref.Val          { return mapGet(c, key) }
func (c *contextVal) Contains(key ref.Val) ref.Val     { return mapContains(c, key) }
func (c *contextVal) Size() ref.Val                    { return types.Int(1) }
func (c *contextVal) Iterator() traits.Iterator        { return &keyIterator{keys: contextKeys} }
func (c *contextVal) Type() ref.Type                   { return types.MapType }
func (c *contextVal) Value() any                       { return c }
func (c *contextVal) Equal(other ref.Val) ref.Val      { return mapEqual(c, other) }
func (c *contextVal) ConvertToType(t ref.Type) ref.Val { return convertToType(c, types.MapType, t) }
func (c *contextVal) ConvertToNative(t reflect.Type) (any, error) {
	return nativeOf(c, contextKeys, t)
}

type stringKeyed interface {
	FindStringKey(string) (any, bool)
}

func findVia(m stringKeyed, key ref.Val) (ref.Val, bool) {
	k, ok := key.(types.String)
	if !ok {
		if types.IsUnknownOrError(key) {
			return key, false
		}
		return nil, false
	}
	v, found := m.FindStringKey(string(k))
	if !found {
		return nil, false
	}
	return types.DefaultTypeAdapter.NativeToValue(v), true
}

func nativeOf(m stringKeyed, keys []string, t reflect.Type) (any, error) {
	vals := make(map[string]any, len(keys))
	for _, k := range keys {
		v, _ := m.FindStringKey(k)
		vals[k] = v
	}
	return types.NewStringInterfaceMap(types.DefaultTypeAdapter, vals).ConvertToNative(t)
}
