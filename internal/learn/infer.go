package learn

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	paths "github.com/contractguard/contractguard/internal/route"
)

// Learned is the contract learned for one method and route: a draft to
// review, not a verdict.
type Learned struct {
	Method   string
	Endpoint string         // in contract syntax: /users/{userId}
	Schema   map[string]any // draft-07, JSON values (json.Number); nil when there is none to learn
	Samples  int64
	First    time.Time
	Last     time.Time
	// Notes says what was inferred and why, one line each, for the
	// reviewer: "/email: format email — all 412 strings match".
	Notes []string
}

// Route templates inferred from paths (not given by a router) may still
// hold values that did not look like values: /users/alice, /users/bob.
// When at least collapseMin routes differ only in one static segment, and
// they average at most collapseMaxMean samples each (identifiers are many
// and each seen a few times; resources such as /users and /orders are few
// and each seen often), that segment is taken for a parameter and their
// observations are merged. Done in Contracts, from observations merged
// exactly, so that every replica's share of the traffic counts.
const (
	collapseMin     = 10
	collapseMaxMean = 4
)

// group is the observations of one learned contract: one route, or several
// merged.
type group struct {
	method   string
	segs     []templateSegment
	router   bool
	samples  int64
	first    time.Time
	last     time.Time
	body     *node    // owned: a copy
	cutDepth int      // the least depth of a bytes-cap cut of its routes
	dropped  bool     // a route's body was dropped by the bytes cap
	routes   int      // the routes merged into it
	origins  []*route // the routes merged into it, as observed
	notes    []string
}

func (g *group) template() string { return joinTemplate(g.segs) }

// shape is the method and the template with parameter names left out: two
// contracts of one shape conflict.
func (g *group) shape() string { return g.method + " " + shapeOf(g.segs) }

// shapeOf is segments written as a template with parameter names left out.
func shapeOf(segs []templateSegment) string {
	var b strings.Builder
	for _, s := range segs {
		if s.param != "" {
			b.WriteString("/{}")
		} else {
			b.WriteString(string(appendStatic(nil, s.static)))
		}
	}
	return b.String()
}

// Contracts infers a contract for every route observed (after collapsing
// inferred parameters and merging routes of one shape), in endpoint then
// method order.
func (o *Observations) Contracts() []Learned {
	var gs []*group
	for _, r := range o.sortedRoutes() {
		segs, ok := parseTemplate(r.template)
		if !ok {
			continue // UnmarshalJSON and the learner write only valid templates
		}
		g := &group{method: r.method, segs: segs, router: r.router, samples: r.samples,
			first: r.first, last: r.last, cutDepth: math.MaxInt, routes: 1, origins: []*route{r}}
		if r.cut != nil {
			g.cutDepth = r.cut.depth
		}
		if r.body != nil {
			g.body = r.body.copyInto(nil, edgeBody, "")
		} else {
			g.dropped = r.samples > 0
		}
		gs = append(gs, g)
	}
	gs = mergeShapes(gs)
	for collapse(gs) {
		gs = mergeShapes(gs)
	}
	lim := o.limits.withDefaults()
	alsoApplied(gs, int64(lim.MaxBytes), lim.EnumValues)
	out := make([]Learned, 0, len(gs))
	for _, g := range gs {
		out = append(out, o.infer(g))
	}
	slices.SortFunc(out, func(a, b Learned) int {
		if c := strings.Compare(a.Endpoint, b.Endpoint); c != 0 {
			return c
		}
		return strings.Compare(a.Method, b.Method)
	})
	return out
}

