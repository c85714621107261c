package contractguard

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/goccy/go-yaml/ast"

	"github.com/contractguard/contractguard/internal/expr"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/route"
	"github.com/contractguard/contractguard/internal/schema"
	"github.com/contractguard/contractguard/internal/yamljson"
)

//go:embed schema/policy.v0.1.json
var policySchema []byte

// PolicySchema returns the contract format (policy v0.1) as a draft-07
// JSON Schema: the file schema/policy.v0.1.json of this module. The loader
// checks every contract against it, so the published format and the
// loader agree. Each call returns a new copy.
func PolicySchema() []byte { return slices.Clone(policySchema) }

var policy = sync.OnceValues(func() (*schema.Schema, error) {
	doc, err := decodeSchemaFile("policy.v0.1.json", policySchema)
	if err != nil {
		return nil, err
	}
	c := schema.NewCompiler(nil, nil)
	if _, err := c.Compile("policy.v0.1.json", doc); err != nil {
		return nil, err
	}
	return c.CompileRef("policy.v0.1.json#/definitions/contract")
})

// loader builds the compiled contracts of one Options, collecting every
// problem instead of stopping at the first.
//
// A contract goes through four steps, each over every contract before the
// next: read and checked against the format (in parallel: each contract
// alone), its schema compiled (in parallel, once per distinct schema), its
// invariants compiled (in parallel, once per distinct schema and
// expression), and added to the set (in order, so that a conflict names
// the same contract every time). Nothing moves from load
// time to request time, and the errors are the same, in the same order,
// as one contract after the other would give.
type loader struct {
	opts     *Options
	learning error  // why a contract may not be in mode learn: nil when the licence entitles it
	dir      string // ContractsDir as given, for messages
	files    fs.FS  // the contracts folder; nil when there is none
	env      *expr.Env
	set      *contractSet
	errs     []error // of the folder and its files; a contract's own are in its job
	jobs     []*job
	bySchema map[*schema.Schema]*compiled // nil: contracts without a schema
}

func (l *loader) fail(file string, line int, contract string, err error) {
	l.errs = append(l.errs, &LoadError{File: file, Line: line, Contract: contract, Err: err})
}

// job is one contract on its way through the loader.
type job struct {
	file     string   // as in messages
	node     ast.Node // the contract in its file; nil in code
	code     Contract // in code
	source   string   // the compiled contract's Source
	resource string   // the name its schema is compiled under
	name     string   // "METHOD /endpoint" as far as known, for messages
	errs     []error

	raw     rawContract
	pattern route.Pattern
	key     string // the schema's content, as JSON: schemas alike are compiled once
	keyed   bool   // key is set
	ok      bool   // no problem so far
	read    bool   // it follows the format: the other steps apply
	schema  *schema.Schema
}

// fail records a problem of the contract at loc, JSON pointer tokens into
// its document: at the line of loc in a file, at line 0 in code.
func (j *job) fail(loc []string, err error) {
	line := 0
	if j.node != nil {
		line = yamljson.KeyLine(j.node, loc)
	}
	j.failAt(line, err)
}

func (j *job) failAt(line int, err error) {
	j.errs = append(j.errs, &LoadError{File: j.file, Line: line, Contract: j.name, Err: err})
	j.ok = false
}

