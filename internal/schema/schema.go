// Package schema compiles and runs the JSON Schemas of contracts with
// github.com/santhosh-tekuri/jsonschema/v6, always as draft-07 with format
// assertion on, and turns its typed errors into short messages at JSON
// pointer paths.
package schema

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/shape"
)

// Root is the URL under which the contracts folder is seen by the schema
// compiler. Relative $refs resolve below it and may not leave it.
const Root = "file:///contracts/"

// Compiler compiles the schemas of one contract set. It is not safe for
// concurrent use; the schemas it returns are.
type Compiler struct {
	c *jsonschema.Compiler
	// meta checks a schema that applies a draft 2019-09 or later against
	// its draft's whole metaschema, as c did before AssertVocabs (see
	// checkMeta); nil until one is compiled.
	meta   *jsonschema.Compiler
	files  fs.FS
	decode DecodeFunc
	// clean are the compiled schemas Loop has walked with all they lead
	// to, and found no loop in: a schema file many contracts refer to is
	// walked once, not once for each (300 contracts with a $ref into a
	// file of 5,000 definitions loaded in 19 s, not 8 s).
	clean map[*jsonschema.Schema]bool
}

// DecodeFunc decodes a referenced schema file (JSON or YAML) into a JSON value.
type DecodeFunc func(name string, data []byte) (any, error)

// NewCompiler returns a compiler whose relative $refs are read from files
// (nil: relative $refs are an error) and decoded by decode. Nothing is ever
// fetched over the network.
func NewCompiler(files fs.FS, decode DecodeFunc) *Compiler {
	c := newLibraryCompiler(files, decode)
	c.RegisterVocabulary(foldVocab)
	c.AssertVocabs() // the letter-case check holds under a declared $schema of 2019-09 or later too
	return &Compiler{c: c, files: files, decode: decode}
}

func newLibraryCompiler(files fs.FS, decode DecodeFunc) *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.AssertFormat()
	registerFormats(c)
	c.RegisterVocabulary(scanVocab)
	c.UseLoader(loader{files, decode})
	return c
}

// checkMeta is the error of the schema at u, which c compiled as s, that
// its draft's metaschema finds, when s applies a draft of 2019-09 or
// later. Under AssertVocabs the library checks such a schema against the
// metaschemas of its draft's vocabularies only, not the draft's own,
// which alone reads definitions and dependencies as schemas: a
// definitions entry {"type": 5} or {"maximum": "100"} would load, and its
// keyword be dropped. So such a schema is compiled again, as before, by a
// compiler without AssertVocabs, whose error it is. doc is the schema at u
// (nil: a location inside a resource already added, or a file).
func (c *Compiler) checkMeta(u string, doc any, s *jsonschema.Schema) error {
	if !appliesDraft2019(s) {
		return nil
	}
	if c.meta == nil {
		c.meta = newLibraryCompiler(c.files, c.decode)
	}
	if doc != nil {
		if err := c.meta.AddResource(u, doc); err != nil {
			return &Error{Message: err.Error()}
		}
	}
	if _, err := c.meta.Compile(u); err != nil {
		return compileError(err, u)
	}
	return nil
}

// appliesDraft2019 reports whether s, or a schema it leads to, is of
// draft 2019-09 or later.
func appliesDraft2019(s *jsonschema.Schema) bool {
	seen := map[*jsonschema.Schema]bool{}
	for stack := []*jsonschema.Schema{s}; len(stack) > 0; {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s == nil || seen[s] {
			continue
		}
		if s.DraftVersion >= 2019 {
			return true
		}
		seen[s] = true
		stack = append(stack, sameValue(s)...)
		stack = append(stack, children(s)...)
	}
	return false
}

type loader struct {
	files  fs.FS
	decode DecodeFunc
}

