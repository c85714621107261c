package schema

import (
	"slices"
	"unicode/utf8"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
)

// One validation by the native fast path: its tree (native.go) run over a
// body's tape.

// nativeRun is one validation by the fast path.
type nativeRun struct {
	path  failure.Path
	rep   failure.Reporter
	valid bool
	quick bool // in matches: the first failure decides, the rest is not checked
	full  bool // the reporter takes no more failures: once the verdict is no, nothing is left to find

	// A schema that two keywords lead to (properties and patternProperties
	// both naming it, or allOf with a $ref to a schema that checks the
	// same member) checks a member twice; when it recurses, each level
	// doubles the work: 2^depth checks, for 60 nested members of a body
	// of 64 levels more than any request can wait for. Work beyond what
	// a walk that meets each schema once per value could do (budget)
	// turns memo on: the verdicts of such schemas (native.memo: shared
	// and recursive, or shared and reached manyPaths ways from the root)
	// are kept, two bits per value of the body in rows, past rowsCap in
	// spill, and a value that passed one is not checked by it again (one
	// that failed is checked again while its failures are listed: the
	// details stay those of a walk without memo). A check whose own work
	// grows with its value (an object's members, a string's bytes, the
	// items uniqueItems compares) adds that work to calls, so that a
	// value checked again and again before memo is on costs the budget
	// what it costs the run.
	calls, budget int
	nodes         int      // the body's values: the length of a memo row
	rows          [][]byte // by native.memo: 0 not known, 1 passed, 2 failed; nil until memo meets the schema, or for good once rows hold rowsCap
	rowBytes      int      // what rows hold, up to rowsCap
	rowsCap       int
	spill         map[uint64]uint64 // the verdicts of schemas past rowsCap: (memo<<32 | value) → cost<<2 | verdict
	costs         []uint64          // evictCheap's scratch
	fresh         bool              // the next validate is remembered's own: no memo
	fold          []byte            // foldCase's scratch
}

// rowsCap is how many bytes of rows a run over a body of size bytes
// makes: a row is a quarter byte per value of the body, and a schema may
// have thousands of memo's schemas (2,000 rows over a 1 MiB body were
// 250 MB). The verdicts of the schemas met once the rows hold that much
// go to spill, one entry for each value one of them checks, and spill
// drops its cheaper half when it holds rowsCap/16 (a cache: a verdict
// dropped is found again; see evictCheap).
func rowsCap(size int) int { return max(size, 64<<10) }

// memoBudget is how much work a run does before memo is on, for a body
// of nodes values and size bytes: more than a walk that meets each
// schema once per value does with a few combinators per value.
func memoBudget(nodes, size int) int { return 8*nodes + size/2 + 1024 }

// start readies r for a run over doc, reporting to rep.
func (r *nativeRun) start(rep failure.Reporter, doc *jsonbody.Doc) {
	r.rep, r.valid, r.quick, r.full = rep, true, false, false
	r.calls, r.budget, r.nodes = 0, memoBudget(doc.Nodes(), doc.Size()), doc.Nodes()
	r.rows, r.fresh = r.rows[:0], false
	r.rowBytes, r.rowsCap, r.spill = 0, rowsCap(doc.Size()), nil
}

// wants reports whether the reporter takes another failure, and notes
// when it does not.
func (r *nativeRun) wants() bool {
	if r.rep.Wants() {
		return true
	}
	r.full = true
	return false
}

func (r *nativeRun) fail(message string) {
	r.valid = false
	if r.wants() {
		r.rep.Add(r.path.Pointer(), message)
	}
}

// failAt reports a failure at the member name of the current object.
func (r *nativeRun) failAt(name, message string) {
	r.valid = false
	if r.wants() {
		r.rep.Add(r.path.Pointer(name), message)
	}
}

// failAtSegment reports a failure at the member of the current object
// whose pointer segment is seg.
func (r *nativeRun) failAtSegment(seg, message string) {
	r.valid = false
	if r.wants() {
		r.rep.Add(r.path.PointerSegment(seg), message)
	}
}