// contractsFS opens the contracts folder: inside ContractsFS when it is set,
// else on disk through an os.Root, so that no symbolic link inside the
// folder can lead a $ref out of it.
func contractsFS(o *Options) (fsys fs.FS, done func(), err error) {
	dir := o.ContractsDir
	if o.ContractsFS != nil {
		if dir == "" {
			dir = "."
		}
		dir = path.Clean(strings.TrimPrefix(filepath.ToSlash(dir), "./"))
		if dir == "." {
			return o.ContractsFS, func() {}, nil
		}
		fsys, err := fs.Sub(o.ContractsFS, dir)
		return fsys, func() {}, err
	}
	if dir == "" {
		return nil, func() {}, nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	return root.FS(), func() { root.Close() }, nil
}

// loadContracts reads and compiles the contracts of the guard's options
// into a set. Any problem in any contract is an error (a *LoadError per
// problem, joined), and then the set is nil: a guard never runs half a
// set.
func (g *Guard) loadContracts() (*contractSet, error) {
	o := &g.opts
	files, done, err := contractsFS(o)
	if err != nil {
		return nil, &LoadError{File: o.ContractsDir, Err: err}
	}
	defer done() // everything, $refs included, is read by the time it returns
	l := &loader{opts: o, learning: g.learning, dir: o.ContractsDir, files: files, env: g.env, set: &contractSet{},
		bySchema: map[*schema.Schema]*compiled{}}
	if files != nil {
		l.loadDir()
	}
	for i, c := range o.Contracts {
		file := "Options.Contracts[" + strconv.Itoa(i) + "]"
		l.jobs = append(l.jobs, &job{file: file, code: c, source: file, resource: "?code=" + strconv.Itoa(i),
			name: strings.ToUpper(c.Method) + " " + c.Endpoint, ok: true})
	}
	inParallel(len(l.jobs), func(_, i int) { l.jobs[i].readContract() })
	l.compileSchemas()
	l.compilePrograms()
	for _, j := range l.jobs {
		if j.read {
			l.add(j)
		}
		l.errs = append(l.errs, j.errs...)
	}
	// By file and line, then contracts in code by their index.
	slices.SortStableFunc(l.errs, func(a, b error) int {
		ea, eb := a.(*LoadError), b.(*LoadError)
		ia, ib := inCodeIndex(ea.File), inCodeIndex(eb.File)
		switch {
		case ia != ib:
			return cmp.Compare(ia, ib) // files (-1) first
		case ia < 0 && ea.File != eb.File:
			return strings.Compare(ea.File, eb.File)
		}
		return ea.Line - eb.Line
	})
	if len(l.errs) > 0 {
		return nil, errors.Join(l.errs...)
	}
	return l.set, nil
}

// workers is how many goroutines inParallel runs for n calls.
func workers(n int) int { return max(1, min(runtime.GOMAXPROCS(0), n)) }

// inParallel calls f(w, 0) … f(w, n-1), on as many goroutines as
// GOMAXPROCS allows, and returns when every call has. w is the goroutine
// making the call, in [0, workers(n)): state indexed by it needs no lock.
// A panic in f is raised again in the caller's goroutine, as if the calls
// had been made there.
func inParallel(n int, f func(w, i int)) {
	if workers(n) == 1 {
		for i := range n {
			f(0, i)
		}
		return
	}
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		panicked atomic.Pointer[any]
	)
	for w := range workers(n) {
		wg.Go(func() {
			defer func() {
				if v := recover(); v != nil {
					panicked.CompareAndSwap(nil, &v)
				}
			}()
			for i := int(next.Add(1) - 1); i < n && panicked.Load() == nil; i = int(next.Add(1) - 1) {
				f(w, i)
			}
		})
	}
	wg.Wait()
	if v := panicked.Load(); v != nil {
		panic(*v)
	}
}

// inCodeIndex is i for the File "Options.Contracts[i]" of a contract in
// code, -1 for a file.
func inCodeIndex(file string) int {
	rest, ok := strings.CutPrefix(file, "Options.Contracts[")
	if !ok {
		return -1
	}
	i, err := strconv.Atoi(strings.TrimSuffix(rest, "]"))
	if err != nil {
		return -1
	}
	return i
}

func (l *loader) loadDir() {
	entries, err := fs.ReadDir(l.files, ".")
	if err != nil {
		l.fail(l.dir, 0, "", err)
		return
	}
	for _, e := range entries { // ReadDir sorts by name
		name := e.Name()
		switch path.Ext(name) {
		case ".yaml", ".yml", ".json":
		default:
			continue
		}
		if e.IsDir() {
			continue
		}
		data, err := fs.ReadFile(l.files, name)
		if err != nil {
			l.fail(l.display(name), 0, "", err)
			continue
		}
		l.loadFile(name, data)
	}
}

