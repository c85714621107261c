package contractguard

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/learn"
	"github.com/contractguard/contractguard/internal/route"
	"github.com/go-chi/chi/v5"
)

// Learning mode, report-only enforcement: a contract in mode learn (or
// every contract, with Options.LearningMode) is checked exactly as in
// enforcement, but a request it would reject reaches the handler; the
// request is counted (once, with the decision: metrics.go), and each
// contract's would-be rejection logged (rate-limited, never a value), kept
// in a bounded report and given to Options.OnObserve.

// Observation is a request a contract in mode learn would have rejected,
// as Options.OnObserve receives it.
type Observation struct {
	// Contract is the contract that would have rejected it; the zero
	// ContractInfo for a request that matched none (Options.RequireContract).
	Contract ContractInfo
	// Violation is the rejection enforcement would have sent.
	Violation *Violation
}

// ContractReport is what learning mode saw of one contract: the requests
// it would have rejected, by code and by the paths of their details.
type ContractReport struct {
	Contract   ContractInfo     `json:"contract"`
	WouldBlock int64            `json:"would_block"`
	Codes      map[string]int64 `json:"codes"`
	// Paths are the most frequent detail paths, most frequent first, at
	// most reportTopPaths of them. OtherPaths counts the details at paths
	// the report had no room left to track.
	Paths      []PathCount `json:"paths"`
	OtherPaths int64       `json:"other_paths,omitempty"`
}

// PathCount is how often a detail path was reported.
type PathCount struct {
	Path  string `json:"path"`
	Count int64  `json:"count"`
}

// The bounds of the learning report: what it keeps, whatever the traffic.
const (
	reportContracts = 4096 // contracts tracked; past it, one entry for the rest
	reportPaths     = 64   // distinct detail paths tracked per contract
	reportTopPaths  = 10   // paths listed in a ContractReport
	reportPathBytes = 256  // a longer path is tracked cut to this length
	// learnLogInterval is how often a contract's would-be rejections of one
	// code are logged at warn level: the first, then one line an interval
	// with the number since.
	learnLogInterval = time.Minute
)

// learnReport is the guard's learning report, kept across reloads (by
// contract name). Only a would-be rejection takes its lock.
type learnReport struct {
	mu        sync.Mutex
	contracts map[reportKey]*contractLearned
}

// reportKey is a contract in the learning report: a file contract by its
// name (method and endpoint), kept across reloads; a typed contract by its
// Go type too, since two types may print alike (api.Request of two
// packages named api, or two types declared in functions): found by
// review, two such contracts' would-be rejections were counted as one's.
type reportKey struct {
	name string
	typ  reflect.Type // a typed contract's; nil for a file contract
}

type contractLearned struct {
	info       ContractInfo
	total      int64
	codes      map[string]int64
	paths      map[string]int64
	otherPaths int64
	logged     map[string]time.Time // by code: when a line was last logged
	unlogged   map[string]int64     // by code: would-be rejections since
}

// learnsOnly reports whether every contract of cs is in mode learn: then a
// violation before any contract could run (the body's size, media type)
// is reported, not sent.
func learnsOnly(cs []*contract) bool {
	for _, c := range cs {
		if !c.learn {
			return false
		}
	}
	return len(cs) > 0
}

// observeAll reports v as the would-be rejection of each contract of cs.
func (g *Guard) observeAll(in *input, cs []*contract, v *Violation) {
	for _, c := range cs {
		g.observe(in, c, v)
	}
}