func (l loader) Load(u string) (any, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return nil, err
	}
	if pu.Scheme != "file" || pu.Host != "" {
		return nil, fmt.Errorf("$ref to %s: schemas are never fetched over the network; put the file in the contracts folder and refer to it by a relative path", u)
	}
	if hasQuery(pu) { // queryRef refuses them first; kept as the loader's own guard
		return nil, intoContract("$ref", u)
	}
	name, ok := strings.CutPrefix(path.Clean(pu.Path), "/contracts/")
	if !ok || !fs.ValidPath(name) {
		return nil, fmt.Errorf("$ref to %s leaves the contracts folder", strings.TrimPrefix(u, "file://"))
	}
	if l.files == nil {
		return nil, fmt.Errorf("$ref to %s: relative references need Options.ContractsDir", failure.Printable(name))
	}
	data, err := fs.ReadFile(l.files, name)
	if err != nil {
		return nil, fmt.Errorf("$ref to %s: %w", failure.Printable(name), failure.PrintablePath(err))
	}
	var doc any
	if l.decode != nil {
		doc, err = l.decode(name, data)
	} else {
		doc, err = jsonschema.UnmarshalJSON(bytes.NewReader(data))
	}
	if err != nil {
		return nil, err
	}
	if key, ref := queryRef(u, doc); ref != "" {
		return nil, fmt.Errorf("%s: %w", name, intoContract(key, ref))
	}
	return doc, nil
}

// A contract's schema is compiled as file?contract=n (?code=n in code),
// and one contract's schema cannot be another's $ref: what the $ref
// found would depend on which contracts its compiler had compiled (the
// loader compiles on several), and a contracts file read whole is no
// schema. So no $ref, $id or $schema may hold a query (the compiler
// resolves all three), and nothing is loaded by one.
func intoContract(key, u string) error {
	if key != "$ref" {
		article := "a"
		if key == "$id" {
			article = "an"
		}
		return fmt.Errorf("%s %s: %s %s cannot hold a query: a contract's schema is named by one", key, u, article, key)
	}
	return RefIntoContract(strings.TrimPrefix(u, Root))
}

// RefIntoContract is the error of a $ref to name, a contract (its file):
// a schema shared by contracts is a file of its own.
func RefIntoContract(name string) error {
	return fmt.Errorf("$ref to %s: a $ref cannot point into a contract; put the shared schema in a file of its own and refer to that", failure.Printable(name))
}

func hasQuery(u *url.URL) bool { return u.RawQuery != "" || u.ForceQuery }

// queryRef is the first $ref, $id or $schema of doc (by key order) that
// holds a query: which one, and its value ($ref's resolved against base);
// "" when none does. Every schema is looked at, at every load, so the
// walk in key order, which sorts every object's keys, is made only once
// a walk in map order has found one.
func queryRef(base string, doc any) (key, ref string) {
	if !holdsQuery(doc) {
		return "", ""
	}
	return firstQueryRef(base, doc)
}

// queryKeys are the keywords the compiler resolves as URLs.
var queryKeys = [...]string{"$ref", "$id", "$schema"}

// withQuery is s as a URL when it holds a query.
func withQuery(s string) (*url.URL, bool) {
	if strings.IndexByte(s, '?') < 0 {
		return nil, false
	}
	u, err := url.Parse(s)
	return u, err == nil && hasQuery(u)
}

