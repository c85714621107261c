package bind

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Which struct field a member goes to: encoding/json's rules for names,
// tags and embedded structs.

type field struct {
	name  string
	index []int
	plan  *plan
	// hidden: below an unexported embedded pointer, which no JSON decoder
	// can allocate: its member is refused, as encoding/json and json v2
	// refuse it ("cannot set embedded pointer to unexported struct").
	hidden bool
}

// jsonFields lists the fields json v2 (and encoding/json) would decode
// into, by name, with its rules for embedded structs: a breadth-first walk
// of the struct and of the embedded structs it inlines, the fields known
// by their json names (not by Go's selector rules, which hide a field by
// its Go name: an embedded A's ID `json:"a_id"` is the member "a_id" even
// beside a field ID); the shallowest field of a name wins, a tagged one
// among equals, and a tie leaves the name to no field.
func jsonFields(t reflect.Type) ([]field, error) {
	type candidate struct {
		field
		tagged bool
	}
	byName := map[string][]candidate{}
	var order []string
	// json v2's walk: an embedded struct's own fields are listed each
	// time it is met, the structs it embeds the first time only.
	type entry struct {
		typ   reflect.Type
		index []int
		visit bool
	}
	queue := []entry{{t, nil, true}}
	seen := map[reflect.Type]bool{t: true}
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		for i := range e.typ.NumField() {
			sf := e.typ.Field(i)
			sf.Index = append(slices.Clip(e.index), i)
			if !sf.IsExported() && !sf.Anonymous {
				continue
			}
			name, skip, inline := FieldName(sf)
			if skip {
				continue
			}
			tagName, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if strings.Contains(","+opts+",", ",string,") {
				return nil, fmt.Errorf("%s.%s: the json tag option \"string\" is not supported", t, sf.Name)
			}
			if err := readOtherwise(tagName, opts, inline); err != "" {
				return nil, fmt.Errorf("%s.%s: %s is not supported", t, sf.Name, err)
			}
			if inline { // its fields are promoted
				if st := elem(sf.Type); e.visit {
					queue = append(queue, entry{st, sf.Index, !seen[st]})
					seen[st] = true
				}
				continue
			}
			tagged := tagName != ""
			if sf.Anonymous && !sf.IsExported() {
				switch {
				case elem(sf.Type).Kind() != reflect.Struct:
					continue // encoding/json ignores it, tagged or not: it could not set it
				case sf.Type.Kind() == reflect.Pointer: // tagged: a member of its own
					return nil, fmt.Errorf("%s.%s: an unexported embedded pointer given a json name, which encoding/json cannot allocate: export its type, or embed the struct itself", t, sf.Name)
				}
			}
			if _, seen := byName[name]; !seen {
				order = append(order, name)
			}
			byName[name] = append(byName[name], candidate{field{name: name, index: sf.Index}, tagged})
		}
	}
	var out []field
	for _, name := range order {
		cs := byName[name]
		depth := len(cs[0].index)
		for _, c := range cs {
			depth = min(depth, len(c.index))
		}
		var top []candidate
		for _, c := range cs {
			if len(c.index) == depth {
				top = append(top, c)
			}
		}
		if len(top) > 1 {
			var tagged []candidate
			for _, c := range top {
				if c.tagged {
					tagged = append(tagged, c)
				}
			}
			top = tagged
		}
		if len(top) == 1 {
			f := top[0].field
			f.hidden = hidden(t, f.index)
			out = append(out, f)
		}
	}
	return out, nil
}

// Fields maps each member name of struct type t to the index of the
// field encoding/json decodes it into (reflect's FieldByIndex), by the
// rules of jsonFields.
func Fields(t reflect.Type) (map[string][]int, error) {
	fs, err := jsonFields(t)
	if err != nil {
		return nil, err
	}
	m := make(map[string][]int, len(fs))
	for _, f := range fs {
		if !f.hidden {
			m[f.name] = f.index
		}
	}
	return m, nil
}

// FieldName is the member name encoding/json reads the field sf from: the
// name of its json tag, else its Go name. skip: json:"-", never read (but
// json:"-," is the member "-"). inline: an embedded struct without a tag
// name, whose fields are promoted instead.
func FieldName(sf reflect.StructField) (name string, skip, inline bool) {
	tag := sf.Tag.Get("json")
	if tag == "-" {
		return "", true, false
	}
	if name, _, _ = strings.Cut(tag, ","); name != "" {
		return name, false, false
	}
	ft := sf.Type
	if ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	return sf.Name, false, sf.Anonymous && ft.Kind() == reflect.Struct
}

// hidden reports whether a promoted field sits below an unexported
// embedded pointer, which encoding/json could not allocate: it takes part
// in choosing the field of its name, and its member is then refused.
func hidden(t reflect.Type, index []int) bool {
	for i := 1; i < len(index); i++ {
		if sf := t.FieldByIndex(index[:i]); !sf.IsExported() && sf.Type.Kind() == reflect.Pointer {
			return true
		}
	}
	return false
}

// readOtherwise names what of a json tag json v2 reads otherwise than
// the binder, which reads the name before the first comma, exactly: a
// name in single quotes or with a quote or backslash in it (json v2
// unquotes it, or refuses the type), the options "case:ignore" (names
// matched regardless of case, "-" and "_"), "embed" on a field the
// binder does not inline (its fields promoted) and "format:…" (a type
// json v2 refuses, its default format). "" if none.
func readOtherwise(name, opts string, inline bool) string {
	if strings.ContainsAny(name, "'\"\\`") {
		return fmt.Sprintf("the json name %q, quoted or with a quote or backslash in it,", name)
	}
	if opts == "" {
		return ""
	}
	for _, o := range strings.Split(opts, ",") {
		switch {
		case o == "embed" && !inline, strings.HasPrefix(o, "case:") && o != "case:strict", strings.HasPrefix(o, "format:"):
			return fmt.Sprintf("the json tag option %q", o)
		}
	}
	return ""
}

func elem(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}
