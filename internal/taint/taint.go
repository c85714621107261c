// Package taint carries what a request brought in — its body's strings
// and member names, query, path parameters, headers and cookies — from the
// guard to the sinks (package sink), in the request's context.
//
// The guard fills a Request for a request it matched and answers
// ctx.Value(ContextKey{}) with it; a sink asks FromContext and, when
// nothing was recorded, does nothing. Nothing is copied: body strings
// share the body's memory (see jsonbody.Doc), header and cookie values
// are the request's own strings, and what must be parsed (the query, the
// cookies, a body the guard did not parse) is parsed once, on the first
// sink call of the request.
package taint

import (
	"bytes"
	"context"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/route"
)

// MinInputLen is the shortest input, in bytes, that the sinks consider.
// A single byte can at most end or break the token it lands in: it
// cannot both leave a string literal (or a shell word, or a path segment)
// and put something after it, so the worst a one-byte input does is make
// the call fail. Two bytes can (`1#` ends a MySQL query early, `..` climbs
// a directory), so two is where checking starts. Aikido Zen ignores
// inputs of one character for the same reason; Datadog's libddwaf starts
// its SQL check at three, which lets `1#` and `'#` through.
const MinInputLen = 2

// maxParseDepth bounds the nesting of a body the guard left unparsed and
// the sinks parse (the guard's own default).
const maxParseDepth = 64

// Source is where in the request an input came from.
type Source uint8

// The sources of input.
const (
	BodyValue Source = iota + 1 // a string value of the body (or the body itself, or a form field)
	BodyKey                     // a member name of a JSON body
	Query                       // a query parameter's value
	QueryName                   // a query parameter's name
	Param                       // a path parameter
	Header                      // a header's value (Host included)
	Cookie                      // a cookie's value
)

var sourceNames = [...]string{
	BodyValue: "body",
	BodyKey:   "body key",
	Query:     "query",
	QueryName: "query name",
	Param:     "path parameter",
	Header:    "header",
	Cookie:    "cookie",
}

// String is the source as a report names it: "body", "body key", "query",
// "query name", "path parameter", "header" or "cookie".
func (s Source) String() string {
	if int(s) < len(sourceNames) && sourceNames[s] != "" {
		return sourceNames[s]
	}
	return "unknown"
}

// Input is one value of a request.
type Input struct {
	Source Source
	// Name is the query parameter's, path parameter's, header's, cookie's
	// or form field's name; "" for JSON body inputs (see Request.Pointer)
	// and for query names (the name is the value).
	Name  string
	Value string
	node  int32 // JSON body inputs: the node's index in the document; -2-i: the i-th string of a text cut short; -1 otherwise
}

// ParamLister yields the path parameters of a matched request.
type ParamLister interface {
	EachParam(yield func(name, value string) bool)
}

// Reporter receives each blocked sink call. The guard counts it and logs a
// warning naming the sink, the route and the input's source and path,
// never its value.
type Reporter interface {
	SinkBlocked(r *Request, b Block)
}

// Block is a sink call stopped because an input changed its structure.
type Block struct {
	Sink   string // "sql", "shell", "file" or "http"
	Source Source
	Name   string // the JSON pointer of a body input, else the input's name
	Reason string // what the input did, without its value
	// Again: a further report of a call already reported (in report-only
	// mode a sink reports every input that would have blocked the call,
	// and every internal address its host resolves to): logged, but not
	// counted as another call.
	Again bool
}

// ContextKey is the context key under which a request's *Request is found.
// The guard's own context answers Value(ContextKey{}) with it.
type ContextKey struct{}

// NewContext returns ctx carrying r, for tests and for applications that
// record input without the guard.
func NewContext(ctx context.Context, r *Request) context.Context {
	return context.WithValue(ctx, ContextKey{}, r)
}

// FromContext is the Request recorded in ctx, or nil: then the sinks check
// nothing. It costs one context lookup and no allocation.
func FromContext(ctx context.Context) *Request {
	if ctx == nil {
		return nil
	}
	r, _ := ctx.Value(ContextKey{}).(*Request)
	return r
}

