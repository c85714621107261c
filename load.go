package contractguard

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"

	"github.com/contractguard/contractguard/internal/expr"
	"github.com/contractguard/contractguard/internal/failure"
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

// contractFormat is the contract format as the loader checks it: whole;
// shallow, with a contract's schema taken as any object or boolean; and
// the format of a schema alone (draft-07's meta-schema, as the whole one
// refers to it). The schema compiler validates every schema against
// draft-07's meta-schema anyway, so a contract whose schema the compiler
// validates alike is read with the shallow format and its schema's format
// is explained only when it does not compile (readContract,
// compileSchemas): one validation of a schema where there were two, a
// schema's worth of validating per contract where contracts share it.
type contractFormat struct {
	whole, shallow, schema *schema.Schema
}

var policy = sync.OnceValues(func() (*contractFormat, error) {
	whole, err := decodeSchemaFile("policy.v0.1.json", policySchema)
	if err != nil {
		return nil, err
	}
	shallow, _ := decodeSchemaFile("policy.v0.1.json", policySchema)
	// A contract's schema: any object or boolean (draft-07's meta-schema
	// says no more of its type).
	shallow.(map[string]any)["definitions"].(map[string]any)["contract"].(map[string]any)["properties"].(map[string]any)["schema"] =
		map[string]any{"type": []any{"object", "boolean"}}
	c := schema.NewCompiler(nil, nil)
	if _, err := c.Compile("policy.v0.1.json", whole); err != nil {
		return nil, err
	}
	if _, err := c.Compile("shallow.json", shallow); err != nil {
		return nil, err
	}
	var f contractFormat
	if f.whole, err = c.CompileRef("policy.v0.1.json#/definitions/contract"); err != nil {
		return nil, err
	}
	if f.shallow, err = c.CompileRef("shallow.json#/definitions/contract"); err != nil {
		return nil, err
	}
	f.schema, err = c.CompileRef("policy.v0.1.json#/definitions/contract/properties/schema")
	return &f, err
})

// loader builds the compiled contracts of one Options, collecting every
// problem instead of stopping at the first.
//
// A contract goes through four steps, each over every contract before the
// next: read and checked against the format (in parallel: each file, or
// contract in code, alone), its schema compiled (in parallel, once per
// distinct schema), its invariants compiled (in parallel, once per
// distinct schema and expression), and added to the set (in order, so
// that a conflict names the same contract every time). No error moves from
// load time to request time (a schema's native fast path, which cannot
// fail, is compiled by its first request: internal/schema), and the errors
// are the same, in the same order, as one contract after the other would
// give.
type loader struct {
	opts     *Options
	learning error  // why a contract may not be in mode learn: nil when the licence entitles it
	dir      string // ContractsDir as given, for messages
	files    fs.FS  // the contracts folder; nil when there is none
	env      *expr.Env
	set      *contractSet
	errs     []error                      // of the folder; a file's are in its unit, a contract's in its job
	units    []*unit                      // in order: the folder's files by name, then the contracts in code
	jobs     []*job                       // the units' jobs, in order
	keys     sync.Map                     // a schema's key → the one copy of it the jobs keep
	folder   *sharedFS                    // files, read one goroutine at a time; nil when there is none
	bySchema map[*schema.Schema]*compiled // nil: contracts without a schema
}

func (l *loader) fail(file string, line int, contract string, err error) {
	l.errs = append(l.errs, &LoadError{File: file, Line: line, Contract: contract, Err: err})
}

// unit is what the first step reads as one piece of work: a contracts
// file (by name; read, parsed and let go by the goroutine that reads its
// contracts, so a load holds as many syntax trees as it has goroutines,
// not the folder's) or a contract in code (its job).
type unit struct {
	name string // the file's name in the folder
	jobs []*job
	errs []error // of the file as a whole
}

