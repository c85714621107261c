package contractguard

import (
	"context"
	"encoding"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/contractguard/contractguard/internal/bind"
	"github.com/contractguard/contractguard/internal/expr"
	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
)

// ruleWalker applies the rules of a contract to a request. For a file or
// in-code contract it holds the invariants alone (kind Invalid: the
// request as a whole); for a Go type it applies the rules of the type to
// a decoded value, and walks into the values of its fields, elements and
// map values that have rules of their own.
type ruleWalker struct {
	kind   reflect.Kind // Invalid: the request; else the kind of the value walked
	opaque bool         // a type that decodes itself (bind.Opaque): its fields and elements need be no members
	elem   *ruleWalker  // pointer, slice, array, map
	own    []rule       // rules about the whole value (data is the struct, or the request)
	fields []fieldWalker
}

type fieldWalker struct {
	index  int
	name   string // json name: the path token
	inline bool   // an embedded struct whose fields are promoted: no path token
	rules  []rule // self is the field
	nested *ruleWalker
}

// ruleRun applies the rules of one contract to one request.
type ruleRun struct {
	act    *expr.Activation
	path   failure.Path
	report failure.Reporter
	guard  *Guard // logs rules that fail to evaluate
	// Inside a value that decodes itself (opaque > 0), a field or element
	// is a member or element of the body only where the body has it:
	// where not, it and all below it (held) are reported at the path of
	// the value it is in.
	opaque, held int
}

// enter adds the token of a member (index < 0) or an element to the path
// of the failures reported, but inside a value that decodes itself only
// where the body has that member or element (the value "-1 EUR" has no
// member "amount"). leave undoes it.
func (r *ruleRun) enter(name string, index int) {
	if r.held == 0 && r.opaque > 0 {
		v, ok := r.bodyValue()
		switch {
		case !ok:
		case index < 0 && v.Kind() == jsonbody.Object:
			_, ok = v.Get(name)
		case index >= 0 && v.Kind() == jsonbody.Array:
			ok = index < v.Len()
		default:
			ok = false
		}
		if !ok {
			r.held++
			return
		}
	}
	if r.held > 0 {
		r.held++
		return
	}
	if index < 0 {
		r.path.Member(name)
	} else {
		r.path.Index(index)
	}
}

func (r *ruleRun) leave() {
	if r.held > 0 {
		r.held--
		return
	}
	r.path.Pop()
}

// applyRules evaluates c's rules on a request whose body passed c's
// schema; v is the value the body was decoded into (invalid when c has no
// Go type). Each false rule is reported, at the path of the value it is
// about.
func (g *Guard) applyRules(c *contract, q *request, v reflect.Value) {
	if c.rules == nil {
		return
	}
	q.act.Shape = c.numbers
	r := ruleRun{act: &q.act, report: q, guard: g}
	n := len(q.details)
	c.rules.walkRequest(&r, v)
	// A query string that request.query, read as r.URL.Query() reads it,
	// has pairs dropped from: the rules again with it read as the
	// readers that keep them do (Express, Fastify: ?debug=1;x is debug
	// "1;x"; Express 5: ?debug=%zz%31 is debug "%zz1"; a Go handler behind
	// http.AllowQuerySemicolons: ?x=1;debug=1 is debug "1"), until one
	// reports a failure.
	if len(q.details) > n || q.ownQuery || !q.dropsQueryPairs() {
		return
	}
	for _, rd := range [...]queryReading{queryAsNode, queryAsExpress, queryAsSemicolons} {
		if rd == queryAsSemicolons && strings.IndexByte(q.rawQuery, ';') < 0 || rd == queryAsExpress && strings.IndexByte(q.rawQuery, '%') < 0 {
			continue
		}
		q.readQueryAs(rd)
		c.rules.walkRequest(&r, v)
		if len(q.details) > n {
			break
		}
	}
	q.readQueryAs(queryAsGo)
}

// applyRulesByView is applyRules once for each reading of the path that
// c was matched in (request.views), with that reading's path parameters
// and path, until one reports a failure: a contract another reading
// matched is checked as the router reading the path that way routes it.
func (g *Guard) applyRulesByView(c *contract, q *request, v reflect.Value) {
	if c.rules == nil {
		return
	}
	n := len(q.details)
	for i := range q.views {
		if !q.inView(i, c) {
			continue
		}
		q.useView(i)
		g.applyRules(c, q, v)
		if len(q.details) > n {
			break
		}
	}
	q.useView(0)
}

func (r *ruleRun) check(rs []rule, data, self any) {
	for _, ru := range rs {
		r.act.Data, r.act.Self = data, self
		ok, err := ru.prg.Eval(r.act)
		if ok {
			continue
		}
		if err != nil {
			r.guard.evalFailed(ru.where, err)
		}
		if r.report.Wants() {
			r.report.Add(r.path.Pointer(), ru.msg)
		}
	}
}

