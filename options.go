package contractguard

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"

	"github.com/contractguard/contractguard/internal/jsonbody"
)

// Defaults for the zero values of [Options].
const (
	// DefaultMaxBodyBytes is the largest body read when Options.MaxBodyBytes is 0: 1 MiB.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultMaxDepth is the deepest nesting of arrays and objects accepted
	// when Options.MaxDepth is 0.
	DefaultMaxDepth = 64
	// DefaultCELCostLimit bounds the cost of each invariant's evaluation
	// when Options.CELCostLimit is 0. Measured (docs/contracts.md), a cost
	// unit of a rule over a list takes about 80 ns, so an evaluation stops
	// within about 8 ms: less than reading a 1 MiB body takes. (Kubernetes
	// allows 1,000,000 per call, for admission requests, which are rare.)
	DefaultCELCostLimit = 100_000
	// DefaultCELMaxEstimatedCost is the highest worst-case cost an
	// expression may be estimated to have, when Options.CELMaxEstimatedCost
	// is 0. It refuses rules that are quadratic in an unbounded list, and
	// admits linear ones, which the runtime limit bounds.
	DefaultCELMaxEstimatedCost = 10_000_000
)

// Options configures a [Guard]. A zero Options is valid: it guards nothing
// until contracts are given, with the defaults below.
type Options struct {
	// ContractsDir is a folder whose *.yaml, *.yml and *.json files are
	// loaded as contracts, in name order, without recursing. Subfolders can
	// hold schema files for $ref.
	ContractsDir string
	// ContractsFS, when set, is where ContractsDir is read (an embed.FS,
	// say); ContractsDir "" then means its root. Otherwise ContractsDir is
	// read from disk.
	ContractsFS fs.FS
	// Contracts are contracts given in code, loaded after the files.
	Contracts []Contract
	// SchemaFS is where typed handlers read schema files named by
	// cg:"schema=…" tags.
	SchemaFS fs.FS

	// User returns the user a request is made for, as context.user in
	// invariants: a map, or a struct whose json tags name its fields. With
	// no User, context.user is an empty map. It is called at most once a
	// request (see [User]), and must not call User on the request it is
	// given.
	User func(*http.Request) any

	// RequireContract rejects requests that match no contract, 403
	// NO_CONTRACT, instead of passing them through.
	RequireContract bool
	// MaxBodyBytes is the largest body accepted (413 above); 0 means
	// DefaultMaxBodyBytes. A body of more than 4 GiB - 1 bytes that it
	// allows is not parsed: 400 MALFORMED_JSON.
	MaxBodyBytes int64
	// MaxDepth is the deepest nesting of arrays and objects accepted (400
	// MALFORMED_JSON deeper); 0 means DefaultMaxDepth, at most 10000.
	MaxDepth int
	// CELCostLimit bounds the cost of each invariant's evaluation; an
	// invariant over it counts as false. 0 means DefaultCELCostLimit.
	CELCostLimit uint64
	// CELMaxEstimatedCost refuses, when the guard is built, an expression
	// whose estimated worst-case cost is higher: estimated from the
	// schema's maxItems, maxLength and maxProperties, else from what fits in
	// MaxBodyBytes. 0 means DefaultCELMaxEstimatedCost; math.MaxUint64
	// turns the check off (the runtime limit still holds).
	CELMaxEstimatedCost uint64

	// VulnerabilityScan checks, on every request that matches a contract,
	// every key and string value of the body, the query and the path
	// parameters for SQL injection, cross-site scripting, path traversal,
	// command injection, NoSQL operators and prototype pollution, after
	// the body is parsed and before the schema: 403 VULNERABILITY_DETECTED
	// with the path of each value flagged. A property whose schema says
	// x-contractguard-scan: false is not scanned (on the schema's root:
	// nothing of the contract's requests is). See docs/vulnerability-scan.md.
	VulnerabilityScan bool
	// LicenseKey is the licence key of the paid tier (docs/licensing.md):
	// an offline, signed key that entitles LearningMode and
	// SinkProtection. New refuses a paid feature the key does not entitle,
	// saying which and why, and warns about a key given with no paid
	// feature on that does not verify. The metrics stay free.
	LicenseKey string
	// LearningMode puts every contract in mode learn (report-only): each
	// is checked exactly as in enforcement, but a request that would be
	// rejected reaches the handler unchanged, and is counted
	// (requests_would_block), logged at warn level (at most once a minute
	// per contract and code, never a value), kept in
	// [Guard.LearningReport] and given to OnObserve. A single contract can
	// learn on its own with mode: learn. A typed handler still needs a
	// body that is its T. A paid-tier feature: LicenseKey must entitle
	// learning-mode. See docs/learning-mode.md.
	LearningMode bool
	// LearnSampleRate is the share of the requests that match no contract
	// that Middleware samples to learn contracts from (docs/learning-mode.md,
	// Guard.Learned): 0 means 0.1 with LearningMode and off without it; a
	// rate above 0 turns learning from traffic on by itself, while the
	// contracts enforce. Paid tier, as LearningMode.
	LearnSampleRate float64
	// SinkProtection keeps, for each request that passes its contracts,
	// the request's input (body strings and member names, query, path
	// parameters, headers, cookies) in its context, where the wrappers of
	// the sink package find it and block a SQL query, a command, a file
	// open or an outbound request whose structure the input changes
	// (docs/sink-protection.md). With LearningMode, blocks are reported and
	// the calls happen. Nothing is recorded, at no cost, when it is off. A
	// paid-tier feature: LicenseKey must entitle sink-protection.
	SinkProtection bool
	// Metrics enables [Guard.MetricsHandler]; the counters run either way.
	Metrics bool

	// OnObserve, when set, receives each request that a contract in mode
	// learn (or any contract, with LearningMode) would have rejected; the
	// request goes on to the handler. r is nil for Check. It runs on the
	// request's goroutine, before the handler: keep it quick.
	OnObserve func(r *http.Request, o *Observation)

	// OnReject writes a rejection. The default writes the JSON error body
	// with the violation's status; replace it for RFC 9457 problem details
	// or an application's own error shape.
	OnReject func(http.ResponseWriter, *http.Request, *Violation)
	// Logger receives one info line when the guard starts (contracts
	// loaded, features on) and one per reload, an error line for a reload
	// that fails, and debug lines for rejections (method, route, code,
	// detail paths, never values) and for invariants that fail to
	// evaluate. Nothing is logged per request at info level. nil means
	// slog.Default().
	Logger *slog.Logger

	// Disabled turns the guard off (the configuration's enabled: false):
	// no contract file is read, Middleware returns its handler as it is,
	// Check and CheckRequest pass everything, and typed handlers only
	// decode the body into T (a body that is not a T is still 400: the
	// handler cannot run without one). A typed handler's contract is still
	// built, so a bad one still fails Handle at start-up. Nothing is
	// counted, and contracts_loaded is 0. No licence key is checked, since
	// no paid feature runs: turning the guard off is how a service whose
	// key expired starts (docs/licensing.md).
	Disabled bool
}

func (o *Options) check() error {
	var errs []error
	if !(o.LearnSampleRate >= 0 && o.LearnSampleRate <= 1) { // NaN too
		errs = append(errs, errors.New("contractguard: Options.LearnSampleRate must be between 0 and 1"))
	}
	if o.MaxBodyBytes < 0 {
		errs = append(errs, errors.New("contractguard: Options.MaxBodyBytes must not be negative"))
	}
	if o.MaxDepth < 0 || o.MaxDepth > jsonbody.MaxDepthLimit {
		errs = append(errs, fmt.Errorf("contractguard: Options.MaxDepth must be between 0 and %d", jsonbody.MaxDepthLimit))
	}
	return errors.Join(errs...)
}

func (o *Options) defaults() {
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxDepth == 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.CELCostLimit == 0 {
		o.CELCostLimit = DefaultCELCostLimit
	}
	if o.CELMaxEstimatedCost == 0 {
		o.CELMaxEstimatedCost = DefaultCELMaxEstimatedCost
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.OnReject == nil {
		o.OnReject = writeViolation
	}
}