func (r *nativeRun) validate(n *native, v jsonbody.Value) {
	if !r.valid && (r.quick || r.full) {
		return // a match failed already, or nothing more is listed: as the library, stop there
	}
	if r.calls++; n.memo >= 0 && r.calls > r.budget && r.remembered(n, v) {
		return
	}
	switch n.boolean {
	case 1:
		return
	case -1:
		r.fail(msgNotAllowed)
		return
	}
	t := typeBit[v.Kind()]
	if n.types != 0 && n.types&t == 0 && !(n.types&tInteger != 0 && t == tNumber && isInteger(v.Number())) {
		r.failType(n, t)
		return
	}
	if n.hasConst && !equal(v, n.constCmp) {
		r.fail(n.constMsg)
		return
	}
	if n.enumCmp != nil && !inEnum(v, n.enumCmp) {
		r.fail(n.enumMsg)
		return
	}
	if n.formatOK != nil && t == tString && !r.formatOK(n, v.Str()) {
		r.fail(n.formatMsg)
		return
	}
	if n.ref != nil {
		r.validate(n.ref, v)
		if n.refOnly {
			return
		}
	}
	switch t {
	case tObject:
		r.object(n, v)
	case tArray:
		r.array(n, v)
	case tString:
		r.str(n, v.Str())
	case tNumber:
		r.number(n, v.Number())
	}
	if n.comb != nil && (r.valid || !r.quick) {
		r.combinators(n.comb, v) // the library's boolean mode skips them after a failure
	}
}

// remembered validates v against n, a schema native.memo names, from
// memo, and reports whether it did: a verdict kept is used again, but for
// listing the failures of a value that failed; a verdict not kept is
// found by validate (fresh: this once without memo) and kept.
//
//go:noinline
func (r *nativeRun) remembered(n *native, v jsonbody.Value) bool {
	if r.fresh {
		r.fresh = false
		return false
	}
	for len(r.rows) <= int(n.memo) {
		r.rows = append(r.rows, nil)
	}
	row := r.rows[n.memo]
	if row == nil && r.rowBytes+(r.nodes+3)/4 <= r.rowsCap {
		row = make([]byte, (r.nodes+3)/4)
		r.rows[n.memo], r.rowBytes = row, r.rowBytes+len(row)
	}
	i, shift := v.Pos()>>2, uint(v.Pos()&3)*2
	key := uint64(n.memo)<<32 | uint64(v.Pos())
	var known byte
	if row != nil {
		known = row[i] >> shift & 3
	} else {
		known = byte(r.spill[key] & 3)
	}
	switch known {
	case 1:
		return true
	case 2:
		if r.quick {
			r.valid = false
			return true
		}
		return false // checked again, for its failures
	}
	valid, calls := r.valid, r.calls
	r.valid, r.fresh = true, true
	r.validate(n, v)
	verdict := byte(2)
	if r.valid {
		verdict = 1
	}
	if row != nil {
		row[i] |= verdict << shift
	} else {
		if r.spill == nil {
			r.spill = map[uint64]uint64{}
		} else if len(r.spill) >= r.rowsCap/16 {
			r.evictCheap()
		}
		r.spill[key] = uint64(r.calls-calls)<<2 | uint64(verdict)
	}
	r.valid = r.valid && valid
	return true
}

// evictCheap drops the half of spill whose verdicts cost the fewest
// checks. Emptying it all let a verdict that took a walk of a large
// value be dropped between its two uses by the verdicts of a sibling's
// many small values (an array checked by many definitions), and be
// found again each time: for a schema that checks a member twice, 2^depth
// walks, as without memo. A verdict is dropped now only while half the
// entries cost more, so a costly one outlives the many cheap ones.
func (r *nativeRun) evictCheap() {
	if len(r.spill) == 0 {
		return
	}
	r.costs = r.costs[:0]
	for _, e := range r.spill {
		r.costs = append(r.costs, e>>2)
	}
	slices.Sort(r.costs)
	keep := len(r.costs) / 2
	least := r.costs[len(r.costs)-keep-1] // the dearest of those dropped
	for k, e := range r.spill {
		if e>>2 < least {
			delete(r.spill, k)
		}
	}
	for k, e := range r.spill { // ties: as many as keep leaves
		if len(r.spill) <= keep {
			break
		}
		if e>>2 == least {
			delete(r.spill, k)
		}
	}
}

