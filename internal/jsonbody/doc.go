package jsonbody

import (
	"encoding/json"
	"slices"
	"sync"
	"unsafe"
)

// Kind is the kind of a JSON value.
type Kind uint8

// The kinds of JSON values.
const (
	Null Kind = iota
	False
	True
	Number
	String
	Array
	Object
)

// Doc is a parsed body: a tape of nodes over its bytes. Strings without
// escapes are not copied: they point into the body, which must not change
// for as long as the Doc or any string from it is in use.
type Doc struct {
	raw   []byte
	nodes []node
	kids  []uint32 // the children of containers, contiguous per container
	text  []byte   // strings that had escapes, unescaped
	root  uint32

	once sync.Once
	tree any // the generic value, built on first use

	built *built // what the checks build on first use; nil until then
}

// built is what a Doc builds on first use, for the goroutine that checks
// the request, without a lock (see Get). Apart from the Doc, so that a
// small body's Doc, which the request's state holds, stays small.
type built struct {
	index  map[uint32]map[string]uint32 // name lookup of large objects (Get)
	sorted map[uint32][]string          // member names of large objects in order (SortedNames)
	spans  []uint32                     // each value's start and end in raw (Raw)
}

// builtOnce is d's built, made on first use.
func (d *Doc) builtOnce() *built {
	if d.built == nil {
		d.built = &built{}
	}
	return d.built
}

// node is one value. For a string or number, start and end delimit its
// text (in text for an escaped string, else in raw); for an array or
// object, start is its first entry in kids and end the number of entries
// (two per object member: the name's node and the value's).
type node struct {
	kind    Kind
	escaped bool
	name    bool // a member name, whose value is the next node
	word    bool // a member name of ASCII letters and digits only, or empty
	start   uint32
	end     uint32
}

var nullDoc = &Doc{nodes: []node{{kind: Null}}}

// NullDoc is the document of an empty body: null.
func NullDoc() *Doc { return nullDoc }

// Root is the value of the whole document.
func (d *Doc) Root() Value { return Value{d, d.root} }

// Any is the document as the generic Go value: map[string]any, []any,
// string, json.Number, bool or nil. It is built once, on first use, and
// safe for concurrent use.
func (d *Doc) Any() any {
	if d.nodes[d.root].kind < Array {
		return d.Root().Any()
	}
	d.once.Do(func() { d.tree = d.Root().Any() })
	return d.tree
}

func (d *Doc) str(i uint32) string {
	n := d.nodes[i]
	b := d.raw
	if n.escaped {
		b = d.text
	}
	if n.start == n.end {
		return ""
	}
	return unsafe.String(&b[n.start], n.end-n.start)
}

// Size is the length of the document's text, in bytes.
func (d *Doc) Size() int { return len(d.raw) }

// Nodes is the number of values in the document, member names included:
// Node(0) to Node(Nodes()-1) are every one of them, in the order of the
// body, each container before what it holds and each member name just
// before its value.
func (d *Doc) Nodes() int { return len(d.nodes) }

// Node is value i in the order of Nodes.
func (d *Doc) Node(i int) Value { return Value{d, uint32(i)} }

// Value is a value in a Doc. The zero Value is not valid.
type Value struct {
	d *Doc
	i uint32
}

// Pos is the value's place among the document's values: i for Node(i).
func (v Value) Pos() int { return int(v.i) }

// Kind is the kind of the value.
func (v Value) Kind() Kind { return v.d.nodes[v.i].kind }

// IsName reports a member name (a string, seen only through Doc.Node).
func (v Value) IsName() bool { return v.d.nodes[v.i].name }

// IsWord reports a member name of ASCII letters and digits only, or
// empty, told as the name was read.
func (v Value) IsWord() bool { return v.d.nodes[v.i].word }

// Str is the text of a string (not copied: see Doc).
func (v Value) Str() string { return v.d.str(v.i) }

// Number is the literal of a number, exactly as in the body.
func (v Value) Number() string { return v.d.str(v.i) }

// Len is the number of elements of an array or members of an object.
func (v Value) Len() int {
	n := v.d.nodes[v.i]
	if n.kind == Object {
		return int(n.end / 2)
	}
	return int(n.end)
}