func holdsQuery(doc any) bool {
	switch v := doc.(type) {
	case map[string]any:
		for _, k := range queryKeys {
			if s, ok := v[k].(string); ok {
				if _, q := withQuery(s); q {
					return true
				}
			}
		}
		for _, e := range v {
			if holdsQuery(e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if holdsQuery(e) {
				return true
			}
		}
	}
	return false
}

func firstQueryRef(base string, doc any) (key, ref string) {
	switch v := doc.(type) {
	case map[string]any:
		for _, k := range queryKeys {
			if s, ok := v[k].(string); ok {
				if u, q := withQuery(s); q {
					if b, err := url.Parse(base); err == nil && k == "$ref" {
						return k, b.ResolveReference(u).String()
					}
					return k, s
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if key, ref := firstQueryRef(base, v[k]); ref != "" {
				return key, ref
			}
		}
	case []any:
		for _, e := range v {
			if key, ref := firstQueryRef(base, e); ref != "" {
				return key, ref
			}
		}
	}
	return "", ""
}

// Error is a schema that does not compile. Pointer locates the problem in
// the schema document when it is known.
type Error struct {
	Pointer []string
	Ref     string // the URL of a $ref that could not be loaded, or whose file is no valid schema, if that is the problem
	Message string
}

func (e *Error) Error() string {
	if len(e.Pointer) == 0 {
		return e.Message
	}
	return failure.Pointer(e.Pointer) + ": " + e.Message
}

// Compile compiles doc, a JSON value, as the schema at Root+name. name must
// be unique within the compiler; relative $refs in doc resolve against it.
func (c *Compiler) Compile(name string, doc any) (*Schema, error) {
	u := Root + name
	if key, ref := queryRef(u, doc); key != "" {
		e := &Error{Message: intoContract(key, ref).Error()}
		if key == "$ref" {
			e.Ref = ref // the loader names its line
		}
		return nil, e
	}
	if err := c.c.AddResource(u, doc); err != nil {
		return nil, &Error{Message: err.Error()}
	}
	s, err := c.c.Compile(u)
	if err != nil {
		return nil, compileError(err, u)
	}
	if err := c.checkMeta(u, doc, s); err != nil {
		return nil, err
	}
	return newSchema(s)
}

// Loop is the error of a schema of s, compiled as name, that applies
// itself to the value it checks ({$ref: '#'}, or definitions whose $refs
// lead back to themselves), at its place in the schema or, in a file a
// $ref reads, naming that file (Error.Ref); nil when there is none. Such
// a schema compiles, and the library fails every value that reaches it,
// saying only " is invalid" (which under not or if passes every value):
// an error of the schema found at request time, which a loader refuses
// at load.
func (s *Schema) Loop(name string) error {
	if loc := sameValueLoop(s.s, nil); loc != "" {
		return loopError(loc, Root+name)
	}
	return nil
}

// Loop is s.Loop for s, compiled by c as name, skipping the schemas an
// earlier Loop of c has walked (the schema files the schemas of a
// contract set share).
func (c *Compiler) Loop(s *Schema, name string) error {
	if c.clean == nil {
		c.clean = map[*jsonschema.Schema]bool{}
	}
	if loc := sameValueLoop(s.s, c.clean); loc != "" {
		return loopError(loc, Root+name)
	}
	return nil
}

// sameValueLoop is the location of a schema of s that applies itself to
// the very value it checks, through $ref and the keywords that apply a
// schema to the same value (allOf, anyOf, oneOf, not, if, then, else,
// dependencies): {$ref: '#'}, or a definition whose $ref leads back to it.
// Validating a value there never ends (the library stops it, failing
// that schema). "" when there is none. clean (nil: none) are schemas
// known to lead to no loop, walked with all they lead to: skipped, and
// given the schemas of this walk when it finds no loop.
func sameValueLoop(root *jsonschema.Schema, clean map[*jsonschema.Schema]bool) string {
	const (
		unseen = iota
		open   // on the path being followed
		done
	)
	state := map[*jsonschema.Schema]int{}
	var loop string
	// same follows the same-value edges from s, reporting a schema met
	// again while it is open; all follows every subschema, so that each
	// schema is the start of a walk.
	var same func(s *jsonschema.Schema) bool
	same = func(s *jsonschema.Schema) bool {
		if s == nil || state[s] == done || clean[s] {
			return false
		}
		if state[s] == open {
			loop = s.Location
			return true
		}
		state[s] = open
		for _, n := range sameValue(s) {
			if same(n) {
				return true
			}
		}
		state[s] = done
		return false
	}
	seen := map[*jsonschema.Schema]bool{}
	stack := []*jsonschema.Schema{root}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s == nil || seen[s] || clean[s] {
			continue
		}
		seen[s] = true
		if same(s) {
			return loop
		}
		stack = append(stack, sameValue(s)...)
		stack = append(stack, children(s)...)
	}
	if clean != nil {
		for s := range seen {
			clean[s] = true
		}
	}
	return ""
}

// sameValue are the schemas s applies to the value it checks.
func sameValue(s *jsonschema.Schema) []*jsonschema.Schema {
	if refOnly(s) {
		return []*jsonschema.Schema{s.Ref}
	}
	out := []*jsonschema.Schema{s.Ref, s.RecursiveRef, s.Not, s.If, s.Then, s.Else}
	if s.DynamicRef != nil {
		out = append(out, s.DynamicRef.Ref)
	}
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	out = append(out, s.OneOf...)
	for _, k := range slices.Sorted(maps.Keys(s.Dependencies)) {
		if d, ok := s.Dependencies[k].(*jsonschema.Schema); ok {
			out = append(out, d)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.DependentSchemas)) {
		out = append(out, s.DependentSchemas[k])
	}
	return slices.DeleteFunc(out, func(s *jsonschema.Schema) bool { return s == nil })
}

// refOnly reports whether s checks its value by its $ref alone: before
// draft 2019-09 the keywords beside a $ref are ignored. The library still
// compiles if, then and else there, and passes them by, so a loop
// through them ({$ref: '#/definitions/a', if: {$ref: '#'}}) never runs.
func refOnly(s *jsonschema.Schema) bool { return s.Ref != nil && s.DraftVersion < 2019 }

// children are the schemas s applies to the values inside the value it
// checks: members, member names, elements. A schema checked by its $ref
// alone applies none (the library compiles contains and propertyNames
// beside such a $ref too, and never runs them).
func children(s *jsonschema.Schema) []*jsonschema.Schema {
	if refOnly(s) {
		return nil
	}
	out := []*jsonschema.Schema{s.PropertyNames, s.UnevaluatedProperties, s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema}
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		out = append(out, s.Properties[k])
	}
	for _, re := range SortedPatterns(s.PatternProperties) {
		out = append(out, s.PatternProperties[re])
	}
	if a, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
		out = append(out, a)
	}
	switch it := s.Items.(type) {
	case *jsonschema.Schema:
		out = append(out, it)
	case []*jsonschema.Schema:
		out = append(out, it...)
	}
	if a, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
		out = append(out, a)
	}
	out = append(out, s.PrefixItems...)
	return slices.DeleteFunc(out, func(s *jsonschema.Schema) bool { return s == nil })
}

