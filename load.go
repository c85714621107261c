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
	"slices"
	"strconv"
	"strings"
	"sync"

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
type loader struct {
	opts     *Options
	learning error  // why a contract may not be in mode learn: nil when the licence entitles it
	dir      string // ContractsDir as given, for messages
	files    fs.FS  // the contracts folder; nil when there is none
	compiler *schema.Compiler
	env      *expr.Env
	set      *contractSet
	errs     []error
	schemas  map[string]*compiled         // by the schema's content
	bySchema map[*schema.Schema]*compiled // nil: contracts without a schema
}

func (l *loader) fail(file string, line int, contract string, err error) {
	l.errs = append(l.errs, &LoadError{File: file, Line: line, Contract: contract, Err: err})
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
		schemas: map[string]*compiled{}, bySchema: map[*schema.Schema]*compiled{}}
	l.compiler = schema.NewCompiler(files, decodeSchemaFile)
	if files != nil {
		l.loadDir()
	}
	for i, c := range o.Contracts {
		l.loadInCode(i, c)
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
			l.loadNode(file, name+"?contract="+strconv.Itoa(n), node)
			n++
		}
	}
}

// loadNode checks one contract of a file against the policy schema and
// compiles it.
func (l *loader) loadNode(file, resource string, node ast.Node) {
	v, err := yamljson.Value(node)
	if err != nil {
		line, err := yamljson.Split(err, yamljson.Line(node))
		l.fail(file, line, "", err)
		return
	}
	doc, _ := v.(map[string]any)
	name := contractName(doc)
	ok := checkPolicy(v, func(loc []string, msg string) {
		l.fail(file, yamljson.KeyLine(node, loc), name, errors.New(msg))
	})
	if !ok {
		return
	}
	raw := rawContract{
		file:     file,
		node:     node,
		endpoint: doc["endpoint"].(string),
		method:   doc["method"].(string),
		schema:   doc["schema"],
	}
	_, raw.hasSchema = doc["schema"]
	raw.mode, _ = doc["mode"].(string)
	if invs, ok := doc["invariants"].([]any); ok {
		for _, iv := range invs {
			m := iv.(map[string]any)
			raw.invariants = append(raw.invariants, Invariant{Expr: m["expr"].(string), Message: m["message"].(string)})
		}
	}
	line := yamljson.Line(node)
	src := file + ":" + strconv.Itoa(line)
	l.compile(raw, src, resource, func(loc []string, err error) {
		l.fail(file, yamljson.KeyLine(node, loc), name, err)
	})
}

func (l *loader) loadInCode(i int, c Contract) {
	file := "Options.Contracts[" + strconv.Itoa(i) + "]"
	// Through JSON, so that any Go value that marshals to a schema is
	// accepted and numbers arrive as json.Number, as from a file.
	b, err := json.Marshal(c)
	if err != nil {
		l.fail(file, 0, strings.ToUpper(c.Method)+" "+c.Endpoint, err)
		return
	}
	parsed, err := jsonbody.Parse(b, jsonbody.MaxDepthLimit) // JSON: no need of the YAML reader
	if err != nil {
		l.fail(file, 0, strings.ToUpper(c.Method)+" "+c.Endpoint, err)
		return
	}
	v := parsed.Any()
	doc := v.(map[string]any)
	name := contractName(doc)
	ok := checkPolicy(v, func(loc []string, msg string) {
		l.fail(file, 0, name, errors.New(msg))
	})
	if !ok {
		return
	}
	raw := rawContract{endpoint: c.Endpoint, method: c.Method, schema: doc["schema"], invariants: c.Invariants, mode: c.Mode}
	_, raw.hasSchema = doc["schema"]
	l.compile(raw, file, "?code="+strconv.Itoa(i), func(_ []string, err error) {
		l.fail(file, 0, name, err)
	})
}

type rawContract struct {
	file             string   // as in messages
	node             ast.Node // the contract in its file; nil in code
	endpoint, method string
	schema           any
	hasSchema        bool
	invariants       []Invariant
	mode             string // "", "enforce" or "learn": the policy schema has checked it
}

