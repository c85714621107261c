package contractguard

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"

	"github.com/contractguard/contractguard/internal/expr"
	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/route"
	"github.com/contractguard/contractguard/internal/schema"
	"github.com/contractguard/contractguard/internal/shape"
)

// Contract is a contract given in code (Options.Contracts). Its fields mean
// what the keys of a contract file mean.
type Contract struct {
	// Endpoint is the path pattern: /users/:id or /users/{id}.
	Endpoint string `json:"endpoint,omitempty"`
	// Method is the HTTP method, case-insensitive.
	Method string `json:"method,omitempty"`
	// Schema is a JSON Schema (draft-07) for the body; nil for none. Any
	// value that encoding/json marshals to a schema will do.
	Schema map[string]any `json:"schema,omitempty"`
	// Invariants are CEL rules that must all be true.
	Invariants []Invariant `json:"invariants,omitempty"`
	// Mode is "enforce" (the default, also for "") or "learn": checked
	// exactly as in enforcement, but a request that would be rejected
	// reaches the handler and is reported instead (see
	// Options.LearningMode).
	Mode string `json:"mode,omitempty"`
}

// Invariant is one business rule of a contract.
type Invariant struct {
	Expr    string `json:"expr,omitempty"`    // CEL, must evaluate to true
	Message string `json:"message,omitempty"` // sent to the client when it does not
}

// ContractInfo describes a contract a guard enforces, as [Guard.Contracts]
// lists them.
type ContractInfo struct {
	// Method is the contract's HTTP method; "" for a typed contract, whose
	// routes are the router's.
	Method string
	// Endpoint is the contract's path pattern as written; for a typed
	// contract, the name of its Go type.
	Endpoint string
	// Source is where the contract comes from: "file:line",
	// "Options.Contracts[i]", or "type T" for a typed handler's.
	Source string
	// Mode is "enforce" or "learn" (the contract's, or every contract's
	// with Options.LearningMode).
	Mode string
}

// The modes of a contract.
const (
	ModeEnforce = "enforce" // a request that fails is rejected
	ModeLearn   = "learn"   // a request that fails is reported, and reaches the handler
)

// contract is one compiled contract, from a file, from code or from a Go
// type: what a request is checked against. Its checks run in this order:
// the schema, the decoding into body, the rules.
type contract struct {
	method   string        // upper case; "" for a typed contract
	endpoint string        // the pattern as written; a typed contract's type name
	pattern  route.Pattern // nil for a typed contract (its routes are the router's)
	source   string        // "file:line", "Options.Contracts[i]" or "type T", for messages

	schema  *schema.Schema // nil: any body
	numbers *shape.Numbers // how the rules read the body's numbers (from schema)
	skip    *shape.Skip    // what the vulnerability scan leaves out (from schema); nil: nothing
	body    reflect.Type   // the Go type the body is decoded into; nil: not decoded
	rules   *ruleWalker    // nil: no rules
	learn   bool           // mode learn: report what would be rejected, reject nothing

	// readsBody: the schema or a rule reads the body, which must then be
	// JSON (415 for another media type): rules cannot be held to a body
	// they see as null while the handler decodes it.
	readsBody bool

	floats *floatNode // exclusive bounds held again on the floats of body (floats.go); nil: none
}

// rule is one CEL rule of a contract, compiled: an invariant of a file or
// in-code contract, or a cg rule of a Go type.
type rule struct {
	prg   *expr.Program
	msg   string // what a client reads when the rule is false
	where string // names the rule in a debug log: "POST /a invariant 0", "main.T.Amount"
}

// contractSpec is what a contract is made of, wherever it comes from.
type contractSpec struct {
	method, endpoint string
	pattern          route.Pattern
	source           string
	schema           *schema.Schema
	body             reflect.Type
	rules            *ruleWalker
	learn            bool
	floats           *floatNode
}

// newContract is the one way a contract is made: files, code and typed
// handlers all come here, so what is derived from a schema is derived in
// one place.
func newContract(s contractSpec) *contract {
	c := &contract{method: s.method, endpoint: s.endpoint, pattern: s.pattern, source: s.source,
		schema: s.schema, body: s.body, rules: s.rules, learn: s.learn, floats: s.floats}
	c.readsBody = s.schema != nil || s.rules.readsBody()
	if s.schema != nil {
		c.numbers, c.skip = s.schema.Numbers(), s.schema.Skip()
	}
	return c
}

func (c *contract) name() string {
	if c.method == "" {
		return c.source
	}
	return c.method + " " + c.endpoint
}

func (c *contract) info() ContractInfo {
	mode := ModeEnforce
	if c.learn {
		mode = ModeLearn
	}
	return ContractInfo{Method: c.method, Endpoint: c.endpoint, Source: c.source, Mode: mode}
}