func (l *loader) display(name string) string {
	if l.dir == "" || l.dir == "." {
		return name
	}
	return filepath.Join(l.dir, name)
}

// loadFile parses a contracts file and makes a job of each contract in it.
func (l *loader) loadFile(name string, data []byte) {
	file := l.display(name)
	docs, err := yamljson.Parse(data)
	if err != nil {
		line, err := yamljson.Split(err, 0)
		l.fail(file, line, "", err)
		return
	}
	n := 0
	for _, d := range docs {
		nodes := []ast.Node{d.Body}
		if seq, ok := d.Body.(*ast.SequenceNode); ok {
			nodes = seq.Values
		}
		for _, node := range nodes {
			l.jobs = append(l.jobs, &job{file: file, node: node, source: file + ":" + strconv.Itoa(yamljson.Line(node)),
				resource: name + "?contract=" + strconv.Itoa(n), ok: true})
			n++
		}
	}
}

// readContract is the first step: the contract's document, checked
// against the contract format, and its endpoint. It reads nothing but the
// job, so jobs run it in parallel.
func (j *job) readContract() {
	var v any
	if j.node != nil {
		var err error
		if v, err = yamljson.Value(j.node); err != nil {
			line, err := yamljson.Split(err, yamljson.Line(j.node))
			j.name = ""
			j.failAt(line, err)
			return
		}
	} else {
		// Through JSON, so that any Go value that marshals to a schema is
		// accepted and numbers arrive as json.Number, as from a file.
		b, err := json.Marshal(j.code)
		if err != nil {
			j.failAt(0, err)
			return
		}
		parsed, err := jsonbody.Parse(b, jsonbody.MaxDepthLimit) // JSON: no need of the YAML reader
		if err != nil {
			j.failAt(0, err)
			return
		}
		v = parsed.Any()
	}
	doc, _ := v.(map[string]any)
	j.name = contractName(doc)
	if !checkPolicy(v, func(loc []string, msg string) { j.fail(loc, errors.New(msg)) }) {
		return
	}
	j.read = true
	raw := rawContract{endpoint: j.code.Endpoint, method: j.code.Method, invariants: j.code.Invariants, mode: j.code.Mode}
	if j.node != nil {
		raw = rawContract{endpoint: doc["endpoint"].(string), method: doc["method"].(string)}
		raw.mode, _ = doc["mode"].(string)
		if invs, ok := doc["invariants"].([]any); ok {
			for _, iv := range invs {
				m := iv.(map[string]any)
				raw.invariants = append(raw.invariants, Invariant{Expr: m["expr"].(string), Message: m["message"].(string)})
			}
		}
	}
	raw.schema, raw.hasSchema = doc["schema"]
	j.raw = raw
	if raw.hasSchema {
		if key, err := json.Marshal(raw.schema); err == nil {
			j.key, j.keyed = string(key), true
		}
	}
	pat, err := route.ParsePattern(raw.endpoint)
	if err != nil {
		j.fail([]string{"endpoint"}, fmt.Errorf("endpoint: %w", err))
		return
	}
	j.pattern = pat
}

type rawContract struct {
	endpoint, method string
	schema           any
	hasSchema        bool
	invariants       []Invariant
	mode             string // "", "enforce" or "learn": the policy schema has checked it
}