// collapse turns into a parameter the static segment that sibling routes
// inferred from paths vary at (see collapseMin), at the first position
// where some do. It reports whether it changed anything: the caller merges
// the routes made one before the next call, so that routes collapsed at
// one position, now alike there, count as one at the next.
func collapse(gs []*group) bool {
	for i := 0; ; i++ {
		buckets := map[string][]*group{}
		longest := 0
		for _, g := range gs {
			longest = max(longest, len(g.segs))
			if g.router || i >= len(g.segs) || g.segs[i].param != "" {
				continue
			}
			// The rest by its shape: a parameter right after segment i was
			// named after it (/users/alice/{aliceId}), so its name differs
			// as segment i does.
			k := g.method + " " + joinTemplate(g.segs[:i]) + " * " + shapeOf(g.segs[i+1:])
			buckets[k] = append(buckets[k], g)
		}
		if i >= longest {
			return false
		}
		changed := false
		for _, k := range slices.Sorted(maps.Keys(buckets)) {
			b := buckets[k]
			samples := int64(0)
			for _, g := range b {
				samples = addCounts(samples, g.samples)
			}
			if len(b) < collapseMin || samples > collapseMaxMean*int64(len(b)) {
				continue
			}
			prev := ""
			if i > 0 && b[0].segs[i-1].param == "" {
				prev = b[0].segs[i-1].static
			}
			// The names are new to every route of the bucket, not only to
			// the first: the parameters after segment i are alike in shape,
			// not in name, where they are named after segment i or number
			// an id after it (/alice/{aliceId}/{id} and /~/{id}/{id2}).
			// The parameter after segment i is renamed below: its name is
			// free.
			var kept []templateSegment
			for _, g := range b {
				for j, s := range g.segs {
					if j != i+1 {
						kept = append(kept, s)
					}
				}
			}
			unique := uniqueParam(kept, string(paramName(nil, prev)))
			// A parameter after it was named after the segment, a value:
			// it is named after nothing now, as after any parameter.
			next := ""
			if i+1 < len(b[0].segs) && b[0].segs[i+1].param != "" {
				next = uniqueParam(append(kept, templateSegment{param: unique}), string(paramName(nil, "")))
			}
			for _, g := range b {
				g.segs = slices.Clone(g.segs)
				g.segs[i] = templateSegment{param: unique}
				if next != "" {
					g.segs[i+1] = templateSegment{param: next}
				}
			}
			b[0].notes = append(b[0].notes, fmt.Sprintf("path: {%s} (segment %d) stands for %d distinct values seen in %d samples, taken for identifiers",
				unique, i+1, len(b), samples))
			changed = true
		}
		if changed {
			return true
		}
	}
}

// alsoApplied adds to the observations of each group those of the routes
// whose requests its contract applies to as well. The guard checks a
// request against the contracts of every reading of its path, not only
// the one that matches it as written (route.Tree.Hits: static segments
// in any letter case, the extension chi's URLFormat cuts, an encoded
// slash decoded, the path cut at a ';'): a contract learned from the
// bodies of POST /report alone applies to POST /report.json and POST
// /Report too, and refused the bodies learned there. Each route observed
// is stood for by its template as observed (before collapse made its
// values a parameter: /acc/a;q/sub reaches /acc/a), a parameter by a
// value that looks like one; what is added is the route's observations
// as learned.
func alsoApplied(gs []*group, budget int64, enumValues int) {
	var t paths.Tree[*group]
	for _, g := range gs {
		if p, err := paths.ParsePattern(g.template()); err == nil {
			t.Add(g.method, p, g)
		}
	}
	// What is added is bounded by budget, the bytes the learned state
	// may hold (Limits.MaxBytes), as its nodes are accounted (counted
	// afresh from the body, so that a learner's state and merged exports
	// of the same traffic leave out the same routes): a route's body may be
	// added to as many contracts as there are routes (4,096 spellings of
	// /abcdefghijkl in letter case each reach all the others), which
	// without a bound cost time and memory quadratic in the routes.
	// Past it, in the fixed order of the groups and their routes, a
	// contract is not learned from the route's samples (it refuses what
	// it did not learn, as a contract of one route does), and says how
	// many routes were left out; the routes after that one are not looked
	// up (a path that reaches n routes costs n² to look up, Hits), and
	// every contract says it may apply to routes it was not learned from.
	var spent int64
	left := map[*group]int{}
	var into []*group
	full, stopped := false, false // full: a route was left out; stopped: the routes after it are not looked up
	for _, h := range gs {
		for _, r := range h.origins {
			if stopped = full; stopped {
				break // a route's readings (Hits) cost time quadratic in the routes they reach
			}
			segs, ok := parseTemplate(r.template)
			if !ok {
				continue
			}
			var b []byte
			params := false
			for _, s := range segs {
				if s.param != "" {
					b, params = append(b, "/1"...), true
				} else {
					b = appendStatic(b, s.static)
				}
			}
			path := cmp.Or(string(b), "/")
			v, vsegs, ok := t.Match(h.method, path, nil)
			if !ok || v != h && params {
				continue // the stand-in is not r's: a static route took it
			}
			into = append(into[:0], v)
			cost := int64(-1)
			for _, hit := range t.Hits(h.method, path, v, vsegs, ok, nil) {
				if !slices.Contains(into, hit.V) {
					into = append(into, hit.V)
				}
			}
			for _, g := range into {
				if g == h {
					continue
				}
				if cost < 0 {
					cost = bodyCharge(r.body, enumValues)
				}
				if spent > budget-cost {
					left[g]++
					full = true
					continue
				}
				spent += cost
				addApplied(g, r)
			}
		}
	}
	for _, g := range gs {
		switch n := left[g]; {
		case stopped:
			g.notes = append(g.notes, "path: may apply to the requests of other routes as well (other readings of their path), not learned from: over the memory cap (Limits.MaxBytes)")
		case n > 0:
			g.notes = append(g.notes, fmt.Sprintf("path: applies to the requests of %d other routes as well (other readings of their path), not learned from: over the memory cap (Limits.MaxBytes)", n))
		}
	}
}

