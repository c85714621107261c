package scan

import (
	"iter"
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/shape"
)

// Body scans every key and string value of a body, except what skip
// leaves out, and reports each finding with its JSON pointer and its
// class's message: a value at its own pointer, a key at the pointer of
// the object that holds it, never repeating the name, with nothing under
// it (the first flagged key of an object only: the others would be the
// same finding).
func Body(root jsonbody.Value, skip *shape.Skip, report failure.Reporter) {
	if skip != nil && skip.Off {
		return
	}
	switch root.Kind() {
	case jsonbody.String:
		if c := String(root.Str()); c != None && report.Wants() {
			report.Add("", c.Message())
		}
	case jsonbody.Array, jsonbody.Object:
		w := walkers.Get().(*walker)
		defer w.release()
		w.report = report
		w.container(root, skip)
	}
}

// release puts w back in walkers, holding nothing of the body.
func (w *walker) release() {
	w.report = nil
	w.clean = [len(w.clean)]string{}
	w.path.Reset()
	walkers.Put(w)
}

// Doc scans a whole document as Body does. With nothing skipped it first
// runs through the strings of the document in order, without walking the
// tree, and walks it, to report with paths, only when that finds
// something: most bodies are clean, and a flagged one costs two passes.
func Doc(doc *jsonbody.Doc, skip *shape.Skip, report failure.Reporter) {
	if skip == nil && !anyFinding(doc) {
		return
	}
	Body(doc.Root(), skip, report)
}

// anyFinding reports whether Body would report anything in doc with
// nothing skipped.
func anyFinding(doc *jsonbody.Doc) bool {
	w := walkers.Get().(*walker)
	defer w.release()
	for i := range doc.Nodes() {
		v := doc.Node(i)
		if v.Kind() != jsonbody.String {
			continue
		}
		if v.IsName() {
			name := v.Str()
			if v.IsWord() && shortName(name) && name != "constructor" {
				continue // identifier(name), the bytes told by the parse; constructor is key's
			}
			if w.key(name, doc.Node(i+1)) != None {
				return true
			}
		} else if check(v.Str(), &w.buf) != None {
			return true
		}
	}
	return false
}

// walker walks the containers of a body. The path holds the containers
// it is in; a scalar's own step is added only to report it.
type walker struct {
	report failure.Reporter
	path   failure.Path
	clean  [16]string // member names found clean (see key)
	buf    []byte     // for sqlInjection
}

// walkers keeps walkers, with their buffers, from one body to the next.
var walkers = sync.Pool{New: func() any { return new(walker) }}

func (w *walker) container(v jsonbody.Value, skip *shape.Skip) {
	if v.Kind() == jsonbody.Array {
		items := skip.Elements()
		if items != nil && items.Off {
			return
		}
		for i := range v.Len() {
			w.inner(v.Index(i), items, "", i)
		}
		return
	}
	named := false // a flagged name of this object was offered
	for i := range v.Len() {
		name, e := v.Member(i)
		child := skip.Member(name)
		if child != nil && child.Off {
			if _, declared := skip.Props[name]; declared {
				continue // the key, the schema's own, goes with its value
			}
			// A member additionalProperties' opt-out takes: its value is
			// not scanned (below), its name, which the client chose, is
			// ({"__proto__": …} or {"$where": …} under it passed).
		}
		if c := w.key(name, e); c != None {
			// The name is the payload: reported at the object that holds
			// it, and what it holds, whose pointers would repeat it, not
			// walked. Once an object: its other flagged names would be
			// the same detail, and would use up a reporter's room for the
			// findings elsewhere in the body.
			if !named && w.report.Wants() {
				w.report.Add(w.path.Pointer(), c.Message())
			}
			named = true
			continue
		}
		if child == nil || !child.Off {
			w.inner(e, child, name, -1)
		}
	}
}

// inner checks what a container holds: element index of an array, or
// (index < 0) member name of an object.
func (w *walker) inner(e jsonbody.Value, skip *shape.Skip, name string, index int) {
	switch e.Kind() {
	case jsonbody.String:
		if c := check(e.Str(), &w.buf); c != None && w.report.Wants() {
			if index >= 0 {
				name = strconv.Itoa(index)
			}
			w.report.Add(w.path.Pointer(name), c.Message())
		}
	case jsonbody.Array, jsonbody.Object:
		if index >= 0 {
			w.path.Index(index)
		} else {
			w.path.Member(name)
		}
		w.container(e, skip)
		w.path.Pop()
	}
}

// key checks a member name, and constructor holding prototype. Most
// names are identifiers, in which Key finds nothing. The objects of an
// array mostly repeat their names, so another name found clean is kept,
// and the same name again is mostly not checked twice (16 slots; two
// names may take turns in one).
func (w *walker) key(name string, v jsonbody.Value) Class {
	if name == "constructor" && v.Kind() == jsonbody.Object {
		if _, ok := v.Get("prototype"); ok {
			return PrototypePollution
		}
	}
	if identifier(name) { // "" among them
		return None
	}
	slot := &w.clean[(len(name)+int(name[0])+int(name[len(name)-1]))&(len(w.clean)-1)]
	if *slot == name {
		return None
	}
	c := checkKey(name, &w.buf)
	if c == None {
		*slot = name
	}
	return c
}

// Query scans the names and values of a query string: a value is
// reported at "query:name", a flagged name at "query", never repeating
// it (the first flagged name only, as for an object's keys). Names are
// taken in order, so that a reporter that takes only some findings gets
// the same ones for the same request.
func Query(values map[string][]string, report failure.Reporter) {
	named := false
	if len(values) <= 1 { // in order already: nothing to sort, nothing allocated
		for name, vs := range values {
			queryParam(name, vs, &named, report)
		}
		return
	}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		queryParam(name, values[name], &named, report)
	}
}

// queryParam scans one name of a query and its values (Query); named
// says whether a flagged name was reported already.
func queryParam(name string, vs []string, named *bool, report failure.Reporter) {
	if c := Key(name); c != None {
		if !*named && report.Wants() {
			report.Add("query", c.Message())
		}
		*named = true
		return
	}
	for _, v := range vs {
		if c := String(v); c != None {
			if report.Wants() {
				report.Add("query:"+name, c.Message())
			}
			return
		}
	}
}

// Pairs scans the names and values of a query as Query does, but pair
// by pair, in the order given, without a map of them: for a query read
// in ways that keep what url.ParseQuery drops, and with no bound on how
// many pairs it has.
func Pairs(pairs iter.Seq2[string, string], report failure.Reporter) {
	named := false
	for name, v := range pairs {
		queryParam(name, []string{v}, &named, report)
	}
}

// Param scans the value of path parameter name, reported at "param:name".
func Param(name, value string, report failure.Reporter) {
	if c := String(value); c != None && report.Wants() {
		report.Add("param:"+name, c.Message())
	}
}
