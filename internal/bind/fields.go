package bind

import (
	"fmt"
	"reflect"
	"strings"
)

// Which struct field a member goes to: encoding/json's rules for names,
// tags and embedded structs.

type field struct {
	name  string
	index []int
	plan  *plan
}

// jsonFields lists the fields encoding/json would decode into, by name,
// with its rules for embedded structs: the shallowest field of a name wins,
// a tagged one among equals, and a tie leaves the name to no field.
func jsonFields(t reflect.Type) ([]field, error) {
	type candidate struct {
		field
		tagged bool
	}
	byName := map[string][]candidate{}
	var order []string
	for _, sf := range reflect.VisibleFields(t) {
		if !sf.IsExported() && !sf.Anonymous {
			continue
		}
		name, skip, inline := FieldName(sf)
		if skip || inline { // inline: its fields are promoted; VisibleFields lists them
			continue
		}
		tagName, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if strings.Contains(","+opts+",", ",string,") {
			return nil, fmt.Errorf("%s.%s: the json tag option \"string\" is not supported", t, sf.Name)
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
		if hidden(t, sf.Index) {
			continue
		}
		if _, seen := byName[name]; !seen {
			order = append(order, name)
		}
		byName[name] = append(byName[name], candidate{field{name: name, index: sf.Index}, tagged})
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
			out = append(out, top[0].field)
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
		m[f.name] = f.index
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

// hidden reports whether a promoted field sits below an embedded struct
// that encoding/json does not inline: one tagged json:"-" or given a name,
// or an unexported pointer (which it could not allocate).
func hidden(t reflect.Type, index []int) bool {
	for i := 1; i < len(index); i++ {
		sf := t.FieldByIndex(index[:i])
		if _, skip, inline := FieldName(sf); skip || !inline {
			return true
		}
		if !sf.IsExported() && sf.Type.Kind() == reflect.Pointer {
			return true
		}
	}
	return false
}

func elem(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}