// bodyCharge is the bytes the nodes of body are accounted for, and a
// route's own.
func bodyCharge(body *node, enumValues int) int64 {
	c := int64(routeBytes)
	var walk func(n *node)
	walk = func(n *node) {
		c += n.chargeFor(enumValues)
		n.children(walk)
	}
	if body != nil {
		walk(body)
	}
	return c
}

// addApplied adds to into the observations of r, a route whose requests
// its contract applies to as well.
func addApplied(into *group, r *route) {
	into.samples = addCounts(into.samples, r.samples)
	into.routes++
	if r.first.Before(into.first) {
		into.first = r.first
	}
	if r.last.After(into.last) {
		into.last = r.last
	}
	if r.cut != nil {
		into.cutDepth = min(into.cutDepth, r.cut.depth)
	}
	into.notes = append(into.notes, fmt.Sprintf("path: applies to the requests of %s %s as well (another reading of their path): their %d samples are learned from too",
		r.method, r.template, r.samples))
	switch {
	case r.body == nil:
		into.dropped = into.dropped || r.samples > 0
	case into.body == nil:
		into.body = r.body.copyInto(nil, edgeBody, "")
	default:
		into.body.add(r.body)
	}
}

// uniqueParam is name, or name and a number, so that no parameter of segs
// has it.
func uniqueParam(segs []templateSegment, name string) string {
	taken := func(n string) bool {
		return slices.ContainsFunc(segs, func(s templateSegment) bool { return s.param == n })
	}
	unique := name
	for n := 2; taken(unique); n++ {
		unique = fmt.Sprintf("%s%d", name, n)
	}
	return unique
}

// mergeShapes merges the groups of one method and shape: their routes are
// one contract. The template kept is the router's, else the first.
func mergeShapes(gs []*group) []*group {
	slices.SortFunc(gs, func(a, b *group) int {
		if a.router != b.router {
			if a.router {
				return -1
			}
			return 1
		}
		return strings.Compare(a.method+" "+a.template(), b.method+" "+b.template())
	})
	byShape := map[string]*group{}
	var out []*group
	for _, g := range gs {
		s := g.shape()
		into := byShape[s]
		if into == nil {
			byShape[s] = g
			out = append(out, g)
			continue
		}
		into.samples = addCounts(into.samples, g.samples)
		into.routes += g.routes
		into.origins = append(into.origins, g.origins...)
		if g.first.Before(into.first) {
			into.first = g.first
		}
		if g.last.After(into.last) {
			into.last = g.last
		}
		into.cutDepth = min(into.cutDepth, g.cutDepth)
		into.dropped = into.dropped || g.dropped
		into.notes = append(into.notes, g.notes...)
		switch {
		case g.body == nil:
		case into.body == nil:
			into.body = g.body
		default:
			into.body.add(g.body)
		}
	}
	return out
}

// infer builds one contract.
func (o *Observations) infer(g *group) Learned {
	l := Learned{Method: g.method, Endpoint: g.template(), Samples: g.samples, First: g.first, Last: g.last}
	if g.router {
		l.Notes = append(l.Notes, "path: the router's pattern")
	}
	l.Notes = append(l.Notes, g.notes...)
	if g.routes > 1 && g.body != nil {
		if g.cutDepth == 0 { // a route's body was dropped whole
			g.body, g.dropped = nil, true
		} else {
			g.body.pruneMerged(g.cutDepth)
		}
	}
	switch {
	case g.body == nil && g.dropped:
		l.Notes = append(l.Notes, "body: not kept, over the memory cap (Limits.MaxBytes): no schema")
	case g.body == nil:
		l.Notes = append(l.Notes, "body: never observed: no schema")
	case g.body.seen == g.body.nulls:
		l.Notes = append(l.Notes, fmt.Sprintf("body: empty (or null) in all %d samples: no schema", g.body.seen))
	default:
		b := inferrer{lim: o.limits, cutDepth: g.cutDepth}
		l.Schema = b.schema(g.body, "", false)
		l.Notes = append(l.Notes, b.notes...)
	}
	return l
}