// compileSchemas is the second step: each distinct schema compiled once,
// on as many compilers as there are goroutines, for the contracts that
// have it. A schema that does not compile is compiled again for each of
// its contracts, in order, so that each error names its own place. (Every
// contract's resource is in the contracts folder, so a relative $ref
// resolves the same from each.)
func (l *loader) compileSchemas() {
	type distinct struct {
		doc      any
		resource string // of its first contract
		s        *schema.Schema
		err      error
	}
	byKey := map[string]*distinct{}
	var todo []*distinct
	for _, j := range l.jobs {
		if j.read && j.keyed && byKey[j.key] == nil {
			byKey[j.key] = &distinct{doc: j.raw.schema, resource: j.resource}
			todo = append(todo, byKey[j.key])
		}
	}
	files := l.files
	if files != nil {
		files = &lockedFS{fsys: files} // an fs.FS need not be safe for concurrent use
	}
	compilers := make([]*schema.Compiler, workers(len(todo)))
	inParallel(len(todo), func(w, i int) {
		if compilers[w] == nil {
			compilers[w] = schema.NewCompiler(files, decodeSchemaFile)
		}
		todo[i].s, todo[i].err = compilers[w].Compile(todo[i].resource, todo[i].doc)
	})
	var again *schema.Compiler
	for _, j := range l.jobs {
		if !j.read || !j.raw.hasSchema {
			continue
		}
		if j.keyed && byKey[j.key].err == nil {
			j.schema = byKey[j.key].s
			continue
		}
		if again == nil {
			again = schema.NewCompiler(files, decodeSchemaFile)
		}
		s, err := again.Compile(j.resource, j.raw.schema)
		if err == nil { // a schema whose content could not be written as a key
			j.schema = s
			continue
		}
		var se *schema.Error
		switch {
		case errors.As(err, &se) && se.Ref != "":
			l.failAtRef(j, se)
		case errors.As(err, &se):
			loc := append([]string{"schema"}, se.Pointer...)
			j.fail(loc, fmt.Errorf("%s: %s", strings.Join(loc, "/"), se.Message))
		default:
			j.fail([]string{"schema"}, fmt.Errorf("schema: %w", err))
		}
	}
}

// lockedFS serializes the reads of the schema compilers that run in
// parallel.
type lockedFS struct {
	mu   sync.Mutex
	fsys fs.FS
}

// Open is there for fs.FS; the compilers read with ReadFile.
func (l *lockedFS) Open(name string) (fs.File, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fsys.Open(name)
}

func (l *lockedFS) ReadFile(name string) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fs.ReadFile(l.fsys, name)
}

// compilePrograms is the third step: every distinct invariant of every
// distinct schema, compiled in the CEL environment of that schema. (A
// contract whose schema did not compile has its invariants compiled
// against a body of any shape, so that their own errors are reported too.)
// Each schema's environment and programs are one piece of work, and the
// pieces run in parallel.
func (l *loader) compilePrograms() {
	var todo []*compiled
	for _, j := range l.jobs {
		if !j.read || len(j.raw.invariants) == 0 {
			continue
		}
		c := l.bySchema[j.schema]
		if c == nil {
			c = &compiled{s: j.schema}
			l.bySchema[j.schema] = c
		}
		if c.programs == nil {
			c.programs = map[string]*program{}
			todo = append(todo, c)
		}
		for _, inv := range j.raw.invariants {
			if c.programs[inv.Expr] == nil {
				c.programs[inv.Expr] = &program{}
				c.order = append(c.order, inv.Expr)
			}
		}
	}
	inParallel(len(todo), func(_, i int) { l.compileAll(todo[i]) })
}

// compileAll compiles the programs of one schema.
func (l *loader) compileAll(c *compiled) {
	env, err := l.env.ForSchema(c.s)
	for _, src := range c.order {
		p := c.programs[src]
		if err != nil {
			p.err = err
			continue
		}
		p.prg, p.err = env.Compile(src)
	}
}

