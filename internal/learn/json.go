package learn

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	paths "github.com/contractguard/contractguard/internal/route"
)

// Format names the exchange format of Observations. A document of another
// format is refused.
const Format = "contractguard.learn/v1"

type observationsJSON struct {
	Format   string      `json:"format"`
	Limits   limitsJSON  `json:"limits"`
	Samples  int64       `json:"samples"`
	RouteCut *string     `json:"routeCut,omitempty"`
	Routes   []routeJSON `json:"routes"`
}

type limitsJSON struct {
	Routes         int     `json:"routes"`
	Properties     int     `json:"properties"`
	Depth          int     `json:"depth"`
	EnumValues     int     `json:"enumValues"`
	EnumMinSamples int     `json:"enumMinSamples"`
	StableSamples  int     `json:"stableSamples"`
	MaxBytes       int     `json:"maxBytes"`
	SampleRate     float64 `json:"sampleRate"`
}

type routeJSON struct {
	Method   string    `json:"method"`
	Template string    `json:"template"`
	Router   bool      `json:"router,omitempty"`
	Samples  int64     `json:"samples"`
	First    time.Time `json:"first"`
	Last     time.Time `json:"last"`
	Cut      *string   `json:"cut,omitempty"`
	Body     *nodeJSON `json:"body,omitempty"`
}

type nodeJSON struct {
	Seen    int64                `json:"seen"`
	Null    int64                `json:"null,omitempty"`
	Bool    int64                `json:"bool,omitempty"`
	Int     int64                `json:"int,omitempty"`
	Frac    int64                `json:"frac,omitempty"`
	Neg     int64                `json:"neg,omitempty"`
	Str     int64                `json:"str,omitempty"`
	Arr     int64                `json:"arr,omitempty"`
	Obj     int64                `json:"obj,omitempty"`
	Deep    int64                `json:"deep,omitempty"`
	Skipped int64                `json:"skipped,omitempty"`
	Formats []string             `json:"formats,omitempty"` // with str > 0: the formats every string matched
	Enum    *enumJSON            `json:"enum,omitempty"`
	Members map[string]*nodeJSON `json:"members,omitempty"`
	Dynamic *nodeJSON            `json:"dynamic,omitempty"`
	Items   *nodeJSON            `json:"items,omitempty"`
}

type enumJSON struct {
	Over    bool             `json:"over,omitempty"`
	Values  map[string]int64 `json:"values,omitempty"`
	Pending []pendingJSON    `json:"pending,omitempty"`
}

type pendingJSON struct {
	Fingerprint string      `json:"fingerprint"`
	N           int64       `json:"n"`
	Shares      []shareJSON `json:"shares"`
}

type shareJSON struct {
	X string   `json:"x"`
	Y []string `json:"y"`
}

// MarshalJSON writes the observations in the exchange format, Format: the
// same observations always give the same bytes.
func (o *Observations) MarshalJSON() ([]byte, error) {
	l := o.limits
	doc := observationsJSON{
		Format:  Format,
		Limits:  limitsJSON{l.Routes, l.Properties, l.Depth, l.EnumValues, l.EnumMinSamples, l.StableSamples, l.MaxBytes, l.SampleRate},
		Samples: o.samples,
		Routes:  []routeJSON{},
	}
	if o.routeCut != nil {
		doc.RouteCut = &o.routeCut.name
	}
	for _, r := range o.sortedRoutes() {
		rj := routeJSON{Method: r.method, Template: r.template, Router: r.router, Samples: r.samples, First: r.first, Last: r.last}
		if r.cut != nil {
			rj.Cut = &r.cut.path
		}
		if r.body != nil {
			rj.Body = r.body.toJSON()
		}
		doc.Routes = append(doc.Routes, rj)
	}
	return json.Marshal(doc)
}

func (n *node) toJSON() *nodeJSON {
	j := &nodeJSON{Seen: n.seen, Null: n.nulls, Bool: n.bools, Int: n.ints, Frac: n.fracs, Neg: n.negs,
		Str: n.strs, Arr: n.arrs, Obj: n.objs, Deep: n.deep, Skipped: n.skipped}
	if n.strs > 0 {
		j.Formats = []string{}
		for i, name := range formatNames {
			if n.formats&(1<<i) != 0 {
				j.Formats = append(j.Formats, name)
			}
		}
	}
	if e := n.enum; e != nil {
		ej := &enumJSON{Over: e.over, Values: e.values}
		for _, f := range slices.SortedFunc(maps.Keys(e.pending), func(a, b fingerprint) int { return bytes.Compare(a[:], b[:]) }) {
			p := e.pending[f]
			pj := pendingJSON{Fingerprint: hex.EncodeToString(f[:]), N: p.n}
			for _, s := range p.shares {
				sj := shareJSON{X: strconv.FormatUint(s.x, 16)}
				for _, y := range s.y {
					sj.Y = append(sj.Y, strconv.FormatUint(y, 16))
				}
				pj.Shares = append(pj.Shares, sj)
			}
			ej.Pending = append(ej.Pending, pj)
		}
		j.Enum = ej
	}
	if len(n.members) > 0 {
		j.Members = make(map[string]*nodeJSON, len(n.members))
		for name, m := range n.members {
			j.Members[name] = m.toJSON()
		}
	}
	if n.dynamic != nil {
		j.Dynamic = n.dynamic.toJSON()
	}
	if n.items != nil {
		j.Items = n.items.toJSON()
	}
	return j
}