// pruneMerged drops, from the body of routes merged into one contract,
// what the caps of some of them may have kept out, so that no schema is
// written from the other routes' samples alone: each route's memory cap
// and Properties cap chose by its own nodes' keys, so a member one route
// kept another may have dropped or skipped. What is left of a place is
// from every route; it is left open (the notes say why) below the depth
// of the shallowest cut, and where members were skipped.
func (n *node) pruneMerged(cutDepth int) {
	if n.depth+1 >= cutDepth {
		n.members, n.dynamic, n.items = nil, nil, nil
		return
	}
	if n.skipped > 0 {
		n.members, n.dynamic = nil, nil
	}
	n.children(func(c *node) { c.pruneMerged(cutDepth) })
}

// inferrer builds a schema from a tree of nodes, noting why.
type inferrer struct {
	lim      Limits
	cutDepth int
	notes    []string
}

func (b *inferrer) note(ptr, format string, args ...any) {
	if ptr == "" {
		ptr = "body"
	}
	b.notes = append(b.notes, ptr+": "+fmt.Sprintf(format, args...))
}

func (b *inferrer) schema(n *node, ptr string, secret bool) map[string]any {
	s := map[string]any{}
	var types []string
	var counts []string
	add := func(t string, c int64) {
		if c > 0 {
			types = append(types, t)
			counts = append(counts, fmt.Sprintf("%s in %d", t, c))
		}
	}
	add("object", n.objs)
	add("array", n.arrs)
	add("string", n.strs)
	if n.fracs > 0 {
		add("number", n.ints+n.fracs)
	} else {
		add("integer", n.ints)
	}
	add("boolean", n.bools)
	add("null", n.nulls)
	switch len(types) {
	case 0:
		return s
	case 1:
		s["type"] = types[0]
	default:
		list := make([]any, len(types))
		for i, t := range types {
			list[i] = t
		}
		s["type"] = list
		b.note(ptr, "type %s — the samples disagree (%s)", strings.Join(types, " or "), strings.Join(counts, ", "))
	}
	if secret && n.strs > 0 {
		b.note(ptr, "its name, or an ancestor's, looks secret — no value recorded")
	}
	if n.ints+n.fracs > 0 {
		b.numbers(s, n, ptr)
	}
	if n.strs > 0 {
		b.strings(s, n, ptr, secret, len(types) == 1)
	}
	if n.arrs > 0 {
		b.array(s, n, ptr, secret)
	}
	if n.objs > 0 {
		b.object(s, n, ptr, secret)
	}
	return s
}

func (b *inferrer) numbers(s map[string]any, n *node, ptr string) {
	total := n.ints + n.fracs
	var what, why []string
	if n.fracs == 0 {
		what = append(what, "integer")
		why = append(why, "all integral")
	}
	if n.negs == 0 {
		s["minimum"] = json.Number("0")
		what = append(what, "minimum 0")
		why = append(why, "none negative")
	}
	if len(what) > 0 {
		b.note(ptr, "%s — %d numbers, %s", strings.Join(what, ", "), total, strings.Join(why, ", "))
	}
}

func (b *inferrer) strings(s map[string]any, n *node, ptr string, secret, onlyStrings bool) {
	for i, name := range formatNames {
		if n.formats&(1<<i) != 0 {
			s["format"] = name
			b.note(ptr, "format %s — all %d strings match", name, n.strs)
			break
		}
	}
	e := n.enum
	if secret || !onlyStrings || e == nil || e.over || len(e.pending) > 0 || len(e.values) == 0 ||
		len(e.values) > b.lim.EnumValues || n.strs < int64(b.lim.EnumMinSamples) {
		return
	}
	sum := int64(0)
	for _, c := range e.values {
		sum = addCounts(sum, c)
	}
	if sum != n.strs {
		return
	}
	for v := range e.values {
		if !candidate(v, 0) { // from an export of a learner with older rules (a card number): never an enum
			return
		}
	}
	values := slices.Sorted(maps.Keys(e.values))
	list := make([]any, len(values))
	for i, v := range values {
		list[i] = v
	}
	s["enum"] = list
	b.note(ptr, "enum of %d values — %d strings, each value seen at least %d times", len(values), n.strs, revealAt)
}