// contractSet is an immutable set of compiled contracts, by route: the
// registry a request is matched against.
type contractSet struct {
	tree route.Tree[*routeEntry]
	list []*contract // in load order
	seen folderRead  // what was read of the contracts folder on disk (Watch); nil when none was
}

// routeEntry is what one method and route shape must satisfy.
type routeEntry struct {
	contracts []*contract
	pattern   route.Pattern // for request.params
}

// add puts c in the set; a contract already there for the same method and
// route shape is an error naming both.
func (s *contractSet) add(c *contract) error {
	if old, ok := s.tree.Add(c.method, c.pattern, &routeEntry{contracts: []*contract{c}, pattern: c.pattern}); !ok {
		// Quoted when they would not print as themselves: a LoadError is
		// one line, and an endpoint or a file name may hold a line break.
		first := old.contracts[0]
		return fmt.Errorf("a contract for %s is already defined at %s", failure.Printable(c.method+" "+first.endpoint), failure.Printable(first.source))
	}
	s.list = append(s.list, c)
	return nil
}

// match finds the route entry of a request: method upper case, rawPath
// still percent-encoded; reencoded, when not "", the path as Go encodes
// it afresh (input.reencoded), read when rawPath matches nothing. segs
// are the segments of the reading that matched, in buf.
func (s *contractSet) match(method, rawPath, reencoded string, buf []string) (e *routeEntry, segs []string, ok bool) {
	if e, segs, ok = s.tree.Match(method, rawPath, buf); ok || reencoded == "" {
		return e, segs, ok
	}
	return s.tree.Match(method, reencoded, buf)
}

// hits appends to dst what the other readings of the path match
// (route.Tree.Hits), those of both its forms when it has two (rawPath
// and reencoded, as for match): e read as segs is what match found (ok).
func (s *contractSet) hits(method, rawPath, reencoded string, e *routeEntry, segs []string, ok bool, dst []route.Hit[*routeEntry]) []route.Hit[*routeEntry] {
	switch {
	case !ok:
		return dst
	case method == http.MethodHead:
		dst = s.getHits(rawPath, reencoded, e, dst)
	}
	if reencoded == "" {
		return s.tree.Hits(method, rawPath, e, segs, true, dst)
	}
	dst = s.tree.HitsOf(method, rawPath, e, segs, dst)
	return s.tree.HitsOf(method, reencoded, e, segs, dst)
}

// getHits appends to dst the GET contracts of a HEAD request's path when
// the most specific GET pattern it matches is not that of e, the HEAD
// contract it matched: Express and Fastify send a HEAD to the GET route
// of the path when no HEAD route is as specific (HEAD /users/me goes to
// GET /users/me beside HEAD /users/:id; found by review: only the HEAD
// /users/:id contract was checked).
func (s *contractSet) getHits(rawPath, reencoded string, e *routeEntry, dst []route.Hit[*routeEntry]) []route.Hit[*routeEntry] {
	var buf [16]string
	g, gsegs, ok := s.match(http.MethodGet, rawPath, reencoded, buf[:0])
	if !ok || g == e || g.pattern.Shape() == e.pattern.Shape() {
		return dst
	}
	dst = append(dst, route.Hit[*routeEntry]{V: g, Segs: slices.Clone(gsegs)})
	if reencoded == "" {
		return s.tree.Hits(http.MethodGet, rawPath, g, gsegs, true, dst)
	}
	dst = s.tree.HitsOf(http.MethodGet, rawPath, g, gsegs, dst)
	return s.tree.HitsOf(http.MethodGet, reencoded, g, gsegs, dst)
}

// loaded is the number of contracts in the set.
func (s *contractSet) loaded() int { return len(s.list) }

// fromFolder is the number of s's contracts that came from the contracts
// folder (Options.ContractsDir or ContractsFS): every set that loads has
// the contracts in code, o.Contracts, too.
func (s *contractSet) fromFolder(o *Options) int { return s.loaded() - len(o.Contracts) }

// earlierPass is the state of an earlier pass of g over the request (a
// typed handler behind Middleware), or nil: none, or only other guards'.
func (g *Guard) earlierPass(in *input) *state {
	if in.r == nil {
		return nil
	}
	return g.stateIn(in.r)
}

// pending appends to todo the contracts of the request that have not run
// on it: those of e, the route entry its path matched (if any), of others,
// the entries other readings of the path match, and typed, the contract of
// the typed handler it is routed to.
func pending(e *routeEntry, others []route.Hit[*routeEntry], typed routed, prev *state, todo []*contract) []*contract {
	if e != nil {
		for _, c := range e.contracts {
			if prev.notDone(c) {
				todo = append(todo, c)
			}
		}
	}
	for _, o := range others {
		for _, c := range o.V.contracts {
			if prev.notDone(c) && !slices.Contains(todo, c) {
				todo = append(todo, c)
			}
		}
	}
	if typed.c != nil && !typed.later && prev.notDone(typed.c) {
		todo = append(todo, typed.c)
	}
	return todo
}
