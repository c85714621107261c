package learn

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// node is what was observed at one place of the bodies of one route: how
// often each kind of value was there, and what the strings, numbers,
// objects and arrays had in common. It holds no value but repeated enum
// candidates (see enum).
type node struct {
	seen    int64 // values observed here
	nulls   int64
	bools   int64
	ints    int64 // numbers with an integral value (1, 1.0, 1e2)
	fracs   int64 // other numbers
	negs    int64 // numbers below zero
	strs    int64
	arrs    int64
	objs    int64
	deep    int64 // objects and arrays at Limits.Depth, not looked into
	skipped int64 // members not observed: over Limits.Properties in one object

	formats uint8 // the formats every string here matched (all while strs == 0)
	enum    *enum // nil: no candidate yet

	members map[string]*node
	dynamic *node // every member whose name looks like data
	items   *node // every element of every array

	parent *node
	kind   byte // the edge from the parent
	name   string
	secret bool // a member whose name looks secret
	depth  int
	hash   uint64

	// The learner's accounting.
	charge int64 // bytes
	hidx   int   // index in the route's heap
	gone   bool  // dropped by the bytes cap
}

// route is what was observed for one method and route template.
type route struct {
	method   string
	template string
	key      routeKey
	router   bool // the template is the router's pattern
	samples  int64
	first    time.Time
	last     time.Time
	cut      *cutKey // the bytes cap's threshold
	body     *node   // nil before the first sample, or dropped by the bytes cap

	// The learner's accounting.
	bytes int64
	heap  maxHeap[*node]
	hidx  int
}

// Accounted sizes, in bytes: upper bounds of what each part holds on the
// heap (a node and its slot in its parent's map; a candidate of an enum,
// with its shares; a route with its strings), checked by
// TestMemoryWithinCap against the runtime's own count.
const (
	nodeBytes  = 512
	candBytes  = 512
	routeBytes = 640
)

// charge is the bytes a node is accounted for. It never decreases as the
// node sees more (an enum whose candidates are dropped keeps the charge of
// a full set): the bytes cap is exact only for charges that only grow.
func (n *node) chargeFor(enumValues int) int64 {
	c := int64(nodeBytes + len(n.name))
	if e := n.enum; e != nil {
		if e.over {
			c += int64(enumValues) * candBytes
		} else {
			c += int64(len(e.values)+len(e.pending)) * candBytes
		}
	}
	return c
}

func routeCharge(r *route) int64 { return int64(routeBytes + 2*len(r.key.name)) }

// path is the node's path (see appendEdge).
func (n *node) path() string {
	var chain []*node
	for m := n; m.parent != nil; m = m.parent {
		chain = append(chain, m)
	}
	var b []byte
	for i := len(chain) - 1; i >= 0; i-- {
		b = appendEdge(b, chain[i].kind, chain[i].name)
	}
	return string(b)
}

func (n *node) cut() *cutKey { return &cutKey{n.depth, n.hash, n.path()} }

func compareNodes(a, b *node) int {
	if c := cmp.Compare(a.depth, b.depth); c != 0 {
		return c
	}
	if c := cmp.Compare(a.hash, b.hash); c != 0 {
		return c
	}
	return strings.Compare(a.path(), b.path())
}

// belowCut reports whether a node (or the child about to be made, of the
// given depth, hash and path) comes before the cut.
func belowCut(c *cutKey, depth int, hash uint64, path func() string) bool {
	if c == nil {
		return true
	}
	if depth != c.depth {
		return depth < c.depth
	}
	if hash != c.hash {
		return hash < c.hash
	}
	return path() < c.path
}

func newNode(parent *node, kind byte, name string, hash uint64) *node {
	n := &node{parent: parent, kind: kind, name: name, hash: hash, formats: allFormats, hidx: -1,
		secret: kind == edgeMember && secretName(name)}
	if parent != nil {
		n.depth = parent.depth + 1
		switch kind {
		case edgeMember:
			if parent.members == nil {
				parent.members = map[string]*node{}
			}
			parent.members[name] = n
		case edgeDynamic:
			parent.dynamic = n
		case edgeItems:
			parent.items = n
		}
	}
	return n
}

// detach removes a node from its parent (or its route).
func (n *node) detach(r *route) {
	switch p := n.parent; {
	case p == nil:
		r.body = nil
	case n.kind == edgeMember:
		delete(p.members, n.name)
	case n.kind == edgeDynamic:
		p.dynamic = nil
	default:
		p.items = nil
	}
}

