package learn

import (
	"cmp"
	"container/heap"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/contractguard/contractguard/internal/jsonbody"
)

// Learner learns the shapes of request bodies, per method and route, from
// the requests it is shown. It is safe for concurrent use.
type Learner struct {
	lim       Limits
	threshold uint64 // Sample picks when a random uint64 is below it
	always    bool

	mu      sync.Mutex
	o       *Observations
	heap    maxHeap[*route] // the routes, for the routes cap
	t       templater
	name    []byte
	members []member
}

// member is a member of an object being observed, for the Properties cap.
type member struct {
	data bool // named like data: observed after every other member
	hash uint64
	name string
	v    jsonbody.Value
}

// New returns a Learner with the given limits (zero fields: defaults).
func New(lim Limits) *Learner {
	lim = lim.withDefaults()
	l := &Learner{lim: lim, o: newObservations(lim)}
	if lim.SampleRate >= 1 {
		l.always = true
	} else {
		l.threshold = uint64(lim.SampleRate * math.MaxUint64)
	}
	return l
}

// Limits is the learner's limits, defaults filled in.
func (l *Learner) Limits() Limits { return l.lim }

// Sample reports whether a request should be observed, at Limits.SampleRate.
// It takes no lock and allocates nothing.
func (l *Learner) Sample() bool {
	return l.always || rand.Uint64() < l.threshold
}

// Observe learns from one request: its method, the router's pattern for it
// when known ("" otherwise: the route is then inferred from the path), its
// path as received (r.URL.EscapedPath(); it is read as the guard reads
// paths), its parsed body (jsonbody.NullDoc().Root() for an empty body)
// and when it came. The body is not kept: what is kept is its shape and
// the strings that may be enum values (see the package documentation).
func (l *Learner) Observe(method, pattern, path string, body jsonbody.Value, at time.Time) {
	at = at.Round(0).UTC()
	l.mu.Lock()
	defer l.mu.Unlock()
	defer l.release()
	o := l.o
	o.samples++
	name, router, ok := l.t.appendRoute(l.name[:0], method, pattern, path)
	l.name = name
	if !ok {
		return
	}
	r := o.routes[string(name)]
	if r == nil {
		if r = l.addRoute(string(name)); r == nil {
			return
		}
	}
	r.samples++
	r.router = r.router || router
	if r.first.IsZero() || at.Before(r.first) {
		r.first = at
	}
	if at.After(r.last) {
		r.last = at
	}
	if r.body == nil { // the first sample, or the body was dropped by the bytes cap
		h := mix(r.key.hash, edgeBody, "")
		if !belowCut(r.cut, 0, h, func() string { return "" }) {
			return
		}
		root := newNode(nil, edgeBody, "", h)
		r.body = root
		l.account(r, root)
		if root.gone {
			return
		}
	}
	l.visit(r, r.body, body, false)
}

// maxBuffer is the most items a buffer of the learner keeps between
// requests: one request may need far more (a path of 100,000 segments).
const maxBuffer = 1 << 12

// release keeps nothing of a request's body or path past Observe, however
// it returned (a refused route too), and no buffer one request grew large.
func (l *Learner) release() {
	clear(l.members[:cap(l.members)])
	clear(l.t.segs[:cap(l.t.segs)])
	clear(l.name[:cap(l.name)]) // the route name: a path's static segments as they came
	if cap(l.members) > maxBuffer {
		l.members = nil
	}
	if cap(l.t.segs) > maxBuffer {
		l.t.segs = nil
	}
	if cap(l.name) > maxBuffer {
		l.name = nil
	}
}

// addRoute adds a route under the routes cap, or returns nil when the cap
// refuses it.
func (l *Learner) addRoute(name string) *route {
	o := l.o
	k := keyOfRoute(name)
	if o.routeCut != nil && compareRoutes(k, *o.routeCut) >= 0 {
		return nil
	}
	method, template, _ := strings.Cut(name, " ")
	r := &route{method: method, template: template, key: k}
	r.bytes = routeCharge(r)
	o.routes[name] = r
	heap.Push(&l.heap, r)
	if l.heap.Len() > l.lim.Routes {
		last := heap.Pop(&l.heap).(*route)
		delete(o.routes, last.key.name)
		o.routeCut = minRoute(o.routeCut, &last.key)
		if last == r {
			return nil
		}
	}
	return r
}