// failType fails a value of type t that n's type keyword does not take;
// its message is written only for a failure the reporter takes.
//
//go:noinline
func (r *nativeRun) failType(n *native, t jsonTypes) {
	r.valid = false
	if r.wants() {
		r.rep.Add(r.path.Pointer(), msgType(n.typeNames, typeName(t)))
	}
}

// combinators checks n's not, allOf, anyOf and oneOf, in the library's
// order and with its failures: allOf's are its schemas' own; not, anyOf
// and oneOf fail with one message at the value, and their schemas are
// only asked whether they match (matches), which builds no failure.
func (r *nativeRun) combinators(n *combinators, v jsonbody.Value) {
	if n.not != nil && r.matches(n.not, v) {
		r.fail(msgNot)
	}
	for _, s := range n.allOf {
		r.validate(s, v)
	}
	if n.anyOf != nil && !r.matchesAny(n.anyOf, v) {
		r.fail(msgAnyOf)
	}
	if n.oneOf != nil {
		matched := 0
		for _, s := range n.oneOf {
			if r.matches(s, v) {
				if matched++; matched > 1 {
					break
				}
			}
		}
		switch matched {
		case 0:
			r.fail(msgOneOf)
		case 2:
			r.fail(msgOneOfSeveral)
		}
	}
	if n.ifs != nil {
		switch then := r.matches(n.ifs, v); {
		case then && n.then != nil:
			r.validate(n.then, v)
		case !then && n.els != nil:
			r.validate(n.els, v)
		}
	}
}

// containsOne reports whether an item of arr matches n.
func (r *nativeRun) containsOne(n *native, arr jsonbody.Value) bool {
	for i := range arr.Len() {
		if r.matches(n, arr.Index(i)) {
			return true
		}
	}
	return false
}

// matchesAny reports whether v matches one of ns.
func (r *nativeRun) matchesAny(ns []*native, v jsonbody.Value) bool {
	for _, n := range ns {
		if r.matches(n, v) {
			return true
		}
	}
	return false
}

// matches reports whether v matches n, its failures told to no one: the
// run's reporter and verdict are set aside meanwhile. It stops at the
// first failure, as the library does where it asks only for a verdict
// (not, if): a schema that applies itself twice to a member would
// otherwise cost time exponential in the body's depth where the
// library's is linear.
func (r *nativeRun) matches(n *native, v jsonbody.Value) bool {
	rep, valid, quick, full := r.rep, r.valid, r.quick, r.full
	r.rep, r.valid, r.quick = failure.Discard, true, true
	r.validate(n, v)
	ok := r.valid
	r.rep, r.valid, r.quick, r.full = rep, valid, quick, full
	return ok
}

func (r *nativeRun) object(n *native, obj jsonbody.Value) {
	count := obj.Len()
	r.calls += count // the members' names are looked up, or matched
	if n.minProps >= 0 && count < n.minProps {
		r.fail(n.msgs.minProps)
	}
	if n.maxProps >= 0 && count > n.maxProps {
		r.fail(n.msgs.maxProps)
	}
	var seen uint64 // the required names present, by bit
	for i := range count {
		name, v := obj.Member(i)
		r.calls += len(name) >> 4
		m := member{required: -1}
		if j := n.memberNames.Find(name); j >= 0 {
			m = n.members[j]
		}
		if m.required >= 0 {
			seen |= 1 << m.required
		}
		if m.schema == nil && n.folds != nil {
			r.foldCase(n, name)
		}
		if n.patterns != nil {
			r.patternMember(n, m, name, v)
			continue
		}
		child := m.schema
		if child == nil {
			switch {
			case n.additionalSchema != nil:
				child = n.additionalSchema
			case n.additional == -1:
				r.failAt(name, msgNotAllowed)
				continue
			default:
				continue
			}
		}
		if m.schema != nil {
			r.path.Segment(m.seg) // a declared name: its segment is ready
		} else {
			r.path.Member(name)
		}
		r.validate(child, v)
		r.path.Pop()
	}
	for i := range n.deps {
		r.dependency(&n.deps[i], obj)
	}
	if n.propertyNames != nil {
		for i := range count {
			if name := obj.MemberName(i); !r.matches(n.propertyNames, name) {
				r.valid = false
				if r.wants() {
					r.rep.Add(r.path.Pointer(), msgPropertyName(name.Str()))
				}
			}
		}
	}
	for i, name := range n.required {
		if i < 64 {
			if seen&(1<<i) != 0 {
				continue
			}
		} else if _, ok := obj.Get(name); ok {
			continue
		}
		r.failAtSegment(n.requiredSegs[i], msgRequired)
	}
}