// observe reports v as a would-be rejection of c (nil: of no contract).
// The request is counted where the decision is recorded, once however
// many of its contracts would reject it.
func (g *Guard) observe(in *input, c *contract, v *Violation) {
	var info ContractInfo
	var key reportKey
	if c != nil {
		info, key.name, key.typ = c.info(), c.name(), c.body // body: a typed contract's type, nil for a file contract
	}
	line, since := g.learned.add(key, info, v)
	if line {
		paths := make([]string, len(v.Details))
		for i, d := range v.Details {
			paths[i] = d.Path
		}
		g.log.LogAttrs(contextOf(in.r), slog.LevelWarn, "contractguard: learning mode: a request would have been rejected",
			slog.String("contract", cmp.Or(key.name, "(none)")), slog.String("code", v.Code),
			slog.Any("paths", paths), slog.Int64("since_last_line", since))
	}
	if f := g.opts.OnObserve; f != nil {
		// Its own copy: the details are the run's, which goes on.
		f(in.r, &Observation{Contract: info, Violation: &Violation{Status: v.Status, Code: v.Code, Details: slices.Clone(v.Details)}})
	}
}

// add counts v for the contract key names, and says whether a log line
// is due (with the number of would-be rejections of its code since the
// last one).
func (r *learnReport) add(key reportKey, info ContractInfo, v *Violation) (line bool, since int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.contracts == nil {
		r.contracts = map[reportKey]*contractLearned{}
	}
	c := r.contracts[key]
	if c == nil {
		if len(r.contracts) >= reportContracts {
			key, info = reportKey{name: "(other contracts)"}, ContractInfo{Source: "(other contracts)"}
			c = r.contracts[key]
		}
		if c == nil {
			c = &contractLearned{info: info, codes: map[string]int64{}, paths: map[string]int64{},
				logged: map[string]time.Time{}, unlogged: map[string]int64{}}
			r.contracts[key] = c
		}
	}
	c.total++
	c.codes[v.Code]++
	for _, d := range v.failures() { // not the note that more were not listed
		p := d.Path
		p = failure.Cut(p, reportPathBytes)
		switch _, known := c.paths[p]; {
		case known || len(c.paths) < reportPaths:
			c.paths[strings.Clone(p)]++
		default:
			c.otherPaths++
		}
	}
	c.unlogged[v.Code]++
	now := time.Now()
	if last, ok := c.logged[v.Code]; ok && now.Sub(last) < learnLogInterval {
		return false, 0
	}
	c.logged[v.Code] = now
	since = c.unlogged[v.Code]
	c.unlogged[v.Code] = 0
	return true, since
}

// LearningReport returns what learning mode saw: for each contract that
// would have rejected a request, how many, by code, and the most frequent
// detail paths; sorted by contract. It is empty when no contract is in
// mode learn, or none would have rejected anything.
func (g *Guard) LearningReport() []ContractReport {
	// Copied under the lock, which every would-be rejection takes; sorted
	// and cut after it, so that a scrape of the metrics document holds
	// requests up for the copy only.
	r := &g.learned
	r.mu.Lock()
	out := make([]ContractReport, 0, len(r.contracts))
	for _, c := range r.contracts {
		cr := ContractReport{Contract: c.info, WouldBlock: c.total, Codes: make(map[string]int64, len(c.codes)), OtherPaths: c.otherPaths}
		for code, n := range c.codes {
			cr.Codes[code] = n
		}
		cr.Paths = make([]PathCount, 0, len(c.paths))
		for p, n := range c.paths {
			cr.Paths = append(cr.Paths, PathCount{p, n})
		}
		out = append(out, cr)
	}
	r.mu.Unlock()
	for i := range out {
		cr := &out[i]
		slices.SortFunc(cr.Paths, func(a, b PathCount) int {
			return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Path, b.Path))
		})
		if len(cr.Paths) > reportTopPaths {
			for _, p := range cr.Paths[reportTopPaths:] {
				cr.OtherPaths += p.Count
			}
			cr.Paths = cr.Paths[:reportTopPaths]
		}
		if len(cr.Paths) == 0 {
			cr.Paths = nil
		}
	}
	slices.SortFunc(out, func(a, b ContractReport) int {
		return cmp.Or(strings.Compare(a.Contract.Method+" "+a.Contract.Endpoint, b.Contract.Method+" "+b.Contract.Endpoint),
			strings.Compare(a.Contract.Source, b.Contract.Source))
	})
	return out
}

