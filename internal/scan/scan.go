package scan

import (
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/msg"
)

// Skip says which parts of a body are not scanned: the values whose
// schema carries x-contractguard-scan: false. A nil *Skip scans
// everything; Off skips the value and everything in it.
type Skip struct {
	Off        bool
	Props      map[string]*Skip // by member name
	Items      *Skip            // every element of an array
	Additional *Skip            // members not in Props
}

// child is the Skip of a member (name) or element (name == nil).
func (s *Skip) child(name *string) *Skip {
	if s == nil {
		return nil
	}
	if name == nil {
		return s.Items
	}
	if c, ok := s.Props[*name]; ok {
		return c
	}
	return s.Additional
}

// Body scans every key and string value of a body, except what skip
// leaves out, and reports each finding with its JSON pointer: a key at the
// pointer of its member, a value at its own.
func Body(root jsonbody.Value, skip *Skip, report func(path string, c Class)) {
	w := walker{report: report}
	w.value(root, skip)
}

type walker struct {
	report func(string, Class)
	path   msg.Path
}

func (w *walker) value(v jsonbody.Value, skip *Skip) {
	if skip != nil && skip.Off {
		return
	}
	switch v.Kind() {
	case jsonbody.String:
		if c := String(v.Str()); c != None {
			w.report(w.path.Pointer(), c)
		}
	case jsonbody.Array:
		items := skip.child(nil)
		for i := range v.Len() {
			w.path.Index(i)
			w.value(v.Index(i), items)
			w.path.Pop()
		}
	case jsonbody.Object:
		for i := range v.Len() {
			name, e := v.Member(i)
			child := skip.child(&name)
			if child != nil && child.Off {
				continue // the key goes with its value
			}
			w.path.Member(name)
			if c := Key(name); c != None {
				w.report(w.path.Pointer(), c)
			} else if name == "constructor" && e.Kind() == jsonbody.Object {
				if _, ok := e.Get("prototype"); ok {
					w.report(w.path.Pointer(), PrototypePollution)
				}
			}
			w.value(e, child)
			w.path.Pop()
		}
	}
}

// Query scans the names and values of a query string, reported at
// "query:name".
func Query(values map[string][]string, report func(path string, c Class)) {
	for name, vs := range values {
		c := Key(name)
		for _, v := range vs {
			if c != None {
				break
			}
			c = String(v)
		}
		if c != None {
			report("query:"+name, c)
		}
	}
}

// Params scans path parameters, reported at "param:name".
func Params(params map[string]string, report func(path string, c Class)) {
	for name, v := range params {
		if c := String(v); c != None {
			report("param:"+name, c)
		}
	}
}