// foldCase fails the member name, which is not one of n's properties,
// when it equals one of the names n declares (foldNames) under Unicode
// simple folding but none exactly (foldvocab.go), unless
// additionalProperties: false refuses it anyway. Only members not found
// among n's names come here: a valid body of declared names costs nothing
// more.
func (r *nativeRun) foldCase(n *native, name string) {
	if n.folds.exact[name] {
		return
	}
	var prop string
	var ok bool
	r.fold, prop, ok = n.folds.find(r.fold, name)
	if cap(r.fold) > 4<<10 {
		r.fold = nil // a long name's buffer is not kept in the pool
	}
	if !ok {
		return
	}
	if n.additional == -1 {
		taken := false
		for _, p := range n.patterns {
			taken = taken || p.re.MatchString(name)
		}
		if !taken {
			return // "is not allowed", by additionalProperties
		}
	}
	r.valid = false
	if r.wants() {
		r.rep.Add(r.path.Pointer(name), msgFoldCase(prop))
	}
}

// patternMember checks the member name, v of an object whose schema n has
// patternProperties, as the library does: by its property schema (m) and
// by each pattern its name matches, or, when neither takes it, by
// additionalProperties. (Apart from object's loop, which schemas without
// patterns take as before.)
func (r *nativeRun) patternMember(n *native, m member, name string, v jsonbody.Value) {
	taken := m.schema != nil
	if taken {
		r.path.Segment(m.seg)
		r.validate(m.schema, v)
		r.path.Pop()
	}
	for _, p := range n.patterns {
		if p.re.MatchString(name) {
			taken = true
			r.path.Member(name)
			r.validate(p.schema, v)
			r.path.Pop()
		}
	}
	switch {
	case taken:
	case n.additionalSchema != nil:
		r.path.Member(name)
		r.validate(n.additionalSchema, v)
		r.path.Pop()
	case n.additional == -1:
		r.failAt(name, msgNotAllowed)
	}
}

// dependency checks d on obj: when its member is present, the members it
// requires are, and obj matches its schema.
func (r *nativeRun) dependency(d *dependency, obj jsonbody.Value) {
	if _, ok := obj.Get(d.name); !ok {
		return
	}
	for i, name := range d.required {
		if _, ok := obj.Get(name); !ok {
			r.failAtSegment(d.requiredSegs[i], d.msg)
		}
	}
	if d.schema != nil {
		r.validate(d.schema, obj)
	}
}

func (r *nativeRun) array(n *native, arr jsonbody.Value) {
	count := arr.Len()
	if n.minItems >= 0 && count < n.minItems {
		r.fail(n.msgs.minItems)
	}
	if n.maxItems >= 0 && count > n.maxItems {
		r.fail(n.msgs.maxItems)
	}
	if n.contains != nil && !r.containsOne(n.contains, arr) {
		r.fail(msgContains)
	}
	r.items(n, arr, count)
	if n.uniqueItems && count > 1 {
		r.calls += weight(arr, r.budget-r.calls)
		if j, i, dup := duplicate(arr); dup {
			r.valid = false
			if r.wants() { // the message is written only for a failure listed
				r.rep.Add(r.path.Pointer(), msgUniqueItems(j, i))
			}
		}
	}
}