// job is one contract on its way through the loader.
type job struct {
	file     string    // as in messages
	folder   *sharedFS // the folder it is in, and its name there; nil in code
	fileName string
	index    int               // its place among the file's contracts
	node     ast.Node          // the contract in its file while the file is read, or again for a message; nil in code
	anchors  *yamljson.Anchors // of its document, while the file is read
	code     Contract          // in code
	source   string            // the compiled contract's Source
	resource string            // the name its schema is compiled under: a URL relative to schema.Root, the file's name escaped
	name     string            // "METHOD /endpoint" as far as known, for messages
	errs     []error

	raw     rawContract
	pattern route.Pattern
	key     string // the schema's content, as JSON: schemas alike are compiled once
	keyed   bool   // key is set
	ok      bool   // no problem so far
	read    bool   // it follows the format: the other steps apply
	schema  *schema.Schema

	schemaLater bool // its schema's format is left to the schema compiler (contractFormat)
	keyDoc      any  // in code: the schema as the strict reader reads its key, kept by the job that stored the key
}

// fail records a problem of the contract at loc, JSON pointer tokens into
// its document: at the line of loc in a file, at line 0 in code.
func (j *job) fail(loc []string, err error) {
	line := 0
	if n := j.nodeOf(); n != nil {
		line = yamljson.KeyLine(n, loc)
	}
	j.failAt(line, err)
}

// codeUTF8 reports whether the texts of a contract in code are UTF-8,
// failing it at the first that is not. The format is checked on its JSON
// form, where encoding/json writes U+FFFD for a byte that is not, but the
// texts are kept as given: an endpoint "/caf\xe9" loaded, its bytes then
// in metrics' route labels and in events, which exporters refuse (a
// file's texts are UTF-8, or refused, as JSON or YAML).
func (j *job) codeUTF8() bool {
	type text struct {
		loc []string
		s   string
	}
	texts := []text{{[]string{"endpoint"}, j.code.Endpoint}, {[]string{"method"}, j.code.Method}, {[]string{"mode"}, j.code.Mode}}
	for i, inv := range j.code.Invariants {
		at := []string{"invariants", strconv.Itoa(i)}
		texts = append(texts, text{append(at, "expr"), inv.Expr}, text{append(at, "message"), inv.Message})
	}
	for _, t := range texts {
		if !utf8.ValidString(t.s) {
			j.fail(t.loc, fmt.Errorf("%s: %q is not valid UTF-8", where(t.loc), t.s))
			return false
		}
	}
	return true
}

// nodeOf is the contract in its file, nil in code. The first step drops
// the file and its syntax tree once its contracts are read (a folder's
// trees at once would be many times its size); a problem found later reads
// and parses the file again to say where, from one goroutine (the later
// steps report in order), once for all the problems of the file
// (sharedFS.nodes). Only the line of the message depends on it: a file
// changed since is read as it is now.
func (j *job) nodeOf() ast.Node {
	if j.node == nil && j.folder != nil {
		if nodes := j.folder.nodes(j.fileName); j.index < len(nodes) {
			j.node = nodes[j.index]
		}
	}
	return j.node
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
	// A folder on disk may change while it is read: a Kubernetes
	// ConfigMap's update swaps its ..data link, and a load that read some
	// files before the swap and some after made a set of old and new
	// contracts that no one deployed (until the next reload, if any). A
	// load whose folder looks otherwise after it than before is done
	// again, the folder opened anew (a ContractsDir that is a link, into
	// ..data or to a release, was opened at what it led to, which the
	// update may have removed); three times changed, it fails, and a
	// reload keeps the set in force.
	for range maxLoadsWhileChanging {
		set, changed, err := g.loadOnce()
		if !changed {
			return set, err
		}
	}
	return nil, &LoadError{File: o.ContractsDir, Err: fmt.Errorf("the folder changed while it was read, %d times: the contracts would be a mix of two versions", maxLoadsWhileChanging)}
}