// Index is element i of an array.
func (v Value) Index(i int) Value {
	return Value{v.d, v.d.kids[v.d.nodes[v.i].start+uint32(i)]}
}

// Member is member i of an object, in the order of the body.
func (v Value) Member(i int) (string, Value) {
	k := v.d.kids[v.d.nodes[v.i].start+2*uint32(i):]
	return v.d.str(k[0]), Value{v.d, k[1]}
}

// MemberName is the name of member i of an object as a value: a string
// (IsName), which the schema's propertyNames checks.
func (v Value) MemberName(i int) Value {
	return Value{v.d, v.d.kids[v.d.nodes[v.i].start+2*uint32(i)]}
}

// bigObject is the size from which objects get a name index for Get.
const bigObject = 16

// Get is the member of an object with the given name. On an object of
// more than bigObject members it builds, on first use, a name index kept
// in the Doc without a lock: Get is for the one goroutine that checks a
// request (the scan, the schema and the rules), not for handlers, which
// see the generic tree of Doc.Any.
func (v Value) Get(name string) (Value, bool) {
	n := v.d.nodes[v.i]
	kids := v.d.kids[n.start : n.start+n.end]
	if n.end/2 <= bigObject {
		for j := 0; j < len(kids); j += 2 {
			if v.d.str(kids[j]) == name {
				return Value{v.d, kids[j+1]}, true
			}
		}
		return Value{}, false
	}
	b := v.d.builtOnce()
	idx := b.index[v.i]
	if idx == nil {
		idx = make(map[string]uint32, n.end/2)
		for j := 0; j < len(kids); j += 2 {
			idx[v.d.str(kids[j])] = kids[j+1]
		}
		if b.index == nil {
			b.index = map[uint32]map[string]uint32{}
		}
		b.index[v.i] = idx
	}
	i, ok := idx[name]
	return Value{v.d, i}, ok
}

// GetReads is the sum of units(n) over the strings Get(name) reads whole,
// n their length: on an object of at most bigObject members, the names
// of name's length it compares with name, up to the one equal to it; on
// a larger one, name, which it hashes, and the name it finds, compared
// with name. (A rule's cost counts them: internal/expr.)
func (v Value) GetReads(name string, units func(n int) uint64) uint64 {
	n := v.d.nodes[v.i]
	kids := v.d.kids[n.start : n.start+n.end]
	if n.end/2 > bigObject {
		u := units(len(name))
		if _, ok := v.Get(name); ok {
			u += units(len(name))
		}
		return u
	}
	var u uint64
	for j := 0; j < len(kids); j += 2 {
		if k := v.d.str(kids[j]); len(k) == len(name) {
			if u += units(len(name)); k == name {
				break
			}
		}
	}
	return u
}

// SortedNames is the member names of an object in sorted order: the
// order CEL visits a map's keys in. On an object of more than bigObject
// members it is built once and kept in the Doc, as Get's index is: a
// rule that loops over a large object inside another loop would
// otherwise sort it again on every pass, work that CEL's cost limit
// does not count. The caller must not change the slice.
func (v Value) SortedNames() []string {
	n := v.d.nodes[v.i]
	big := n.end/2 > bigObject
	if big && v.d.built != nil {
		if names, ok := v.d.built.sorted[v.i]; ok {
			return names
		}
	}
	names := make([]string, n.end/2)
	for i := range names {
		names[i], _ = v.Member(i)
	}
	slices.Sort(names)
	if big {
		b := v.d.builtOnce()
		if b.sorted == nil {
			b.sorted = map[uint32][]string{}
		}
		b.sorted[v.i] = names
	}
	return names
}

// Any is the value as the generic Go value, built afresh.
func (v Value) Any() any {
	switch n := v.d.nodes[v.i]; n.kind {
	case Null:
		return nil
	case False:
		return false
	case True:
		return true
	case Number:
		return json.Number(v.d.str(v.i))
	case String:
		return v.d.str(v.i)
	case Array:
		a := make([]any, n.end)
		for i := range a {
			a[i] = v.Index(i).Any()
		}
		return a
	default:
		m := make(map[string]any, n.end/2)
		for i := range int(n.end / 2) {
			name, val := v.Member(i)
			m[name] = val.Any()
		}
		return m
	}
}