// loopError is the error of a schema at loc, in the schema compiled at u
// or a file it refers to, that applies itself to the value it checks.
func loopError(loc, u string) *Error {
	const msg = "$ref loop: the schema applies itself to the value it checks, and never ends"
	doc, frag, _ := strings.Cut(loc, "#")
	self, _, _ := strings.Cut(u, "#")
	var ptr []string
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	if frag = strings.TrimPrefix(frag, "/"); frag != "" {
		for _, t := range strings.Split(frag, "/") {
			ptr = append(ptr, strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~"))
		}
	}
	if doc == self {
		return &Error{Pointer: ptr, Message: msg}
	}
	name := docName(doc)
	if len(ptr) > 0 {
		name += ": " + strings.Join(ptr, "/")
	}
	return &Error{Ref: doc, Message: failure.Printable(name) + ": " + msg}
}

// docName is the name of the schema file at the URL doc as a message
// names it: relative to Root, unescaped (the loader escapes a contracts
// file's name, the library a $ref's: schemas/été.json, not
// schemas/%C3%A9t%C3%A9.json).
func docName(doc string) string {
	name := strings.TrimPrefix(strings.TrimPrefix(doc, Root), "file://")
	if n, err := url.PathUnescape(name); err == nil {
		name = n
	}
	return name
}

// compileError is err, from compiling the schema at u, as an *Error.
func compileError(err error, u string) error {
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		var ve *jsonschema.ValidationError
		if errors.As(sve.Err, &ve) {
			// The library finds an object's problems in map order: the
			// one reported is the first by place, then by message, so that
			// a schema with several says the same every time it loads.
			var first *Error
			var firstMsg string
			walk(ve, true, func(loc []string, msg string) {
				if first == nil || cmp.Or(slices.Compare(loc, first.Pointer), strings.Compare(msg, firstMsg)) < 0 {
					first, firstMsg = &Error{Pointer: loc, Message: "invalid schema: " + msg}, msg
				}
			})
			if first != nil {
				if doc, _, _ := strings.Cut(sve.URL, "#"); doc != strings.SplitN(u, "#", 2)[0] {
					// The schema is another file's, which a $ref leads to:
					// the pointer is into that file, not into the schema
					// compiled. The error is the $ref's, naming the file.
					msg := first.Message
					if len(first.Pointer) > 0 {
						msg = strings.Join(first.Pointer, "/") + ": " + msg
					}
					return &Error{Ref: doc, Message: failure.Printable(docName(doc)) + ": " + msg}
				}
				return first
			}
		}
	}
	var le *jsonschema.LoadURLError
	if errors.As(err, &le) {
		return &Error{Ref: le.URL, Message: le.Err.Error()}
	}
	// A $ref to a place its schema does not have ('#/definitions/adress'):
	// the $ref's, as the reference names it, not the schema's under the
	// name the loader gave it (a.yaml?contract=0).
	var pe *jsonschema.JSONPointerNotFoundError
	if errors.As(err, &pe) {
		return &Error{Ref: pe.URL, Message: "$ref to " + refShown(pe.URL, u) + ": not found"}
	}
	var ae *jsonschema.AnchorNotFoundError
	if errors.As(err, &ae) {
		return &Error{Ref: ae.Reference, Message: "$ref to " + refShown(ae.Reference, u) + ": not found"}
	}
	msg := err.Error()
	msg = strings.ReplaceAll(msg, "file://", "")
	return &Error{Message: msg}
}