// Request is what the guard records of one request it matched, for the
// sinks. The guard fills the exported fields and puts it in the request's
// context; it is read-only after that, and safe for concurrent use by sinks
// (handlers fan out goroutines): what is computed lazily is computed once.
// A Request must not be copied after first use.
type Request struct {
	// Method and Route are the contract's method and endpoint pattern
	// ("POST", "/users/:id"), for reports; never the raw path.
	Method, Route string
	// Body is the parsed body (its strings share the body's memory), or nil.
	Body *jsonbody.Doc
	// Raw is a body the guard did not parse as JSON; nil otherwise. A JSON
	// or form body in Raw is parsed on first use; anything else is one
	// input.
	Raw      []byte
	RawQuery string
	// Host is the request's Host (Go moves it out of Header): applications
	// build links and callbacks from it.
	Host string
	// Header holds the headers and the Cookie header, read lazily.
	Header http.Header
	// Params are the path parameters; may be nil.
	Params ParamLister
	// ReportOnly is learning mode: a sink reports a block, then lets the
	// call happen.
	ReportOnly bool
	// Reporter receives blocks; may be nil.
	Reporter Reporter

	once    sync.Once
	query   []pair
	names   []string // the query's names, each once, in order
	params  []pair
	cookies []pair
	form    []pair
	fnames  []string // the form's names, each once, in order
	rawDoc  *jsonbody.Doc
	rawOne  bool     // Raw is one input
	cut     []Input  // the whole strings of a JSON text cut short (cutStrings)
	cutPtrs []string // their JSON pointers, by -2-node
	// tooLarge: the form body has more pairs than url.ParseQuery reads,
	// or the multipart body is past ReadForm's bounds (route.FormTooLarge,
	// route.MultipartFields), and its fields are not all inputs (TooLarge).
	tooLarge bool
}

// TooLarge reports a request whose form body holds more fields than its
// inputs are read to: a urlencoded one of more pairs than url.ParseQuery
// reads (10,000), or a multipart one past multipart.Reader.ReadForm's
// bounds (1,000 parts; 10,000 header lines). A Go handler's r.FormValue
// reads none of them, but one that reads on (r.MultipartReader, its own
// split of the body) does, and reading them all cost up to 32 bytes of
// memory a byte of body and 50 ms a megabyte: a sink fails closed on such
// a request (its call is blocked: too much input to check).
func (r *Request) TooLarge() bool {
	r.prepare()
	return r.tooLarge
}

type pair struct{ name, value string }

// prepare parses, once, what Inputs walks that is not parsed yet.
func (r *Request) prepare() {
	r.once.Do(func() {
		r.query = queryPairs(r.RawQuery)
		r.names = uniqueNames(r.query)
		if r.Params != nil {
			r.Params.EachParam(func(name, value string) bool {
				r.params = append(r.params, pair{name, value})
				return true
			})
		}
		for _, line := range r.Header["Cookie"] {
			r.cookies = cookiePairs(line, r.cookies)
		}
		if r.Body == nil && len(r.Raw) > 0 {
			r.parseRaw()
		}
	})
}

// parseRaw reads a body the guard left unparsed: a form (by its media
// type: urlencoded, or multipart, whose fields r.FormValue reads as it
// reads a urlencoded form's), JSON (by its media type, or by its first
// byte whatever the media type says: a handler may decode JSON sent as
// text/plain), or else one input.
func (r *Request) parseRaw() {
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case mt == "application/x-www-form-urlencoded":
		if body := unsafe.String(&r.Raw[0], len(r.Raw)); route.FormTooLarge(body) {
			r.tooLarge = true // not read: see TooLarge
		} else {
			r.form = queryPairs(body)
			r.fnames = uniqueNames(r.form)
			r.formJSON()
			return
		}
	case mt == "multipart/form-data" || mt == "multipart/mixed":
		// Its parts, and the body whole as before.
		r.form = multipartPairs(r.Raw, params["boundary"], &r.tooLarge)
		r.fnames = uniqueNames(r.form)
		r.rawOne = true
		r.formJSON()
		return
	case mt == "application/json" || strings.HasSuffix(mt, "+json") || looksJSON(r.Raw):
		if r.parseJSON() {
			return
		}
	}
	r.rawOne = true
}

// parseJSON reads Raw as JSON: its strings, or, of a text that stops
// reading as JSON, the whole strings up to there. It is false for the
// latter.
func (r *Request) parseJSON() bool {
	if d, err := jsonbody.Parse(r.Raw, maxParseDepth); err == nil {
		r.rawDoc = d
		return true
	}
	r.cut, r.cutPtrs = cutStrings(r.Raw)
	return false
}

// formJSON reads a form body that is JSON text as JSON too: a handler
// that decodes JSON whatever the media type says reads its strings with
// their escapes decoded (`{"a":"x\u0027; id"}` is `x'; id`), which the
// form's fields hold only escaped.
func (r *Request) formJSON() {
	if looksJSON(r.Raw) {
		r.parseJSON()
	}
}