// UnmarshalJSON reads observations in the exchange format. The document
// may come from another process: everything in it is checked (its JSON
// as go-json-experiment/json reads it by default, with no name twice in an
// object — encoding/json took the last of two, or decoded the second into
// the first —, and names as a learner writes them, exactly: an unknown one
// — "bodyy", or "Body", which encoding/json read as body — is an error, as
// a learner of this Format writes none; counts, limits within bounds,
// templates, cuts, shares), values in the clear must have been seen
// revealAt times, and the limits are applied, so that what is read is
// bounded as a learner's state is.
func (o *Observations) UnmarshalJSON(data []byte) error {
	var doc observationsJSON
	if err := jsonv2.Unmarshal(data, &doc, jsonv2.RejectUnknownMembers(true)); err != nil {
		return fmt.Errorf("learned observations: %w", err)
	}
	if doc.Format != Format {
		return fmt.Errorf("learned observations: format %q, want %q", doc.Format, Format)
	}
	lj := doc.Limits
	lim := Limits{lj.Routes, lj.Properties, lj.Depth, lj.EnumValues, lj.EnumMinSamples, lj.StableSamples, lj.MaxBytes, lj.SampleRate}.withDefaults()
	n := newObservations(lim)
	if doc.Samples < 0 || doc.Samples > maxCount {
		return errors.New("learned observations: samples out of range")
	}
	n.samples = doc.Samples
	if doc.RouteCut != nil {
		k := keyOfRoute(*doc.RouteCut)
		n.routeCut = &k
	}
	var kept int64
	for i, rj := range doc.Routes {
		if paths.MeansEveryMethod(rj.Method) {
			// Learned before such routes were not (a learner of this
			// version drops them): a contract of one does not load. Its
			// samples count as dropped.
			continue
		}
		r, err := rj.route(lim)
		if err != nil {
			return fmt.Errorf("learned observations: route %d (%s %s): %w", i, rj.Method, rj.Template, err)
		}
		if n.routes[r.key.name] != nil {
			return fmt.Errorf("learned observations: route %s listed twice", r.key.name)
		}
		n.routes[r.key.name] = r
		if r.samples > n.samples-kept { // kept <= n.samples: this cannot wrap
			return errors.New("learned observations: routes have more samples than the document")
		}
		kept += r.samples
	}
	n.normalize()
	*o = *n
	return nil
}

func (rj routeJSON) route(lim Limits) (*route, error) {
	if rj.Method == "" || rj.Method != paths.UpperMethod(rj.Method) {
		return nil, errors.New("method must be an upper-case token")
	}
	for i := 0; i < len(rj.Method); i++ {
		if !tokenChar(rj.Method[i]) {
			return nil, errors.New("method must be an upper-case token")
		}
	}
	// Escaped first: the template kept is the one written out again,
	// which a later read holds to maxTemplate (an older learner's
	// /??…? of 200 bytes is 600 escaped).
	rj.Template = escapeOldTemplate(rj.Template)
	if len(rj.Template) > maxTemplate {
		return nil, fmt.Errorf("template over %d bytes", maxTemplate)
	}
	if _, err := paths.ParsePattern(rj.Template); err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	// As a contract's endpoint writes it: a static segment that escapes
	// a dot segment (/a/%2e) is one, the learner never writes, and no
	// endpoint (/a/.).
	if segs, ok := parseTemplate(rj.Template); !ok {
		return nil, errors.New("template: not an endpoint")
	} else if _, err := paths.ParsePattern(joinTemplate(segs)); err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	if rj.Samples < 0 || rj.Samples > maxCount || rj.Last.Before(rj.First) {
		return nil, errors.New("samples or times out of order")
	}
	name := rj.Method + " " + rj.Template
	r := &route{method: rj.Method, template: rj.Template, key: keyOfRoute(name), router: rj.Router,
		samples: rj.Samples, first: rj.First.UTC(), last: rj.Last.UTC(), hidx: -1}
	rootHash := mix(r.key.hash, edgeBody, "")
	if rj.Cut != nil {
		c, ok := parseCut(*rj.Cut, rootHash)
		if !ok {
			return nil, fmt.Errorf("cut %q is not a path", *rj.Cut)
		}
		r.cut = c
	}
	if rj.Body != nil {
		root := newNode(nil, edgeBody, "", rootHash)
		if err := rj.Body.into(root, lim); err != nil {
			return nil, err
		}
		r.body = root
	}
	return r, nil
}

// oldTemplateEscapes escapes what a static segment of an older learner's
// template held raw (escapeOldTemplate).
var oldTemplateEscapes = strings.NewReplacer("?", "%3F", "#", "%23")