// readsBody reports whether any of w's rules reads the request's body;
// false for nil, no rules.
func (w *ruleWalker) readsBody() bool {
	if w == nil {
		return false
	}
	reads := func(rs []rule) bool {
		return slices.ContainsFunc(rs, func(r rule) bool { return r.prg.ReadsBody() })
	}
	if reads(w.own) || w.elem.readsBody() {
		return true
	}
	return slices.ContainsFunc(w.fields, func(f fieldWalker) bool { return reads(f.rules) || f.nested.readsBody() })
}

// pruned is w without the walkers that lead to no rule, nil when none of
// it does. The builder keeps a walker that has fields to walk, and in a
// recursive type a field leads back to a walker being built: a T whose
// fields nest T, with no rule anywhere, walked every value of T on every
// request for nothing.
func (w *ruleWalker) pruned() *ruleWalker {
	var all []*ruleWalker
	seen := map[*ruleWalker]bool{}
	var collect func(w *ruleWalker)
	collect = func(w *ruleWalker) {
		if w == nil || seen[w] {
			return
		}
		seen[w] = true
		all = append(all, w)
		collect(w.elem)
		for _, f := range w.fields {
			collect(f.nested)
		}
	}
	collect(w)
	live := map[*ruleWalker]bool{}
	for changed := true; changed; {
		changed = false
		for _, x := range all {
			if !live[x] && (len(x.own) > 0 || live[x.elem] || slices.ContainsFunc(x.fields, func(f fieldWalker) bool { return len(f.rules) > 0 || live[f.nested] })) {
				live[x], changed = true, true
			}
		}
	}
	for _, x := range all {
		x.fields = slices.DeleteFunc(x.fields, func(f fieldWalker) bool { return len(f.rules) == 0 && !live[f.nested] })
		for i := range x.fields {
			if !live[x.fields[i].nested] {
				x.fields[i].nested = nil
			}
		}
	}
	if !live[w] {
		return nil
	}
	return w
}

// walkRequest walks v, the value of the request's body (invalid for a
// contract without a Go type), with w, its type's walker. A pointer
// request type (Handle[*T]) given an empty body holds nil: there is no
// value for T's rules to be about, but the rules of T's blank fields
// that read nothing of the body (context.user, request.params) are
// about the request, and run: they ran for {} and not for an empty
// body, which passed cg:"cel=context.user.role == 'admin'" for anyone.
func (w *ruleWalker) walkRequest(r *ruleRun, v reflect.Value) {
	e := w
	for e.kind == reflect.Pointer && v.IsValid() && !v.IsNil() {
		e, v = e.elem, v.Elem()
	}
	if e.kind != reflect.Pointer || !v.IsValid() {
		e.walk(r, v)
		return
	}
	for e.kind == reflect.Pointer {
		e = e.elem
	}
	if e.kind != reflect.Struct {
		return
	}
	for i, ru := range e.own {
		if !ru.prg.ReadsBody() {
			r.check(e.own[i:i+1], nil, nil)
		}
	}
}

func (w *ruleWalker) walk(r *ruleRun, v reflect.Value) {
	if w.opaque { // a struct, slice, array or map that decodes itself
		r.opaque++
		w.walkValue(r, v)
		r.opaque--
		return
	}
	w.walkValue(r, v)
}

func (w *ruleWalker) walkValue(r *ruleRun, v reflect.Value) {
	switch w.kind {
	case reflect.Invalid: // the request as a whole
		r.check(w.own, nil, nil)
	case reflect.Pointer:
		if !v.IsNil() {
			w.elem.walk(r, v.Elem())
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			r.enter("", i)
			w.elem.walk(r, v.Index(i))
			r.leave()
		}
	case reflect.Map:
		keys, names := r.mapMembers(v)
		order := make([]int, len(keys))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(names[a], names[b]) })
		for _, i := range order {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(keys[i])) // addressable, for data
			r.enter(names[i], -1)
			w.elem.walk(r, e)
			r.leave()
		}
	case reflect.Struct: // addressable: the walk starts at a pointer's element and copies map values
		data := v.Addr().Interface()
		r.check(w.own, data, nil)
		for _, f := range w.fields {
			fv := v.Field(f.index)
			if !fv.CanInterface() {
				// An unexported embedded struct, whose promoted fields
				// encoding/json (and T) fill: read it as they write it.
				fv = reflect.NewAt(fv.Type(), unsafe.Pointer(fv.UnsafeAddr())).Elem()
			}
			if !f.inline {
				r.enter(f.name, -1)
			}
			// A field rule is about a value: on a pointer the body left
			// out (nil: the schema refuses a null for it), it has none and
			// is not run, as the rules of a struct behind a nil pointer
			// are not (self was a nil pointer, whose evaluation failed: an
			// optional pointer field with a rule refused every body
			// without it).
			if len(f.rules) > 0 && !(fv.Kind() == reflect.Pointer && fv.IsNil()) {
				r.check(f.rules, data, selfOf(fv))
			}
			if f.nested != nil {
				f.nested.walk(r, fv)
			}
			if !f.inline {
				r.leave()
			}
		}
	}
}