// loadOnce opens the contracts folder and loads it, as loadContracts;
// changed reports a folder on disk that changed while it was read.
func (g *Guard) loadOnce() (_ *contractSet, changed bool, _ error) {
	o := &g.opts
	files, done, err := contractsFS(o)
	if err != nil {
		return nil, false, &LoadError{File: o.ContractsDir, Err: err}
	}
	defer done() // everything, $refs included, is read by the time it returns
	if files == nil || o.ContractsFS != nil {
		set, err := g.loadFrom(files)
		return set, false, err
	}
	before, stampErr := stampFolder(files)
	set, err := g.loadFrom(files)
	if stampErr != nil {
		// A folder that cannot be stat'd (listed but not searched:
		// chmod 644) cannot be read either: the load's own error says
		// why, not three loads of a folder taken as changing.
		if err == nil {
			err = &LoadError{File: o.ContractsDir, Err: stampErr}
		}
		return nil, false, err
	}
	after, stampErr := stampFolder(files)
	changed = stampErr != nil || !before.same(after)
	if changed && err == nil && set.seen != nil && !readsOtherwise(files, set.seen) {
		// Something else changed in the folder (a file of another
		// program's, made and removed): every file the load read reads
		// the same, and no contracts file came or went. The set is one
		// version's.
		changed = false
	}
	return set, changed, err
}

// maxLoadsWhileChanging is how many times a load reads a folder that
// changes while it is read (loadContracts).
const maxLoadsWhileChanging = 3

// testHookRead, when set, is called by a load before it reads each file
// of the contracts folder, with its name.
var testHookRead func(name string)

// folderStamp is what a load can tell of a contracts folder's changes
// without reading it, in two stats whatever its size: the folder itself,
// whose modification time an entry added, removed or renamed into place
// changes (a ConfigMap's update renames a new link over ..data; editors
// save by renaming), and the folder ..data leads to, a new one on every
// update. (A file written over in place is not seen: that is a half
// written file, which no stamp tells.)
type folderStamp struct{ dir, data fs.FileInfo }

// stampFolder stamps fsys; the error is that of the folder's stat.
func stampFolder(fsys fs.FS) (folderStamp, error) {
	dir, err := fs.Stat(fsys, ".")
	if err != nil {
		return folderStamp{}, err
	}
	data, _ := fs.Stat(fsys, "..data") // none: nil
	return folderStamp{dir, data}, nil
}

func (a folderStamp) same(b folderStamp) bool {
	unchanged := func(x, y fs.FileInfo) bool {
		if x == nil || y == nil {
			return x == nil && y == nil
		}
		return os.SameFile(x, y) && x.ModTime().Equal(y.ModTime()) && x.Size() == y.Size()
	}
	return unchanged(a.dir, b.dir) && unchanged(a.data, b.data)
}

// loadFrom reads and compiles the contracts of files (nil: none) and of
// the options' code into a set, as loadContracts.
func (g *Guard) loadFrom(files fs.FS) (*contractSet, error) {
	o := &g.opts
	l := &loader{opts: o, learning: g.learning, dir: o.ContractsDir, files: files, folder: newSharedFS(files, o.ContractsFS == nil), env: g.env,
		set: &contractSet{}, bySchema: map[*schema.Schema]*compiled{}}
	if files != nil {
		l.loadDir()
	}
	for i, c := range o.Contracts {
		file := "Options.Contracts[" + strconv.Itoa(i) + "]"
		l.units = append(l.units, &unit{jobs: []*job{{file: file, code: c, source: file, resource: "?code=" + strconv.Itoa(i),
			name: failure.Printable(strings.ToUpper(c.Method) + " " + c.Endpoint), ok: true}}})
	}
	inParallel(len(l.units), func(i int) { l.read(l.units[i]) })
	for _, u := range l.units {
		l.errs = append(l.errs, u.errs...)
		l.jobs = append(l.jobs, u.jobs...)
	}
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
	if l.folder != nil {
		l.set.seen = l.folder.seen
	}
	return l.set, nil
}