// refShown is the URL ref, which a $ref of the schema compiled at u
// names, as a message names it: #fragment inside that schema, else
// relative to Root.
func refShown(ref, u string) string {
	doc, frag, _ := strings.Cut(ref, "#")
	self, _, _ := strings.Cut(u, "#")
	if doc == self {
		doc = ""
	} else {
		doc = docName(doc)
	}
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	return failure.Printable(doc + "#" + frag)
}

// CompileRef compiles a location inside a schema already compiled, such as
// "policy.json#/definitions/contract".
func (c *Compiler) CompileRef(loc string) (*Schema, error) {
	s, err := c.c.Compile(Root + loc)
	if err != nil {
		return nil, compileError(err, Root+loc)
	}
	if err := c.checkMeta(Root+loc, nil, s); err != nil {
		return nil, err
	}
	return newSchema(s)
}

var runs = sync.Pool{New: func() any { return new(nativeRun) }}

// Schema is a compiled schema, safe for concurrent use.
type Schema struct {
	s       *jsonschema.Schema
	numbers *shape.Numbers // how CEL reads the body's numbers
	skip    *shape.Skip    // what the vulnerability scan leaves out; nil: nothing

	// The native fast path is compiled when the first body is validated,
	// not with the schema: it cannot fail (what it does not cover stays
	// with the library, the reference), so no error moves from load time
	// to a request, and a load of many contracts does not pay for those
	// no request reaches (about 5% of the samples of loading 1,000
	// distinct contracts, and 2.2 of the 40 MB they allocate).
	fastOnce sync.Once
	fast     *native // nil when the schema needs the library
}