func (b *inferrer) array(s map[string]any, n *node, ptr string, secret bool) {
	switch {
	case n.deep > 0:
		b.note(ptr, "not looked into (at depth %d, the limit)", n.depth)
	case n.items != nil:
		s["items"] = b.schema(n.items, ptr+"/[]", secret)
	case b.cutDepth <= n.depth+1:
		b.note(ptr, "items dropped at the memory cap — not inferred")
	default:
		b.note(ptr, "every array was empty — items not inferred")
	}
}

func (b *inferrer) object(s map[string]any, n *node, ptr string, secret bool) {
	if n.deep > 0 {
		b.note(ptr, "not looked into (at depth %d, the limit)", n.depth)
		return
	}
	members := slices.Collect(maps.Values(n.members))
	var open []string
	if len(members) > b.lim.Properties {
		slices.SortFunc(members, compareNodes)
		open = append(open, fmt.Sprintf("%d members not written (over %d per object)", len(members)-b.lim.Properties, b.lim.Properties))
		members = members[:b.lim.Properties]
	}
	slices.SortFunc(members, func(a, b *node) int { return strings.Compare(a.name, b.name) })
	var required []any
	var names []string
	once := 0
	for _, m := range members {
		if m.seen == n.objs {
			required = append(required, m.name)
			names = append(names, m.name)
		}
		if m.seen == 1 {
			once++
		}
	}
	if len(required) > 0 {
		s["required"] = required
		b.note(ptr, "required %s — present in all %d samples", listNames(names), n.objs)
	}
	// What a limit kept out of the members written: members past
	// Properties, skipped or dropped at the memory cap.
	var cut []string
	if n.skipped > 0 {
		cut = append(cut, fmt.Sprintf("%d members skipped (over %d in one object)", n.skipped, b.lim.Properties))
	}
	if b.cutDepth <= n.depth+1 {
		cut = append(cut, "members may have been dropped at the memory cap")
	}
	dynamic := n.dynamic != nil
	switch {
	case dynamic && len(open)+len(cut) > 0:
		// additionalProperties would hold every member not written: those
		// too, whose values the data-named members' schema never saw.
		dynamic = false
		b.note(ptr, "left open (no additionalProperties) — members named like data (ids, emails…) seen %d times, but %s", n.dynamic.seen, strings.Join(append(open, cut...), "; "))
	case dynamic:
		b.note(ptr, "members named like data (ids, emails…) learned as one schema, additionalProperties — %d of them seen", n.dynamic.seen)
	default:
		if n.objs < int64(b.lim.StableSamples) {
			open = append(open, fmt.Sprintf("only %d samples (fewer than %d)", n.objs, b.lim.StableSamples))
		}
		if once > 0 && int64(once)*100 > n.objs {
			open = append(open, fmt.Sprintf("%d of its members seen in only one sample of %d", once, n.objs))
		}
		open = append(open, cut...)
		if len(open) > 0 {
			b.note(ptr, "left open (no additionalProperties: false) — %s", strings.Join(open, "; "))
			break
		}
		s["additionalProperties"] = false
		b.note(ptr, "additionalProperties: false — the shape is stable: %d samples, %d of its %d members seen in only one", n.objs, once, len(members))
	}
	if len(members) > 0 {
		props := map[string]any{}
		for _, m := range members {
			props[m.name] = b.schema(m, ptr+"/"+escapePointer(m.name), secret || secretName(m.name))
		}
		s["properties"] = props
	}
	if dynamic {
		s["additionalProperties"] = b.schema(n.dynamic, ptr+"/*", secret)
	}
}

func escapePointer(name string) string {
	if strings.ContainsAny(name, "~/") {
		name = strings.ReplaceAll(name, "~", "~0")
		name = strings.ReplaceAll(name, "/", "~1")
	}
	return name
}

func listNames(names []string) string {
	if len(names) > 8 {
		return strings.Join(names[:8], ", ") + fmt.Sprintf(" and %d more", len(names)-8)
	}
	return strings.Join(names, ", ")
}