// children calls f for each child, members in name order.
func (n *node) children(f func(*node)) {
	if len(n.members) > 0 {
		for _, name := range slices.Sorted(maps.Keys(n.members)) {
			f(n.members[name])
		}
	}
	if n.dynamic != nil {
		f(n.dynamic)
	}
	if n.items != nil {
		f(n.items)
	}
}

// addCounts is a+b, two counts (never negative), held at math.MaxInt64:
// an export says at most maxCount of each, but learn merge adds any
// number of exports, and 1,025 of 2^53 wrapped to a negative count.
func addCounts(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// add adds what src observed to n, which has the same path.
func (n *node) add(src *node) {
	n.seen = addCounts(n.seen, src.seen)
	n.nulls = addCounts(n.nulls, src.nulls)
	n.bools = addCounts(n.bools, src.bools)
	n.ints = addCounts(n.ints, src.ints)
	n.fracs = addCounts(n.fracs, src.fracs)
	n.negs = addCounts(n.negs, src.negs)
	n.strs = addCounts(n.strs, src.strs)
	n.arrs = addCounts(n.arrs, src.arrs)
	n.objs = addCounts(n.objs, src.objs)
	n.deep = addCounts(n.deep, src.deep)
	n.skipped = addCounts(n.skipped, src.skipped)
	n.formats &= src.formats
	n.enum = mergeEnums(n.enum, src.enum)
	for name, c := range src.members {
		if mine := n.members[name]; mine != nil {
			mine.add(c)
		} else {
			c.copyInto(n, edgeMember, name)
		}
	}
	if src.dynamic != nil {
		if n.dynamic != nil {
			n.dynamic.add(src.dynamic)
		} else {
			src.dynamic.copyInto(n, edgeDynamic, "")
		}
	}
	if src.items != nil {
		if n.items != nil {
			n.items.add(src.items)
		} else {
			src.items.copyInto(n, edgeItems, "")
		}
	}
}

// copyInto makes a deep copy of n as a child of parent (nil: a body, whose
// hash is then n's).
func (n *node) copyInto(parent *node, kind byte, name string) *node {
	hash := n.hash
	if parent != nil {
		hash = mix(parent.hash, kind, name)
	}
	c := newNode(parent, kind, name, hash)
	c.seen, c.nulls, c.bools, c.ints, c.fracs, c.negs = n.seen, n.nulls, n.bools, n.ints, n.fracs, n.negs
	c.strs, c.arrs, c.objs, c.deep, c.skipped = n.strs, n.arrs, n.objs, n.deep, n.skipped
	c.formats = n.formats
	c.enum = n.enum.clone()
	for name, m := range n.members {
		m.copyInto(c, edgeMember, name)
	}
	if n.dynamic != nil {
		n.dynamic.copyInto(c, edgeDynamic, "")
	}
	if n.items != nil {
		n.items.copyInto(c, edgeItems, "")
	}
	return c
}

// walk calls f for n and every node below it.
func (n *node) walk(f func(*node)) {
	f(n)
	for _, m := range n.members {
		m.walk(f)
	}
	if n.dynamic != nil {
		n.dynamic.walk(f)
	}
	if n.items != nil {
		n.items.walk(f)
	}
}

// maxHeap is a max-heap that keeps each item's place in it (so an item
// can be found and removed): of a route's nodes by key, for the bytes cap
// to drop the last; of the routes by key, for the routes cap. The zero
// maxHeap is empty and ready.
type maxHeap[T heapItem[T]] struct{ items []T }

// heapItem is what a maxHeap holds: an item that is told its place, and
// says which of two leaves first.
type heapItem[T any] interface {
	setHeapIndex(int)
	leavesBefore(T) bool
}

func (n *node) setHeapIndex(i int)          { n.hidx = i }
func (n *node) leavesBefore(m *node) bool   { return compareNodes(n, m) > 0 }
func (r *route) setHeapIndex(i int)         { r.hidx = i }
func (r *route) leavesBefore(o *route) bool { return compareRoutes(r.key, o.key) > 0 }

func (h *maxHeap[T]) Len() int           { return len(h.items) }
func (h *maxHeap[T]) Less(i, j int) bool { return h.items[i].leavesBefore(h.items[j]) }
func (h *maxHeap[T]) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].setHeapIndex(i)
	h.items[j].setHeapIndex(j)
}
func (h *maxHeap[T]) Push(x any) {
	t := x.(T)
	t.setHeapIndex(len(h.items))
	h.items = append(h.items, t)
}
func (h *maxHeap[T]) Pop() any {
	last := len(h.items) - 1
	t := h.items[last]
	var zero T
	h.items[last] = zero
	h.items = h.items[:last]
	t.setHeapIndex(-1)
	return t
}