// items checks the items of arr by items (one schema for all, or a list
// for the first ones) and additionalItems (for the rest: the library
// compiles it beside a list only).
func (r *nativeRun) items(n *native, arr jsonbody.Value, count int) {
	checked := 0
	switch {
	case n.items != nil:
		checked = count
		r.path.Index(0)
		for i := range count {
			r.path.SetIndex(i)
			r.validate(n.items, arr.Index(i))
		}
		r.path.Pop()
	case n.tuple != nil:
		checked = min(count, len(n.tuple))
		r.path.Index(0)
		for i := range checked {
			r.path.SetIndex(i)
			r.validate(n.tuple[i], arr.Index(i))
		}
		r.path.Pop()
	}
	switch {
	case n.additionalItems == -1 && checked < count:
		r.valid = false
		if r.wants() {
			r.rep.Add(r.path.Pointer(), msgAdditionalItems(count-checked))
		}
	case n.additionalItemsSchema != nil && checked < count:
		r.path.Index(checked)
		for i := checked; i < count; i++ {
			r.path.SetIndex(i)
			r.validate(n.additionalItemsSchema, arr.Index(i))
		}
		r.path.Pop()
	}
}

// formatOK reports whether s is of n's format. A format's check reads
// the string, a unit a 16 bytes as a pattern's match; but format regex
// compiles it, at hundreds of nanoseconds a byte (thousands for Unicode
// classes), and is charged 8 units a byte, so that a long one checked
// again and again before memo is on is compiled about one walk's worth
// (TestNative_SchemaMetTwiceBoundedWork_RegexFormat).
func (r *nativeRun) formatOK(n *native, s string) bool {
	if n.formatRE {
		r.calls += len(s) << 3
	} else {
		r.calls += len(s) >> 4
	}
	return n.formatOK(s)
}

func (r *nativeRun) str(n *native, s string) {
	r.calls += len(s) >> 4
	if n.minLength >= 0 || n.maxLength >= 0 {
		l := utf8.RuneCountInString(s)
		if n.minLength >= 0 && l < n.minLength {
			r.fail(n.msgs.minLength)
		}
		if n.maxLength >= 0 && l > n.maxLength {
			r.fail(n.msgs.maxLength)
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		r.fail(n.msgs.pattern)
	}
}

func (r *nativeRun) number(n *native, x string) {
	r.calls += len(x) >> 2 // exact arithmetic on a long literal
	if n.minimum != nil && compare(x, n.minimum) < 0 {
		r.fail(n.msgs.minimum)
	}
	if n.maximum != nil && compare(x, n.maximum) > 0 {
		r.fail(n.msgs.maximum)
	}
	if n.exclusiveMinimum != nil && compare(x, n.exclusiveMinimum) <= 0 {
		r.fail(n.msgs.exclusiveMinimum)
	}
	if n.exclusiveMaximum != nil && compare(x, n.exclusiveMaximum) >= 0 {
		r.fail(n.msgs.exclusiveMaximum)
	}
	if n.multipleOf != nil && !multipleOf(x, n.multipleOf) {
		r.fail(n.msgs.multipleOf)
	}
}

// weight is what comparing v with other values may cost, in checks: one
// for each value in it and one for each 16 bytes of its text, counted up
// to a little past limit.
func weight(v jsonbody.Value, limit int) int {
	switch v.Kind() {
	case jsonbody.String:
		return 1 + len(v.Str())>>4
	case jsonbody.Number:
		return 1 + len(v.Number())>>2
	case jsonbody.Array:
		w := 1
		for i := 0; i < v.Len() && w <= limit; i++ {
			w += weight(v.Index(i), limit-w)
		}
		return w
	case jsonbody.Object:
		w := 1
		for i := 0; i < v.Len() && w <= limit; i++ {
			name, e := v.Member(i)
			w += 1 + len(name)>>4 + weight(e, limit-w)
		}
		return w
	}
	return 1
}