// newSchema is s with what is derived from it at load.
func newSchema(s *jsonschema.Schema) (*Schema, error) {
	skip, err := skipOf(s)
	if err != nil {
		return nil, &Error{Message: err.Error()}
	}
	return &Schema{s: s, numbers: numbersOf(s), skip: skip}, nil
}

// nativePanics counts native compiles that panicked: a bug, which the
// package's tests hold at zero (a request meets it as the library).
var nativePanics atomic.Int64

// native is the schema's native fast path, compiled on first use; nil when
// the schema needs the library. A compile that panics leaves it nil: the
// library then validates, as for any schema outside the fast path, and
// nativePanics counts it.
func (s *Schema) native() *native {
	s.fastOnce.Do(func() {
		defer func() {
			if recover() != nil {
				nativePanics.Add(1)
			}
		}()
		s.fast = compileNative(s.s)
	})
	return s.fast
}

// Numbers is how the numbers of a body this schema describes read in CEL:
// integer where it says integer, double where it says number.
func (s *Schema) Numbers() *shape.Numbers { return s.numbers }

// Skip is what the schema takes out of the vulnerability scan (the values
// whose schema says x-contractguard-scan: false): nil when nothing.
func (s *Schema) Skip() *shape.Skip { return s.skip }

// Native reports whether the schema is validated by the native fast path,
// compiling it if no body has been validated yet.
func (s *Schema) Native() bool { return s.native() != nil }

// Compiled is the underlying compiled schema, for the type declarations
// and cost estimates of CEL (internal/expr).
func (s *Schema) Compiled() *jsonschema.Schema { return s.s }

// Validate checks a body and reports every failure to rep, in no
// particular order. It reports whether the body is valid.
func (s *Schema) Validate(doc *jsonbody.Doc, rep failure.Reporter) bool {
	if fast := s.native(); fast != nil {
		r := runs.Get().(*nativeRun)
		r.start(rep, doc)
		r.validate(fast, doc.Root())
		valid := r.valid
		clear(r.rows) // no row of this body kept in the pool
		r.rep, r.rows, r.spill, r.costs = nil, r.rows[:0], nil, nil
		r.path.Reset() // no names of this body kept in the pool
		runs.Put(r)
		return valid
	}
	// A value of its own, not the Doc's (doc.Any): that one is what
	// contractguard.Body hands a handler, which may change it, and a later
	// pass of the guard over the request (a typed handler's) checked
	// those changes, not the body its T is decoded from.
	return s.Reference(doc.Root().Any(), rep)
}

// Reference validates a generic value (map[string]any, json.Number…) with
// santhosh-tekuri/jsonschema alone. It is what Validate does for schemas
// outside the fast path, and the reference the fast path is tested against.
func (s *Schema) Reference(v any, rep failure.Reporter) bool {
	err := s.s.Validate(v)
	if err == nil {
		return true
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		if rep.Wants() {
			rep.Add("", "cannot be validated: "+err.Error())
		}
		return false
	}
	// The library finds an object's failures in map order: they are put
	// in the order of their places first, so that a reporter that takes
	// only some of them gets the same ones every time.
	type found struct {
		loc     []string
		message string
	}
	var all []found
	walk(ve, false, func(loc []string, message string) { all = append(all, found{loc, message}) })
	slices.SortStableFunc(all, func(a, b found) int {
		if c := slices.Compare(a.loc, b.loc); c != 0 {
			return c
		}
		return strings.Compare(a.message, b.message)
	})
	for _, f := range all {
		if !rep.Wants() {
			break
		}
		rep.Add(failure.Pointer(f.loc), f.message)
	}
	return false
}

// Explain is Validate for documents a person wrote (contracts): failures
// inside anyOf and oneOf are reported branch by branch, with the pointer
// as tokens.
func (s *Schema) Explain(v any, add func(loc []string, message string)) bool {
	err := s.s.Validate(v)
	if err == nil {
		return true
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		add(nil, err.Error())
		return false
	}
	walk(ve, true, add)
	return false
}