// add is the last step: the contract, compiled, into the set.
func (l *loader) add(j *job) {
	method := strings.ToUpper(j.raw.method)
	var rules *ruleWalker
	if len(j.raw.invariants) > 0 {
		rules = &ruleWalker{} // kind Invalid: the request as a whole
		programs := l.bySchema[j.schema].programs
		for i, inv := range j.raw.invariants {
			p := programs[inv.Expr]
			if p.err != nil {
				j.fail([]string{"invariants", strconv.Itoa(i), "expr"}, fmt.Errorf("invariants[%d]: %w", i, p.err))
				continue
			}
			rules.own = append(rules.own, rule{prg: p.prg, msg: inv.Message, where: method + " " + j.raw.endpoint + " invariant " + strconv.Itoa(i)})
		}
	}
	learn := j.raw.mode == ModeLearn || l.opts.LearningMode
	if j.raw.mode == ModeLearn && l.learning != nil {
		j.fail([]string{"mode"}, fmt.Errorf("mode: learn: %w", l.learning))
	}
	if !j.ok {
		return
	}
	c := newContract(contractSpec{method: method, endpoint: j.raw.endpoint, pattern: j.pattern, source: j.source,
		schema: j.schema, rules: rules, learn: learn})
	if err := l.set.add(c); err != nil {
		file, line := splitSource(j.source)
		j.errs = append(j.errs, &LoadError{File: file, Line: line, Contract: c.name(), Err: err})
	}
}

// compiled is what the loader compiled for one distinct schema (by its
// content): the schema, and the programs of its contracts' invariants,
// compiled in the CEL environment of that schema. Contracts with the same
// schema (and the same invariants) share them: a large set is mostly
// alike.
type compiled struct {
	s        *schema.Schema
	programs map[string]*program // by the expression
	order    []string            // the expressions, in the order first met
}

// program is an invariant compiled, or why it does not compile.
type program struct {
	prg *expr.Program
	err error
}

// failAtRef reports a $ref that could not be loaded at the line of that
// $ref, when the contract is in a file.
func (l *loader) failAtRef(j *job, se *schema.Error) {
	err := fmt.Errorf("schema: %s", se.Message)
	if j.node != nil {
		schemaNode := yamljson.Find(j.node, []string{"schema"})
		if line := yamljson.FindRef(schemaNode, schema.Root+j.resource, se.Ref); line > 0 {
			j.failAt(line, err)
			return
		}
	}
	j.fail([]string{"schema"}, err)
}

func splitSource(src string) (string, int) {
	if i := strings.LastIndexByte(src, ':'); i > 0 {
		if n, err := strconv.Atoi(src[i+1:]); err == nil {
			return src[:i], n
		}
	}
	return src, 0
}

// checkPolicy validates one contract document against the contract format
// and reports each problem in words an author reads.
func checkPolicy(doc any, fail func(loc []string, msg string)) bool {
	p, err := policy()
	if err != nil { // the embedded schema is tested; this cannot happen
		fail(nil, "contract format schema: "+err.Error())
		return false
	}
	return p.Explain(doc, func(loc []string, msg string) {
		where := strings.Join(loc, "/")
		switch {
		case len(loc) > 0 && msg == "is not allowed":
			msg = fmt.Sprintf("unknown key %q", loc[len(loc)-1])
			if len(loc) > 1 {
				msg += " in " + strings.Join(loc[:len(loc)-1], "/")
			}
		case len(loc) > 0 && msg == "is required":
			msg = fmt.Sprintf("missing %q", loc[len(loc)-1])
			if len(loc) > 1 {
				msg += " in " + strings.Join(loc[:len(loc)-1], "/")
			}
			loc = loc[:len(loc)-1]
		case where == "":
			msg = "a contract " + msg
		default:
			msg = where + ": " + msg
		}
		fail(loc, msg)
	})
}

// contractName is "METHOD /endpoint" from what a document has of both.
func contractName(doc map[string]any) string {
	m, _ := doc["method"].(string)
	e, _ := doc["endpoint"].(string)
	return strings.TrimSpace(strings.ToUpper(m) + " " + e)
}

// decodeSchemaFile reads a JSON or YAML file holding one document.
func decodeSchemaFile(name string, data []byte) (any, error) {
	docs, err := yamljson.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(docs) != 1 {
		return nil, fmt.Errorf("%s: holds %d documents, want 1", name, len(docs))
	}
	v, err := yamljson.Value(docs[0].Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}