// inParallel calls f(0) … f(n-1), on as many goroutines as GOMAXPROCS
// allows, and returns when every call has. A panic in f is raised again
// in the caller's goroutine, as if the calls had been made there.
func inParallel(n int, f func(i int)) {
	inParallelWith(n, func() func(int) { return f })
}

// inParallelWith is inParallel with a function of each goroutine's own:
// newWorker is called once on each, and what it returns is called there.
func inParallelWith(n int, newWorker func() func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		if n > 0 {
			f := newWorker()
			for i := range n {
				f(i)
			}
		}
		return
	}
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		panicked atomic.Pointer[any]
	)
	for range workers {
		wg.Go(func() {
			defer func() {
				if v := recover(); v != nil {
					panicked.CompareAndSwap(nil, &v)
				}
			}()
			f := newWorker()
			for i := int(next.Add(1) - 1); i < n && panicked.Load() == nil; i = int(next.Add(1) - 1) {
				f(i)
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
	names, misnamed, err := contractFiles(l.files)
	if err != nil {
		l.fail(l.dir, 0, "", err)
		return
	}
	for _, name := range misnamed {
		// orders.YAML: a contract, by any reading but the glob's, that
		// would be left out without a word, its route unguarded. The
		// folder's other files are still read, for their problems too.
		l.fail(l.display(name), 0, "", errMisnamed)
	}
	for _, name := range names {
		l.units = append(l.units, &unit{name: name})
	}
}

// errMisnamed is the problem of a file named as a contracts file but for
// the letter case of its extension.
var errMisnamed = errors.New("a contracts file's name ends in .yaml, .yml or .json, in lower case: rename it, or move it out of the folder")

// contractFiles names the contracts files of a folder, in order, and the
// files named as contracts files but for the letter case of their
// extension (orders.YAML), which a load refuses.
func contractFiles(fsys fs.FS) (names, misnamed []string, err error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries { // ReadDir sorts by name
		name := e.Name()
		if e.IsDir() {
			continue
		}
		if !isContractsFile(name) {
			if isContractsFile(strings.ToLower(name)) {
				misnamed = append(misnamed, name)
			}
			continue
		}
		names = append(names, name)
	}
	return names, misnamed, nil
}

// isContractsFile reports whether name, a path in the contracts folder,
// is one that a load reads as a contracts file: a *.yaml, *.yml or
// *.json at the top of the folder. Not a hidden one, as the glob *.yaml
// leaves it: an editor's lock file (Emacs's .#a.yaml, a link to nowhere
// while a.yaml is edited) or a hidden copy is not a contract file.
func isContractsFile(name string) bool {
	if strings.HasPrefix(name, ".") || strings.ContainsRune(name, '/') {
		return false
	}
	switch path.Ext(name) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// decodeFolderSchema is decodeSchemaFile for a $ref in the contracts
// folder, which may not read a contracts file: read whole, a contract
// is no schema (its endpoint, method and schema are no keywords, so it
// accepts any body), and a $ref into one (a.yaml#/schema) is refused as
// one naming a contract's schema (a.yaml?contract=0) is. The contracts
// files of the load are compared in any letter case too: on a file
// system that ignores it (macOS, Windows), A.YAML is a.yaml.
func (l *loader) decodeFolderSchema() schema.DecodeFunc {
	files := map[string]bool{}
	for _, u := range l.units {
		if u.name != "" {
			files[strings.ToLower(u.name)] = true
		}
	}
	return func(name string, data []byte) (any, error) {
		if isContractsFile(name) || files[strings.ToLower(name)] {
			return nil, schema.RefIntoContract(name)
		}
		return decodeSchemaFile(name, data)
	}
}

func (l *loader) display(name string) string {
	if l.dir == "" || l.dir == "." {
		return name
	}
	return filepath.Join(l.dir, name)
}

// read is the first step for one unit: a file parsed and each of its
// contracts read (then its syntax tree dropped), or a contract in code
// read. It reads nothing but the unit, so units run it in parallel.
func (l *loader) read(u *unit) {
	if u.name == "" {
		l.readContract(u.jobs[0])
		return
	}
	file := l.display(u.name)
	if testHookRead != nil {
		testHookRead(u.name)
	}
	data, err := l.folder.read(u.name)
	if err != nil {
		u.errs = append(u.errs, &LoadError{File: file, Err: err})
		return
	}
	docs, err := yamljson.Parse(data)
	if err != nil {
		line, err := yamljson.Split(err, 0)
		u.errs = append(u.errs, &LoadError{File: file, Line: line, Err: err})
		return
	}
	n := 0
	for _, d := range docs {
		// The contracts of a list are read one by one, with the anchors
		// of the items before them: an alias stands for one anchored in
		// an earlier item, as in the document.
		anchors := yamljson.NewAnchors()
		for _, node := range documentContracts(d) {
			j := &job{file: file, folder: l.folder, fileName: u.name, index: n, node: node, anchors: anchors, source: file + ":" + strconv.Itoa(yamljson.Line(node)),
				resource: url.PathEscape(u.name) + "?contract=" + strconv.Itoa(n), ok: true}
			l.readContract(j)
			j.node, j.anchors = nil, nil
			u.jobs = append(u.jobs, j)
			n++
		}
	}
}

// contractNodes are the contracts of a file's documents: each document, or
// each item of a document that is a list.
func contractNodes(docs []yamljson.Document) []ast.Node {
	var nodes []ast.Node
	for _, d := range docs {
		nodes = append(nodes, documentContracts(d)...)
	}
	return nodes
}

// documentContracts are the contracts of one document: the document, or
// each item of a document that is a list, also an anchored one or one
// tagged !!seq (&all or --- !!seq before it), which YAML reads as the
// same list.
func documentContracts(d yamljson.Document) []ast.Node {
	n := d.Body
	for {
		switch b := n.(type) {
		case *ast.SequenceNode:
			return b.Values
		case *ast.AnchorNode:
			n = b.Value
			continue
		case *ast.TagNode:
			if b.Start.Value == "!!seq" {
				n = b.Value
				continue
			}
		}
		return []ast.Node{d.Body}
	}
}

// readContract is the first step for one contract: its document, checked
// against the contract format, its schema's key, and its endpoint.
func (l *loader) readContract(j *job) {
	var v any
	if j.node != nil {
		var err error
		anchors := j.anchors
		if anchors == nil {
			anchors = yamljson.NewAnchors()
		}
		if v, err = yamljson.ValueWith(j.node, anchors); err != nil {
			line, err := yamljson.Split(err, yamljson.Line(j.node))
			j.name = ""
			j.failAt(line, err)
			return
		}
	} else if !j.codeUTF8() {
		return
	} else if d, ok := codeDoc(&j.code); ok {
		v = d // plain JSON values: what the round trip below would make (codedoc.go)
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
	f, err := policy()
	if err != nil { // the embedded schema is tested; this cannot happen
		j.failAt(0, fmt.Errorf("contract format schema: %w", err))
		return
	}
	j.schemaLater = schemaLater(doc)
	if (!j.schemaLater || !f.shallow.Explain(v, func([]string, string) {})) && j.failFormat(f.whole, v, nil) {
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
	if raw.hasSchema {
		if key, err := json.Marshal(raw.schema); err == nil {
			// The key is the schema, kept once for all contracts alike; the
			// decoded schema is not kept for every contract until the next
			// step, only once for each key of a contract in code:
			k, loaded := l.keys.LoadOrStore(string(key), string(key))
			if !loaded && j.node == nil {
				// read from code, the schema is what the strict reader makes
				// of its key (codeDoc, or the round trip), so the compiler can
				// have it as it is. (A file's is not: see job.schemaDoc.)
				j.keyDoc = raw.schema
			}
			j.key, j.keyed, raw.schema = k.(string), true, nil
		}
	}
	j.raw = raw
	if route.MeansEveryMethod(route.UpperMethod(raw.method)) {
		// Tokens, but a request's method is neither: a contract that meant
		// every method would never match one, and check nothing.
		j.fail([]string{"method"}, fmt.Errorf("method: %s is not a method requests use: a contract covers one method; write one for each", failure.Printable(raw.method)))
		return
	}
	pat, err := route.ParsePattern(raw.endpoint)
	if err != nil {
		j.fail([]string{"endpoint"}, fmt.Errorf("endpoint: %w", err))
		return
	}
	j.pattern = pat
}

// schemaLater reports whether the format of doc's schema can be left to
// the schema compiler: the compiler validates it against the meta-schema
// of the draft its $schema names, draft-07 when none does, with the
// library's formats; the contract format, against draft-07 with ours,
// which are stricter for the one format of draft-07's meta-schema that
// they change: the uri of a $schema. So: a schema whose every $schema, if
// any, names draft-07.
func schemaLater(doc map[string]any) bool {
	s, ok := doc["schema"]
	return ok && onlyDraft07(s)
}

func onlyDraft07(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if k == "$schema" && e != "http://json-schema.org/draft-07/schema#" && e != "http://json-schema.org/draft-07/schema" {
				return false
			}
			if !onlyDraft07(e) {
				return false
			}
		}
	case []any:
		for _, e := range v {
			if !onlyDraft07(e) {
				return false
			}
		}
	}
	return true
}

type rawContract struct {
	endpoint, method string
	schema           any
	hasSchema        bool
	invariants       []Invariant
	mode             string // "", "enforce" or "learn": the policy schema has checked it
}

// compileSchemas is the second step: each distinct schema (by its
// content) compiled once, for the contracts that have it, on a compiler
// of each goroutine's own (a compiler compiles the draft-07 meta-schema
// once: one per schema cost 50 KB a contract). What a $ref finds cannot
// depend on which schemas a compiler compiled before, since one contract's
// schema cannot be another's $ref (internal/schema refuses a $ref or $id
// with a query), and the folder's files are read once for all compilers.
// A schema that does not compile is compiled again for each of its
// contracts, in order, so that each error names its own place. (Every
// contract's resource is in the contracts folder, so a relative $ref
// resolves the same from each.)
func (l *loader) compileSchemas() {
	type distinct struct {
		key      string
		resource string // of its first contract
		doc      any    // the key as the strict reader reads it, when a job kept it; nil: read the key
		s        *schema.Schema
		err      error
	}
	byKey := map[string]*distinct{}
	var todo []*distinct
	for _, j := range l.jobs {
		if !j.read || !j.keyed {
			continue
		}
		d := byKey[j.key]
		if d == nil {
			d = &distinct{key: j.key, resource: j.resource}
			byKey[j.key] = d
			todo = append(todo, d)
		}
		if d.doc == nil {
			d.doc = j.keyDoc
		}
		j.keyDoc = nil
	}
	var files fs.FS // nil, not a nil *sharedFS: the compilers then refuse relative $refs
	if l.folder != nil {
		files = l.folder
	}
	compile := func(c *schema.Compiler, resource string, doc any, key string) (*schema.Schema, error) {
		if doc == nil {
			parsed, err := jsonbody.Parse([]byte(key), jsonbody.MaxDepthLimit)
			if err != nil { // json.Marshal wrote it
				return nil, err
			}
			doc = parsed.Any()
		}
		s, err := c.Compile(resource, doc)
		if err == nil {
			if err = c.Loop(s, resource); err != nil {
				s = nil
			}
		}
		return s, err
	}
	decode := l.decodeFolderSchema()
	inParallelWith(len(todo), func() func(int) {
		c := schema.NewCompiler(files, decode)
		return func(i int) {
			d := todo[i]
			d.s, d.err = compile(c, d.resource, d.doc, d.key)
			d.doc = nil
		}
	})
	f, _ := policy() // readContract had it
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
			again = schema.NewCompiler(files, decode)
		}
		s, err := compile(again, j.resource, j.raw.schema, j.key)
		if err == nil { // a schema whose content could not be written as a key
			j.schema = s
			continue
		}
		if j.schemaLater && j.failFormat(f.schema, j.schemaDoc(), []string{"schema"}) {
			continue
		}
		var se *schema.Error
		switch {
		case errors.As(err, &se) && se.Ref != "":
			l.failAtRef(j, se)
		case errors.As(err, &se):
			loc := append([]string{"schema"}, se.Pointer...)
			j.fail(loc, fmt.Errorf("%s: %s", where(loc), se.Message))
		default:
			j.fail([]string{"schema"}, fmt.Errorf("schema: %w", err))
		}
	}
}

// schemaDoc is j's schema as the contract format read it: its key
// decoded by encoding/json, numbers as json.Number (the body parser,
// which compiles it, refuses some schemas the format takes: keys alike
// but for case, a number past its bounds).
func (j *job) schemaDoc() any {
	if !j.keyed {
		return j.raw.schema
	}
	d := json.NewDecoder(strings.NewReader(j.key))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil { // json.Marshal wrote it
		return nil
	}
	return v
}

// failFormat checks doc, at `at` in j's document, against f, a part of
// the contract format, and reports whether it breaks it. If it does, j
// ends with the format's problems, not read, and without anything found
// after its format was checked: as readContract ends a contract that
// breaks the format, even when the check of its schema was left to the
// schema compiler (contractFormat).
func (j *job) failFormat(f *schema.Schema, doc any, at []string) bool {
	ps := formatProblems(f, doc, at)
	if len(ps) == 0 {
		return false
	}
	// A job's earlier problems all end its read before its format is
	// checked: what it has now was found after.
	j.errs, j.ok, j.read = nil, true, false
	for _, p := range ps {
		j.fail(p.loc, errors.New(p.msg))
	}
	return true
}

// sharedFS is the contracts folder as one load reads it, one goroutine
// at a time (an fs.FS need not be safe for concurrent use). The schema
// compilers read through ReadFile, which reads each file once, so that
// every compiler sees the same bytes even if the file changes during the
// load; the contracts files are read with read, which keeps nothing.
type sharedFS struct {
	mu     sync.Mutex
	fsys   fs.FS
	cached map[string]sharedFile
	seen   folderRead // what the load read, for Watch to compare (nil: not kept)

	parsed      string     // the contracts file last parsed again for a message
	parsedNodes []ast.Node // its contracts; nil when it no longer parses
}

// newSharedFS is fsys for one load; keep says whether it notes what the
// load read (a folder on disk, which Watch may watch).
func newSharedFS(fsys fs.FS, keep bool) *sharedFS {
	if fsys == nil {
		return nil
	}
	f := &sharedFS{fsys: fsys, cached: map[string]sharedFile{}}
	if keep {
		f.seen = folderRead{}
	}
	return f
}

// read reads a contracts file, of which it keeps nothing but its sum.
func (f *sharedFS) read(name string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	data, err := fs.ReadFile(f.fsys, name)
	f.seen.note(name, data, err)
	return data, err
}

// nodes are the contracts of the contracts file name, read and parsed
// again. The last file's are kept: its problems are reported one after
// the other, and parsing it again for each made a file of a thousand
// contracts with a broken invariant take a minute.
func (f *sharedFS) nodes(name string) []ast.Node {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.parsed != name {
		f.parsed, f.parsedNodes = name, nil
		if data, err := fs.ReadFile(f.fsys, name); err == nil {
			if docs, err := yamljson.Parse(data); err == nil {
				f.parsedNodes = contractNodes(docs)
			}
		}
	}
	return f.parsedNodes
}

type sharedFile struct {
	data []byte
	err  error
}

// Open is there for fs.FS; the compilers read with ReadFile.
func (f *sharedFS) Open(name string) (fs.File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fsys.Open(name)
}

// ReadFile returns the bytes every caller gets; they must not change them.
func (f *sharedFS) ReadFile(name string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.cached[name]
	if !ok {
		r.data, r.err = fs.ReadFile(f.fsys, name)
		f.cached[name] = r
		f.seen.note(name, r.data, r.err)
	}
	return r.data, r.err
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
	estimates := l.env.NewEstimates() // invariants of one shape, estimated once for this load
	inParallel(len(todo), func(i int) { l.compileAll(todo[i], estimates) })
}

// compileAll compiles the programs of one schema.
func (l *loader) compileAll(c *compiled, estimates *expr.Estimates) {
	env, err := l.env.ForSchema(c.s)
	if err == nil {
		env.ShareEstimates(estimates)
	}
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
	if n := j.nodeOf(); n != nil {
		schemaNode := yamljson.Find(n, []string{"schema"})
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

// compareToken orders JSON pointer tokens: array indices by number,
// before names, names as strings.
func compareToken(a, b string) int {
	i, errA := strconv.Atoi(a)
	k, errB := strconv.Atoi(b)
	switch {
	case errA == nil && errB == nil:
		return cmp.Compare(i, k)
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// formatProblem is a way a contract breaks the contract format, at loc
// (JSON pointer tokens into the contract), in words an author reads.
type formatProblem struct {
	loc []string
	msg string
}

// formatProblems validates doc, at `at` in a contract, against f, a part
// of the contract format, and returns its problems by place (the library
// reports them in map order).
func formatProblems(f *schema.Schema, doc any, at []string) []formatProblem {
	var ps []formatProblem
	f.Explain(doc, func(loc []string, msg string) {
		loc = append(slices.Clip(at), loc...)
		at := where(loc)
		switch {
		case len(loc) > 0 && msg == "is not allowed":
			msg = fmt.Sprintf("unknown key %q", loc[len(loc)-1])
			if len(loc) > 1 {
				msg += " in " + where(loc[:len(loc)-1])
			}
		case len(loc) > 0 && msg == "is required":
			msg = fmt.Sprintf("missing %q", loc[len(loc)-1])
			if len(loc) > 1 {
				msg += " in " + where(loc[:len(loc)-1])
			}
			loc = loc[:len(loc)-1]
		case at == "":
			msg = "a contract " + msg
		default:
			msg = at + ": " + msg
		}
		ps = append(ps, formatProblem{loc, msg})
	})
	slices.SortFunc(ps, func(a, b formatProblem) int {
		return cmp.Or(slices.CompareFunc(a.loc, b.loc, compareToken), strings.Compare(a.msg, b.msg))
	})
	return ps
}

// where is a place in a contract, JSON pointer tokens, as a message
// names it: schema/properties/a, quoted when a key holds a line break or
// another character that does not print as itself, so that a message
// stays one line.
func where(loc []string) string {
	return failure.Printable(strings.Join(loc, "/"))
}

// contractName is "METHOD /endpoint" from what a document has of both.
func contractName(doc map[string]any) string {
	m, _ := doc["method"].(string)
	e, _ := doc["endpoint"].(string)
	return failure.Printable(strings.TrimSpace(strings.ToUpper(m) + " " + e))
}

// decodeSchemaFile reads a JSON or YAML file holding one document.
func decodeSchemaFile(name string, data []byte) (any, error) {
	docs, err := yamljson.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", failure.Printable(name), err)
	}
	if len(docs) != 1 {
		return nil, fmt.Errorf("%s: holds %d documents, want 1", failure.Printable(name), len(docs))
	}
	v, err := yamljson.Value(docs[0].Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", failure.Printable(name), err)
	}
	return v, nil
}
