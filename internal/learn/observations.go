package learn

import (
	"maps"
	"slices"
	"strings"
)

// Observations is what one learner, or several merged, observed: per
// route, counts, flags and bounded sets, never a request's values but the
// repeated enum candidates. It is the exchange format between replicas
// (MarshalJSON), what Merge combines, and what Contracts infers from.
// An Observations is not changed once made; it is safe for concurrent
// reads.
type Observations struct {
	limits   Limits
	samples  int64 // requests observed, learned from or not
	routeCut *routeKey
	routes   map[string]*route // by "METHOD template"
}

func newObservations(lim Limits) *Observations {
	return &Observations{limits: lim, routes: map[string]*route{}}
}

// Limits is the limits the observations were made under.
func (o *Observations) Limits() Limits { return o.limits }

// Samples is the number of requests observed.
func (o *Observations) Samples() int64 { return o.samples }

// Dropped is the number of requests observed but not learned from: their
// route was over Limits.Routes, or could not be learned from (its template
// was too long, its method not a token).
func (o *Observations) Dropped() int64 {
	kept := int64(0)
	for _, r := range o.routes {
		kept = addCounts(kept, r.samples)
	}
	return o.samples - kept
}

// Routes is the number of routes kept.
func (o *Observations) Routes() int { return len(o.routes) }

func (o *Observations) clone() *Observations {
	c := newObservations(o.limits)
	c.samples = o.samples
	if o.routeCut != nil {
		k := *o.routeCut
		c.routeCut = &k
	}
	for name, r := range o.routes {
		c.routes[name] = r.clone()
	}
	return c
}

func (r *route) clone() *route {
	c := &route{method: r.method, template: r.template, key: r.key, router: r.router,
		samples: r.samples, first: r.first, last: r.last, bytes: r.bytes, hidx: -1}
	if r.cut != nil {
		k := *r.cut
		c.cut = &k
	}
	if r.body != nil {
		c.body = r.body.copyInto(nil, edgeBody, "")
	}
	return c
}

// Merge combines what two sets of observations saw: the result is exactly
// what one learner would hold had it seen the requests of both (up to the
// random points of the shares of values seen fewer than revealAt times),
// so Merge is associative and commutative, and N replicas' exports merged
// in any order give the same Contracts. Exports made under different
// Limits are merged under the stricter of each; that is exact but for
// Properties, which each learner applied to each sample. a and b are left
// as they are.
func Merge(a, b *Observations) *Observations {
	o := newObservations(meet(a.limits, b.limits))
	o.samples = addCounts(a.samples, b.samples)
	o.routeCut = minRoute(a.routeCut, b.routeCut)
	for _, src := range []*Observations{a, b} {
		for name, r := range src.routes {
			if mine := o.routes[name]; mine != nil {
				mine.add(r)
			} else {
				o.routes[name] = r.clone()
			}
		}
	}
	o.normalize()
	return o
}

// add adds what another observation of the same route saw.
func (r *route) add(src *route) {
	r.samples = addCounts(r.samples, src.samples)
	r.router = r.router || src.router
	if r.first.IsZero() || !src.first.IsZero() && src.first.Before(r.first) {
		r.first = src.first
	}
	if src.last.After(r.last) {
		r.last = src.last
	}
	r.cut = minCut(r.cut, src.cut)
	switch {
	case src.body == nil:
	case r.body == nil:
		r.body = src.body.copyInto(nil, edgeBody, "")
	default:
		r.body.add(src.body)
	}
}

// normalize applies the limits: the routes cap, then each route's depth,
// enum and bytes caps, as a learner applies them as it goes. Every cap
// keeps a prefix of a fixed order of keys and moves its threshold only
// down, which is why applying it to a union gives what one learner keeps.
func (o *Observations) normalize() {
	lim := o.limits
	for name, r := range o.routes {
		if o.routeCut != nil && compareRoutes(r.key, *o.routeCut) >= 0 {
			delete(o.routes, name)
		}
	}
	if len(o.routes) > lim.Routes {
		rs := slices.SortedFunc(maps.Values(o.routes), func(a, b *route) int { return compareRoutes(a.key, b.key) })
		for _, r := range rs[lim.Routes:] {
			delete(o.routes, r.key.name)
		}
		o.routeCut = minRoute(o.routeCut, &rs[lim.Routes].key)
	}
	for _, r := range o.routes {
		o.normalizeRoute(r)
	}
}

func (o *Observations) normalizeRoute(r *route) {
	lim := o.limits
	r.bytes = routeCharge(r)
	if r.cut != nil && r.cut.depth > lim.Depth {
		r.cut = nil // below the depth limit: a learner with it never cut there
	}
	if r.body == nil {
		return
	}
	if !belowCut(r.cut, 0, r.body.hash, r.body.path) {
		r.body = nil
		return
	}
	var nodes []*node
	var walk func(n *node, secret bool)
	walk = func(n *node, secret bool) {
		nodes = append(nodes, n)
		if n.depth >= lim.Depth {
			n.members, n.dynamic, n.items = nil, nil, nil
			n.deep = n.arrs + n.objs
		}
		if secret {
			n.enum = nil
		}
		if e := n.enum; e != nil && !e.over && e.held() > lim.EnumValues {
			e.setOver()
		}
		var kids []*node
		n.children(func(c *node) { kids = append(kids, c) })
		for _, c := range kids {
			if !belowCut(r.cut, c.depth, c.hash, c.path) {
				c.detach(r)
				continue
			}
			walk(c, secret || c.secret)
		}
	}
	walk(r.body, false)
	total := r.bytes
	for _, n := range nodes {
		n.charge = n.chargeFor(lim.EnumValues)
		total += n.charge
	}
	if total > lim.routeBudget() {
		slices.SortFunc(nodes, compareNodes)
		total = r.bytes
		for i, n := range nodes {
			if total+n.charge > lim.routeBudget() {
				r.cut = minCut(r.cut, n.cut())
				for _, m := range nodes[i:] {
					m.detach(r)
				}
				nodes = nodes[:i]
				break
			}
			total += n.charge
		}
	}
	r.bytes = total
}

// sortedRoutes is the routes in name order.
func (o *Observations) sortedRoutes() []*route {
	return slices.SortedFunc(maps.Values(o.routes), func(a, b *route) int {
		return strings.Compare(a.key.name, b.key.name)
	})
}