// selfOf is the value of a field rule's self: the field's Go value, but a
// json.Number as its string and a json.RawMessage as its bytes, the types
// the rule was checked with and what data.<field> reads. cel-go adapts the
// Go values by their contents, a number and the JSON value the bytes hold:
// self != '0' held for the number 0, size(self) <= 10 for an object of one
// long member. By the field's type: a field of type any holds a number as
// a json.Number, which the rule (of a dyn self) and data.<field> read as
// the number it is (as a string, self != 0 held for 0).
//
// A pointer (never nil at the field: no field rule runs on a nil pointer)
// is read as the value it points to, but for a struct, which cel-go reads
// through its pointer: the rule was checked with the element's type, and
// cel-go adapts a pointer by its element's kind, so that a *time.Time was
// a struct it does not know, a *time.Duration an int, and a *[]int8, a
// *map[string]int or an **int failed to adapt: such a rule failed for
// every value.
func selfOf(fv reflect.Value) any {
	for fv.Kind() == reflect.Pointer && !fv.IsNil() {
		if e := fv.Type().Elem(); e.Kind() == reflect.Struct && e != timeType {
			break
		}
		fv = fv.Elem()
	}
	switch fv.Type() {
	case numberType:
		return fv.String()
	case rawType:
		return fv.Bytes()
	}
	return fv.Interface()
}

var numberType = reflect.TypeFor[json.Number]()

// mapMembers is the keys of map v and the names of the body's members
// they were decoded from: for a key that reads itself from its name
// (UnmarshalText) or an integer key, the name as the body has it, which
// the key need not write back (netip.Addr writes "::FFFF:1.2.3.4" in
// lower case). The names are found in the body at r.path, where the map
// was decoded from; should they not be there, each key's own text.
func (r *ruleRun) mapMembers(v reflect.Value) ([]reflect.Value, []string) {
	if kt := v.Type().Key(); kt.Kind() != reflect.String || reflect.PointerTo(kt).Implements(textUnmarshaler) {
		if obj, ok := r.bodyAt(); ok && obj.Len() == v.Len() {
			keys, names := make([]reflect.Value, 0, v.Len()), make([]string, 0, v.Len())
			for i := range obj.Len() {
				name, _ := obj.Member(i)
				k, err := bind.MapKey(v.Type(), name)
				if err != nil || !v.MapIndex(k).IsValid() {
					break
				}
				keys, names = append(keys, k), append(names, name)
			}
			if len(keys) == v.Len() {
				return keys, names
			}
		}
	}
	keys := v.MapKeys()
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = mapKey(k)
	}
	return keys, names
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// bodyAt is the object of the request's body at r.path; ok is false when
// there is none.
func (r *ruleRun) bodyAt() (jsonbody.Value, bool) {
	v, ok := r.bodyValue()
	return v, ok && v.Kind() == jsonbody.Object
}

// bodyValue is the value of the request's body at r.path; ok is false
// when there is none.
func (r *ruleRun) bodyValue() (jsonbody.Value, bool) {
	if r.act.Body == nil {
		return jsonbody.Value{}, false
	}
	v := r.act.Body.Root()
	for i := range r.path.Len() {
		name, index, seg := r.path.Step(i)
		switch {
		case seg:
			return jsonbody.Value{}, false
		case index >= 0:
			if v.Kind() != jsonbody.Array || index >= v.Len() {
				return jsonbody.Value{}, false
			}
			v = v.Index(index)
		default:
			var ok bool
			if v.Kind() != jsonbody.Object {
				return jsonbody.Value{}, false
			}
			if v, ok = v.Get(name); !ok {
				return jsonbody.Value{}, false
			}
		}
	}
	return v, true
}

// mapKey is a map key as its JSON object member name.
func mapKey(k reflect.Value) string {
	if tm, ok := k.Interface().(encoding.TextMarshaler); ok {
		if b, err := tm.MarshalText(); err == nil {
			return string(b)
		}
	}
	switch k.Kind() {
	case reflect.String:
		return k.String()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10)
	}
	return fmt.Sprint(k.Interface())
}

// evalFailed logs, at debug level, a rule that failed to evaluate (and so
// counted as false). The error holds no value of the request
// (expr.Program.Eval leaves them out), as a log never does.
func (g *Guard) evalFailed(where string, err error) {
	if g.log.Enabled(context.Background(), slog.LevelDebug) {
		g.log.Debug("contractguard: rule failed to evaluate; counted as false",
			slog.String("rule", where), slog.String("error", err.Error()))
	}
}