// partBody is the body of a request learning mode passes on after reading
// part of it (to find it too large): the bytes read, then the rest.
type partBody struct {
	io.Reader
	rest io.ReadCloser
}

func (b *partBody) Close() error { return b.rest.Close() }

// giveBack puts the part of r's body that was read back in front of the
// rest, so that the handler reads the body as it came.
func giveBack(r *http.Request, read []byte) {
	if r == nil || len(read) == 0 {
		return
	}
	r.Body = &partBody{Reader: io.MultiReader(bytes.NewReader(read), r.Body), rest: r.Body}
}

// Learning contracts from traffic: with learning on (Options.LearningMode,
// or Options.LearnSampleRate above 0), Middleware samples the requests
// that match no contract and internal/learn learns, per method and route,
// the shape of their bodies; Guard.Learned exports it, for contractguard
// learn merge to turn into contracts (docs/learning-mode.md).

// newLearner is the guard's learner: nil when learning is off.
func newLearner(o *Options) *learn.Learner {
	if !o.LearningMode && !(o.LearnSampleRate > 0) {
		return nil
	}
	return learn.New(learn.Limits{SampleRate: o.LearnSampleRate})
}

// learnFrom serves a request no contract matched, sampled for learning:
// its body is read as a matched one's is (at most MaxBodyBytes, the same
// bytes passed on), and, when it is JSON, learned from once next has
// served it (the router's pattern is known by then). A body over the
// limit, of another media type (or one a contract with a schema refuses:
// another charset, two Content-Types), or that does not parse is passed
// on unlearned.
func (g *Guard) learnFrom(w http.ResponseWriter, r *http.Request, next http.Handler) {
	in := input{r: r, header: r.Header}
	// Only a body a contract with a schema would read: the contract
	// learned from it must accept the request (a charset other than
	// utf-8, or two Content-Type headers, is 415 to it).
	isJSON, bad := mediaType(r.Header)
	// The method as the guard reads it, and learns it: in upper case.
	method := route.UpperMethod(r.Method)
	if !isJSON || bad != "" || method == http.MethodOptions || method == http.MethodHead {
		next.ServeHTTP(w, r)
		return
	}
	raw, plain, v := readBody(&in, g.opts.MaxBodyBytes)
	if v != nil {
		giveBack(r, raw)
		next.ServeHTTP(w, r)
		return
	}
	st := &state{guard: g, raw: raw, plain: plain}
	parsed := st.parse(g.opts.MaxDepth, nil) == nil
	r2 := r.WithContext(r.Context())
	r2.Body, r2.ContentLength = checkedBody(raw, nil), int64(len(raw))
	next.ServeHTTP(w, r2)
	if parsed {
		g.learner.Observe(r.Method, routerPatternOf(r2), r.URL.EscapedPath(), st.parsed().Root(), time.Now())
	}
}

// routerPatternOf is the pattern the router served r by, "" when unknown:
// ServeMux's (which it sets on the request it is given) or chi's.
func routerPatternOf(r *http.Request) string {
	if r.Pattern != "" {
		return r.Pattern
	}
	if rctx := chi.RouteContext(r.Context()); rctx != nil {
		return rctx.RoutePattern()
	}
	return ""
}

// Learned returns what the guard learned from traffic, as the JSON export
// that contractguard learn merge reads (merging the exports of several
// replicas gives exactly the contracts one replica seeing all the traffic
// would learn). It holds shapes, counts and dates, never a value but an
// enum's; nil when learning is off.
func (g *Guard) Learned() []byte {
	if g.learner == nil {
		return nil
	}
	b, err := json.Marshal(g.learner.Export())
	if err != nil { // the export is plain data; this does not happen
		g.log.Error("contractguard: learned state could not be exported", slog.Any("error", err))
		return nil
	}
	return b
}

// LearnedHandler serves [Guard.Learned] to GET requests, or 404 when
// learning is off. Mount it where only operators reach it, like the
// metrics handler.
func (g *Guard) LearnedHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.learner == nil {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(append(g.Learned(), '\n'))
	})
}