// multipartPairs are the fields of a multipart body
// (route.MultipartFields), the empty ones too: a field sent empty has a
// name all the same (r.MultipartForm.Value's keys), which is input;
// Inputs leaves out the values too short to be one. It reads as far as
// ReadForm does, and sets *tooLarge past that.
func multipartPairs(b []byte, boundary string, tooLarge *bool) []pair {
	var ps []pair
	for name, v := range route.MultipartFields(b, boundary, tooLarge) {
		ps = append(ps, pair{name, v})
	}
	return ps
}

// cutStrings are the whole strings, names and values, of a JSON text up
// to where it stops reading as JSON: a body the guard read only in part
// (over its size limit, on a learning contract's early pass), whose
// values a handler that reads the rest will use; and the JSON pointer of
// each (for a member name, of the object that holds it, as Pointer says).
func cutStrings(b []byte) (ins []Input, ptrs []string) {
	dec := jsontext.NewDecoder(bytes.NewReader(b), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return ins, ptrs
		}
		if tok.Kind() != '"' {
			continue
		}
		src, ptr := BodyValue, string(dec.StackPointer())
		if kind, n := dec.StackIndex(dec.StackDepth()); kind == '{' && n%2 == 1 {
			src, ptr = BodyKey, ptr[:strings.LastIndexByte(ptr, '/')]
		}
		ins = append(ins, Input{Source: src, Value: tok.String(), node: int32(-2 - len(ptrs))})
		ptrs = append(ptrs, ptr)
	}
}

func looksJSON(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{', '[', '"':
			return true
		}
		return false
	}
	return false
}

// Inputs yields every input of the request at least MinInputLen bytes
// long: the body's string values and member names (numbers, booleans and
// null cannot carry syntax, and are left out), or a form body's fields'
// values and names (urlencoded or multipart), or
// an unparsed body as one input; each query parameter's name and values;
// the path parameters; every header's values, Host included; and each
// cookie's value.
//
// Every header is an input: an attacker sets any of them, and applications
// do write User-Agent, Referer, X-Forwarded-For or their own X- headers
// into queries, logs and URLs. The Cookie header is given cookie by cookie
// instead of as one line. Values are yielded as they are, not trimmed or
// decoded further.
func (r *Request) Inputs(yield func(Input) bool) { r.InputsFrom(MinInputLen, yield) }

// InputsFrom is Inputs with inputs from minLen bytes long (at least 1):
// for a sink to which a single byte can do harm (a shell glob).
func (r *Request) InputsFrom(minLen int, yield func(Input) bool) {
	minLen = max(minLen, 1)
	r.prepare()
	doc := r.doc()
	if doc != nil {
		for i := range doc.Nodes() {
			v := doc.Node(i)
			if v.Kind() != jsonbody.String {
				continue
			}
			s := v.Str()
			if len(s) < minLen {
				continue
			}
			src := BodyValue
			if v.IsName() {
				src = BodyKey
			}
			if !yield(Input{Source: src, Value: s, node: int32(i)}) {
				return
			}
		}
	}
	if r.rawOne && len(r.Raw) >= minLen {
		if !yield(Input{Source: BodyValue, Value: unsafe.String(&r.Raw[0], len(r.Raw)), node: -1}) {
			return
		}
	}
	for _, in := range r.cut {
		if len(in.Value) >= minLen && !yield(in) {
			return
		}
	}
	for _, p := range r.form {
		if len(p.value) >= minLen && !yield(Input{Source: BodyValue, Name: p.name, Value: p.value, node: -1}) {
			return
		}
	}
	for _, name := range r.fnames {
		// A form's names are the client's as a JSON body's member names are
		// (r.PostForm's keys, which handlers range over).
		if len(name) >= minLen && !yield(Input{Source: BodyKey, Value: name, node: -1}) {
			return
		}
	}
	for _, p := range r.query {
		if len(p.value) >= minLen && !yield(Input{Source: Query, Name: p.name, Value: p.value, node: -1}) {
			return
		}
	}
	for _, name := range r.names {
		if len(name) >= minLen && !yield(Input{Source: QueryName, Value: name, node: -1}) {
			return
		}
	}
	for _, p := range r.params {
		if len(p.value) >= minLen && !yield(Input{Source: Param, Name: p.name, Value: p.value, node: -1}) {
			return
		}
	}
	if len(r.Host) >= minLen && !yield(Input{Source: Header, Name: "Host", Value: r.Host, node: -1}) {
		return
	}
	for name, values := range r.Header {
		if name == "Cookie" {
			continue
		}
		for _, v := range values {
			if len(v) >= minLen && !yield(Input{Source: Header, Name: name, Value: v, node: -1}) {
				return
			}
		}
	}
	for _, p := range r.cookies {
		if len(p.value) >= minLen && !yield(Input{Source: Cookie, Name: p.name, Value: p.value, node: -1}) {
			return
		}
	}
}