// compile turns a contract that follows the format into a compiled one
// and adds it to the set. fail receives the problem and where it is, as
// JSON pointer tokens into the contract document.
func (l *loader) compile(raw rawContract, source, resource string, fail func(loc []string, err error)) {
	method := strings.ToUpper(raw.method)
	ok := true
	pat, err := route.ParsePattern(raw.endpoint)
	if err != nil {
		fail([]string{"endpoint"}, fmt.Errorf("endpoint: %w", err))
		ok = false
	}
	var s *schema.Schema
	if raw.hasSchema {
		if s, err = l.schema(resource, raw.schema); err != nil {
			var se *schema.Error
			switch {
			case errors.As(err, &se) && se.Ref != "":
				l.failAtRef(raw, resource, se, fail)
			case errors.As(err, &se):
				loc := append([]string{"schema"}, se.Pointer...)
				fail(loc, fmt.Errorf("%s: %s", strings.Join(loc, "/"), se.Message))
			default:
				fail([]string{"schema"}, fmt.Errorf("schema: %w", err))
			}
			s, ok = nil, false
		}
	}
	var rules *ruleWalker
	if len(raw.invariants) > 0 {
		rules = &ruleWalker{} // kind Invalid: the request as a whole
		for i, inv := range raw.invariants {
			prg, err := l.program(s, inv.Expr)
			if err != nil {
				fail([]string{"invariants", strconv.Itoa(i), "expr"}, fmt.Errorf("invariants[%d]: %w", i, err))
				ok = false
				continue
			}
			rules.own = append(rules.own, rule{prg: prg, msg: inv.Message, where: method + " " + raw.endpoint + " invariant " + strconv.Itoa(i)})
		}
	}
	learn := raw.mode == ModeLearn || l.opts.LearningMode
	if raw.mode == ModeLearn && l.learning != nil {
		fail([]string{"mode"}, fmt.Errorf("mode: learn: %w", l.learning))
		ok = false
	}
	if !ok {
		return
	}
	c := newContract(contractSpec{method: method, endpoint: raw.endpoint, pattern: pat, source: source,
		schema: s, rules: rules, learn: learn})
	if err := l.set.add(c); err != nil {
		file, line := splitSource(source)
		l.fail(file, line, c.name(), err)
	}
}

// compiled is what the loader compiled for one distinct schema (by its
// content): the schema, the CEL environment its contracts' invariants
// are checked against, and their programs. Contracts with the same schema
// (and the same invariants) share them: a large set is mostly alike.
type compiled struct {
	s        *schema.Schema
	env      *expr.ContractEnv
	envErr   error
	programs map[string]*expr.Program
}

// schema compiles doc as the schema of the contract at resource, or finds
// it compiled for a contract before. A schema that does not compile is
// compiled again for each contract, so that each error names its own
// place. (Every contract's resource is in the contracts folder, so a
// relative $ref resolves the same from each.)
func (l *loader) schema(resource string, doc any) (*schema.Schema, error) {
	key, err := json.Marshal(doc)
	if err != nil {
		return l.compiler.Compile(resource, doc)
	}
	if c, ok := l.schemas[string(key)]; ok {
		return c.s, nil
	}
	s, err := l.compiler.Compile(resource, doc)
	if err == nil {
		l.schemas[string(key)] = &compiled{s: s}
		l.bySchema[s] = l.schemas[string(key)]
	}
	return s, err
}

// program compiles an invariant for a contract whose body schema is s
// (nil: none), once per schema and expression.
func (l *loader) program(s *schema.Schema, src string) (*expr.Program, error) {
	c := l.bySchema[s]
	if c == nil {
		c = &compiled{s: s}
		l.bySchema[s] = c
	}
	if c.env == nil && c.envErr == nil {
		c.env, c.envErr = l.env.ForSchema(s)
		c.programs = map[string]*expr.Program{}
	}
	if c.envErr != nil {
		return nil, c.envErr
	}
	if p, ok := c.programs[src]; ok {
		return p, nil
	}
	p, err := c.env.Compile(src)
	if err == nil {
		c.programs[src] = p
	}
	return p, err
}

// failAtRef reports a $ref that could not be loaded at the line of that
// $ref, when the contract is in a file.
func (l *loader) failAtRef(raw rawContract, resource string, se *schema.Error, fail func([]string, error)) {
	err := fmt.Errorf("schema: %s", se.Message)
	if raw.node != nil {
		schemaNode := yamljson.Find(raw.node, []string{"schema"})
		if line := yamljson.FindRef(schemaNode, schema.Root+resource, se.Ref); line > 0 {
			l.errs = append(l.errs, &LoadError{File: raw.file, Line: line, Contract: strings.ToUpper(raw.method) + " " + raw.endpoint, Err: err})
			return
		}
	}
	fail([]string{"schema"}, err)
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