// escapeOldTemplate is a template as learners write it since de75ea6:
// before, a static segment was written with a raw ?, # or leading * (a
// request to /files/%2A was the template /files/*), which endpoints now
// refuse as a query or a wildcard; an export of such a learner is read
// with them escaped, as the same request is written now.
func escapeOldTemplate(t string) string {
	if !strings.ContainsAny(t, "?#*") {
		return t
	}
	segs := strings.Split(t, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			continue // a parameter
		}
		s = oldTemplateEscapes.Replace(s)
		if strings.HasPrefix(s, "*") {
			s = "%2A" + s[1:]
		}
		segs[i] = s
	}
	return strings.Join(segs, "/")
}

// maxCount is the most of anything an export may say was seen: far more
// than any learner counts, and small enough that the sums merges make
// cannot wrap (and merges hold their sums: addCounts).
const maxCount = 1 << 53

// into reads a node's observations into n, checking them.
func (j *nodeJSON) into(n *node, lim Limits) error {
	where := func(err string) error {
		return fmt.Errorf("at %q: %s", n.path(), err)
	}
	if n.depth > lim.Depth {
		return where("deeper than the limits allow")
	}
	for _, c := range []int64{j.Seen, j.Null, j.Bool, j.Int, j.Frac, j.Neg, j.Str, j.Arr, j.Obj, j.Deep, j.Skipped} {
		if c < 0 || c > maxCount {
			return where("count out of range")
		}
	}
	if j.Null+j.Bool+j.Int+j.Frac+j.Str+j.Arr+j.Obj != j.Seen || j.Neg > j.Int+j.Frac || j.Deep > j.Arr+j.Obj {
		return where("counts do not add up")
	}
	n.seen, n.nulls, n.bools, n.ints, n.fracs, n.negs = j.Seen, j.Null, j.Bool, j.Int, j.Frac, j.Neg
	n.strs, n.arrs, n.objs, n.deep, n.skipped = j.Str, j.Arr, j.Obj, j.Deep, j.Skipped
	if n.strs > 0 {
		n.formats = 0
		for _, f := range j.Formats {
			i := slices.Index(formatNames[:], f)
			if i < 0 {
				return where("unknown format " + strconv.Quote(f))
			}
			n.formats |= 1 << i
		}
	}
	if j.Enum != nil {
		e, err := j.Enum.enum()
		if err != nil {
			return where(err.Error())
		}
		n.enum = e
	}
	for name, m := range j.Members {
		if m == nil {
			return where("member " + strconv.Quote(name) + " is null")
		}
		c := newNode(n, edgeMember, name, mix(n.hash, edgeMember, name))
		if err := m.into(c, lim); err != nil {
			return err
		}
	}
	if j.Dynamic != nil {
		if err := j.Dynamic.into(newNode(n, edgeDynamic, "", mix(n.hash, edgeDynamic, "")), lim); err != nil {
			return err
		}
	}
	if j.Items != nil {
		if err := j.Items.into(newNode(n, edgeItems, "", mix(n.hash, edgeItems, "")), lim); err != nil {
			return err
		}
	}
	return nil
}

func (j *enumJSON) enum() (*enum, error) {
	e := &enum{over: j.Over}
	if j.Over {
		if len(j.Values) > 0 || len(j.Pending) > 0 {
			return nil, errors.New("an enum over its limit holds candidates")
		}
		return e, nil
	}
	if len(j.Values)+len(j.Pending) > maxEnumValues+1 {
		return nil, errors.New("too many enum candidates")
	}
	for v, n := range j.Values {
		if n < revealAt || len(v) > maxCandidate {
			return nil, errors.New("an enum value in the clear was seen fewer than " + strconv.Itoa(revealAt) + " times")
		}
		if e.values == nil {
			e.values = map[string]int64{}
		}
		e.values[v] = n
	}
	for _, pj := range j.Pending {
		b, err := hex.DecodeString(pj.Fingerprint)
		if err != nil || len(b) != len(fingerprint{}) {
			return nil, errors.New("bad fingerprint")
		}
		if pj.N < 1 || len(pj.Shares) == 0 || len(pj.Shares) > revealAt {
			return nil, errors.New("bad pending candidate")
		}
		p := &pending{n: pj.N}
		for _, sj := range pj.Shares {
			s := share{}
			x, err := strconv.ParseUint(sj.X, 16, 64)
			if err != nil || x == 0 || x >= prime || len(sj.Y) != chunks {
				return nil, errors.New("bad share")
			}
			s.x = x
			for i, yj := range sj.Y {
				y, err := strconv.ParseUint(yj, 16, 64)
				if err != nil || y >= prime {
					return nil, errors.New("bad share")
				}
				s.y[i] = y
			}
			p.shares = append(p.shares, s)
		}
		f := fingerprint(b)
		if e.pending == nil {
			e.pending = map[fingerprint]*pending{}
		}
		if e.pending[f] != nil {
			return nil, errors.New("a fingerprint listed twice")
		}
		e.pending[f] = p
	}
	return e, nil
}