// uniqueNames are the names of ps, each once, in the order they come:
// found once per request, as a walk of the inputs that looked back over
// the names before each would cost the square of their number (80,000
// names in a 700 kB query took 19 s, on every sink call).
func uniqueNames(ps []pair) []string {
	if len(ps) == 0 {
		return nil
	}
	names := make([]string, 0, len(ps))
	if len(ps) <= 16 {
	next:
		for _, p := range ps {
			for _, n := range names {
				if n == p.name {
					continue next
				}
			}
			names = append(names, p.name)
		}
		return names
	}
	seen := make(map[string]struct{}, len(ps))
	for _, p := range ps {
		if _, ok := seen[p.name]; !ok {
			seen[p.name] = struct{}{}
			names = append(names, p.name)
		}
	}
	return names
}

// doc is the parsed body: the guard's, or the one parsed from Raw.
func (r *Request) doc() *jsonbody.Doc {
	if r.Body != nil {
		return r.Body
	}
	return r.rawDoc
}

// Pointer is the JSON pointer of a body input: of its value, or, for a
// member name, of the object that holds it (so that the name, which is the
// input, is not repeated); "/name" for a form field and "" for a body that
// is one input. It walks the body, so it is for reports, not for every
// input. Inputs of other sources have no pointer: "".
func (r *Request) Pointer(in Input) string {
	if in.Source != BodyValue && in.Source != BodyKey {
		return ""
	}
	if in.node <= -2 {
		return r.cutPtrs[-2-in.node]
	}
	if in.node < 0 {
		if in.Name == "" {
			return ""
		}
		return failure.Pointer([]string{in.Name})
	}
	doc := r.doc()
	if doc == nil || int(in.node) >= doc.Nodes() {
		return ""
	}
	w := pointerWalk{target: int(in.node)}
	w.visit(doc.Root())
	return failure.Pointer(w.found)
}

// pointerWalk finds node target by counting nodes in the order of
// jsonbody.Doc.Nodes: each container before what it holds, each member
// name just before its value.
type pointerWalk struct {
	target, next int
	path         []string
	found        []string
	done         bool
}

func (w *pointerWalk) visit(v jsonbody.Value) {
	if w.next == w.target {
		w.found, w.done = append([]string(nil), w.path...), true
		return
	}
	w.next++
	switch v.Kind() {
	case jsonbody.Object:
		for i := range v.Len() {
			name, e := v.Member(i)
			if w.next == w.target { // the member name itself
				w.found, w.done = append([]string(nil), w.path...), true
				return
			}
			w.next++
			w.path = append(w.path, name)
			w.visit(e)
			w.path = w.path[:len(w.path)-1]
			if w.done {
				return
			}
		}
	case jsonbody.Array:
		for i := range v.Len() {
			w.path = append(w.path, strconv.Itoa(i))
			w.visit(v.Index(i))
			w.path = w.path[:len(w.path)-1]
			if w.done {
				return
			}
		}
	}
}

// Where is what a report says of an input's place: its JSON pointer for a
// body input, else its name ("" for a query name, whose name is the input).
func (r *Request) Where(in Input) string {
	if in.Source == BodyValue || in.Source == BodyKey {
		return r.Pointer(in)
	}
	return in.Name
}

// queryPairs reads a query string as url.ParseQuery does (route.GoPairs:
// pairs split on '&', '+' as space, a pair with ';' or a bad escape left
// out, as Go's server leaves it out of r.URL.Query()), keeping the order.
// Names and values without escapes share s.
func queryPairs(s string) []pair {
	if s == "" {
		return nil
	}
	// Grown as pairs come, not made for every '&' first: a query of a
	// million '&' (Go's header limit allows one) is no pair, and was a
	// slice of 32 MiB.
	var ps []pair
	for k, v := range route.GoPairs(s, "&") {
		ps = append(ps, pair{k, v})
	}
	return ps
}

// cookiePairs appends the cookies of one Cookie header line: name=value
// pairs split on ';', a value's surrounding double quotes removed. It is
// more lenient than net/http (which drops malformed cookies): an input too
// many costs nothing, one too few is a miss.
func cookiePairs(line string, ps []pair) []pair {
	for line != "" {
		var part string
		part, line, _ = strings.Cut(line, ";")
		part = strings.TrimSpace(part)
		name, value, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
			value = value[1 : len(value)-1]
		}
		ps = append(ps, pair{strings.TrimSpace(name), value})
	}
	return ps
}

// Report hands b to r's Reporter, if it has one.
func (r *Request) Report(b Block) {
	if r.Reporter != nil {
		r.Reporter.SinkBlocked(r, b)
	}
}