// visit observes v at n, a node kept.
func (l *Learner) visit(r *route, n *node, v jsonbody.Value, secret bool) {
	n.seen++
	switch v.Kind() {
	case jsonbody.Null:
		n.nulls++
	case jsonbody.False, jsonbody.True:
		n.bools++
	case jsonbody.Number:
		integral, negative := number(v.Number())
		if integral {
			n.ints++
		} else {
			n.fracs++
		}
		if negative {
			n.negs++
		}
	case jsonbody.String:
		l.observeString(r, n, v.Str(), secret)
	case jsonbody.Array:
		n.arrs++
		if n.depth >= l.lim.Depth {
			n.deep++
			return
		}
		for i := range v.Len() {
			c := l.child(r, n, edgeItems, "")
			if c == nil {
				return // refused by the bytes cap: every element would be
			}
			l.visit(r, c, v.Index(i), secret)
		}
	case jsonbody.Object:
		n.objs++
		if n.depth >= l.lim.Depth {
			n.deep++
			return
		}
		base := len(l.members)
		for _, m := range l.selectMembers(n, v) {
			c := n.members[m.name]
			switch {
			case c != nil:
				l.visit(r, c, m.v, secret || c.secret)
			case dataName(m.name):
				if c = l.child(r, n, edgeDynamic, ""); c != nil {
					l.visit(r, c, m.v, secret || secretName(m.name))
				}
			default:
				if c = l.child(r, n, edgeMember, m.name); c != nil {
					l.visit(r, c, m.v, secret || c.secret)
				}
			}
		}
		l.members = l.members[:base]
	}
}

// selectMembers is the members of an object to observe: all of them, or
// past Limits.Properties those whose names hash smallest, members named
// like data after every other, the rest counted as skipped. The choice
// depends on the object alone, never on other samples. So a member
// skipped is never written with a type it was not seen with: Properties
// members of smaller hash were observed beside it, and the schema writes
// the Properties of smallest hash (members named like data share one
// node, so they could not have stood for them). The members are pushed on
// l.members, which the caller pops.
func (l *Learner) selectMembers(n *node, v jsonbody.Value) []member {
	base := len(l.members)
	for i := range v.Len() {
		name, val := v.Member(i)
		l.members = append(l.members, member{name: name, v: val})
	}
	ms := l.members[base:]
	if len(ms) <= l.lim.Properties {
		return ms
	}
	for i := range ms {
		ms[i].data = dataName(ms[i].name)
		ms[i].hash = mix(n.hash, edgeMember, ms[i].name)
	}
	slices.SortFunc(ms, func(a, b member) int {
		if a.data != b.data {
			if b.data {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(a.hash, b.hash); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	n.skipped += int64(len(ms) - l.lim.Properties)
	return ms[:l.lim.Properties]
}

// observeString observes a string at n.
func (l *Learner) observeString(r *route, n *node, s string, secret bool) {
	n.strs++
	e := n.enum
	enumOpen := !secret && (e == nil || !e.over)
	need := n.formats
	if enumOpen {
		need = allFormats // a candidate must match no format
	}
	var matched uint8
	if need != 0 {
		matched = formatsOf(s, need)
	}
	n.formats &= matched
	if !enumOpen {
		return
	}
	if e == nil {
		e = &enum{}
		n.enum = e
	}
	if candidate(s, matched) {
		e.observe(s, l.lim.EnumValues)
	} else {
		e.setOver()
	}
	l.account(r, n)
}

// child is the child of p along an edge, made if it is new and the bytes
// cap allows; nil if refused.
func (l *Learner) child(r *route, p *node, kind byte, name string) *node {
	if p.gone {
		return nil
	}
	var c *node
	switch kind {
	case edgeMember:
		c = p.members[name]
	case edgeDynamic:
		c = p.dynamic
	default:
		c = p.items
	}
	if c != nil {
		return c
	}
	h := mix(p.hash, kind, name)
	if !belowCut(r.cut, p.depth+1, h, func() string { return string(appendEdge([]byte(p.path()), kind, name)) }) {
		return nil
	}
	c = newNode(p, kind, strings.Clone(name), h)
	l.account(r, c)
	if c.gone {
		return nil
	}
	return c
}

// account charges a new or grown node to its route, then drops the nodes
// whose keys come last until the route is within its budget.
func (l *Learner) account(r *route, n *node) {
	if n.gone {
		return
	}
	charge := n.chargeFor(l.lim.EnumValues)
	if n.hidx < 0 {
		heap.Push(&r.heap, n)
	}
	r.bytes += charge - n.charge
	n.charge = charge
	budget := l.lim.routeBudget()
	for r.bytes > budget && r.heap.Len() > 0 {
		last := heap.Pop(&r.heap).(*node)
		last.detach(r)
		last.gone = true
		r.bytes -= last.charge
		r.cut = minCut(r.cut, last.cut())
	}
}

// Bytes is the memory the learner accounts for its state: at most
// Limits.MaxBytes, plus the learner's own fixed buffers.
func (l *Learner) Bytes() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b int64
	for _, r := range l.o.routes {
		b += r.bytes
	}
	return b
}

// Export is a snapshot of what the learner has learned, for Merge,
// Contracts and the exchange format.
func (l *Learner) Export() *Observations {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.o.clone()
}
