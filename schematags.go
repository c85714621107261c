package contractguard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/invopop/jsonschema"

	"github.com/contractguard/contractguard/internal/bind"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/schema"
)

// checkSchemaTags reports the first jsonschema tag, on a struct type
// reachable from t, that invopop/jsonschema would drop without a word:
// a keyword it does not know (minLenght), a value it cannot read
// (minimum=abc, maxLength=-1), a keyword it does not apply to the field's
// type (minLength on an int, minItems on a named slice type it describes
// by a $ref), the text after an unescaped comma, all but the last of a
// keyword given twice (maximum=5,maximum=10), or a tag on a field it
// leaves out, or on a field of a type that decodes itself (into which
// the schema does not look); or a type the field cannot hold
// (type=string on an int), which it takes as written; or a format the
// validator does not know (format=emial), which it would take for an
// annotation; or a json:",inline" field, which invopop inlines and
// encoding/json does not; or a json:"-," field, the member "-", which
// invopop leaves out; or a jsonschema_extras minimum that is no integer,
// which invopop reads as 0 (or one of the other mistakes checkExtras
// finds). Such a T would check less than its tags say. invopop is the
// judge: each keyword is reflected on a field of the same type with and
// without it, and one that changes nothing is refused.
//
// values: also compile each tagged field's property alone
// (tagValuesCompile), to name the field whose tag value the compiler
// refuses; asked only once the whole reflected schema did not compile,
// since it compiles a schema per tagged field.
func checkSchemaTags(t reflect.Type, seen map[reflect.Type]bool, values bool) error {
	if t = aliasOrHeld(t); !seen[t] {
		// First: invopop takes such a type's schema from the method, one
		// that decodes itself too (selfDecodingTags leaves it to it), and
		// the alias of a type of any kind.
		if how := givesOwnSchema(t); how != "" && (t.Kind() == reflect.Struct || how == "JSONSchemaAlias") {
			seen[t] = true
			if t.Kind() == reflect.Struct {
				if err := ownSchemaTags(t, how); err != nil {
					return err
				}
			}
			if how != "JSONSchemaAlias" {
				return nil
			}
			if err := aliasLoop(t); err != nil {
				return err
			}
			// invopop describes t as the other type, reading its tags.
			if other := aliasOf(t); other != nil {
				return checkSchemaTags(other, seen, values)
			}
			return nil
		}
	}
	if bind.Opaque(t) && (t == timeType || selfDecoding(t) != nil) {
		// Described as what it decodes: no field of it is looked into.
		// One that invopop describes by its fields all the same (a
		// JSONSchemaExtend method on T) has them checked below.
		return selfDecodingTags(t)
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return nil
	}
	seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		for _, key := range []string{"jsonschema", "jsonschema_extras"} {
			problem, twice := tagKeyProblem(f.Tag, key)
			problem = strings.Replace(problem, "Go's reflect", "invopop/jsonschema", 1) // which reads tags by it
			switch {
			case twice:
				return fieldError(t, f, "%s: write all the keywords in one", problem)
			case problem != "":
				return fieldError(t, f, "%s", problem)
			}
		}
		tag := f.Tag.Get("jsonschema")
		first, _, _ := strings.Cut(tag, ",")
		if first == "-" {
			continue // left out of the schema on purpose
		}
		name, skip, inline := bind.FieldName(f)
		if _, opts, _ := strings.Cut(f.Tag.Get("json"), ","); !skip && !inline && slices.Contains(strings.Split(opts, ","), "inline") {
			what := fmt.Sprintf("decodes as the member %q", name)
			if !f.IsExported() {
				what = "does not decode"
			}
			return fieldError(t, f, "json tag option \"inline\": invopop/jsonschema would inline the field, which encoding/json %s", what)
		}
		if name == "-" && !skip && f.IsExported() && f.Tag.Get("cg") == "" { // a rule on it is refused by the rules, saying why
			return fieldError(t, f, "json:\"-,\": invopop/jsonschema leaves the member \"-\" out of the schema, which would refuse it: give the field another json name")
		}
		switch {
		case skip || !f.IsExported() && !f.Anonymous || name == "-":
			if tag != "" {
				return fieldError(t, f, "jsonschema tag on a field that is no member of the body, which invopop/jsonschema ignores")
			}
			continue
		case inline:
			if tag != "" {
				return fieldError(t, f, "jsonschema tag on an embedded struct, which invopop/jsonschema ignores: tag its fields")
			}
		case tag != "":
			if err := checkFieldTag(t, f); err != nil {
				return err
			}
		}
		if !inline && heldType(f.Type) == urlType {
			return fieldError(t, f, "%s", urlMismatch)
		}
		if err := checkExtras(t, f); err != nil {
			return err
		}
		// The field's type first: the property tagValuesCompile compiles
		// holds an anonymous struct's fields, whose tags are theirs.
		if err := checkSchemaTags(f.Type, seen, values); err != nil {
			return err
		}
		if !values {
			continue
		}
		if err := tagValuesCompile(t, f); err != nil {
			return err
		}
	}
	return nil
}

// checkExtras checks the jsonschema_extras tag of f, a field of struct
// type t, whose keywords invopop writes into the schema as they are: a
// minimum, which it reads as an integer (and anything else as 0); a
// format the validator does not know; a keyword given twice of which it
// keeps the last (a minimum, a true or false), rather than gathering the
// values in a list.
func checkExtras(t reflect.Type, f reflect.StructField) error {
	given := map[string]string{}
	for _, kw := range splitSchemaTag(f.Tag.Get("jsonschema_extras")) {
		key, value, _ := strings.Cut(kw, "=")
		if _, err := strconv.Atoi(value); key == "minimum" && err != nil {
			return fieldError(t, f, "jsonschema_extras tag %q: invopop/jsonschema reads it as an integer, and %s as 0: write it in the jsonschema tag", kw, value)
		}
		if key == "format" && schema.FormatCheck(value) == nil {
			return fieldError(t, f, "jsonschema_extras tag %q: the validator knows no format %q", kw, value)
		}
		if prev, ok := given[key]; ok {
			if _, pv, _ := strings.Cut(prev, "="); key == "minimum" || pv == "true" || pv == "false" {
				return fieldError(t, f, "jsonschema_extras tag: %s given twice (%s, %s), of which invopop/jsonschema keeps the last", key, prev, kw)
			}
		}
		given[key] = kw
	}
	return nil
}

// tagValuesCompile reports a value of f's jsonschema or jsonschema_extras
// tag that invopop writes into the schema as it is and the compiler
// refuses (multipleOf=0, pattern=((, enum=a,enum=a): the compiler of the
// whole reflected schema reported it naming the request type and a
// pointer into the schema, for a nested type one that T does not have
// (contractguard.Out: reflected schema: /properties/m/multipleOf). The
// field's property is compiled alone, first with its jsonschema tag,
// then with both, unless it refers to another type's definition (which
// keeps no keyword beside it).
func tagValuesCompile(t reflect.Type, f reflect.StructField) error {
	_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	tag := `json:` + strconv.Quote("x,"+opts)
	for _, key := range []string{"jsonschema", "jsonschema_extras"} {
		value := f.Tag.Get(key)
		if value == "" {
			continue
		}
		tag += ` ` + key + `:` + strconv.Quote(value)
		st := reflect.StructOf([]reflect.StructField{{Name: "X", Type: f.Type, Tag: reflect.StructTag(tag)}})
		r := &jsonschema.Reflector{ExpandedStruct: true, Namer: defNamer(), Mapper: selfDecoding, Lookup: shallow}
		prop, _ := r.ReflectFromType(st).Properties.Get("x")
		if prop == nil {
			return nil
		}
		b, err := prop.MarshalJSON()
		if err != nil || bytes.Contains(b, []byte(`"$ref"`)) {
			return nil // a marshalling error is reported with the whole schema
		}
		parsed, err := jsonbody.Parse(b, jsonbody.MaxDepthLimit)
		if err != nil {
			return nil
		}
		doc := parsed.Any()
		scanAnnotations(doc)
		if _, err := schema.NewCompiler(nil, nil).Compile("tag.json", doc); err != nil {
			return fieldError(t, f, "%s tag %q: %v", key, value, err)
		}
	}
	return nil
}

// aliasOrHeld is heldType(t), but stops at a type other than a pointer
// with a JSONSchemaAlias method: invopop describes a named slice, array
// or map type with one as the other type, not by its elements.
func aliasOrHeld(t reflect.Type) reflect.Type {
	return heldTypeUntil(t, func(t reflect.Type) bool { return t.Kind() != reflect.Pointer && t.Implements(aliasMethod) })
}

// aliasOf is the type t's JSONSchemaAlias method returns (nil for nil),
// called as invopop calls it, on a zero T.
func aliasOf(t reflect.Type) reflect.Type {
	return reflect.TypeOf(reflect.New(t).Interface().(interface{ JSONSchemaAlias() any }).JSONSchemaAlias())
}

// aliasLoop reports a chain of JSONSchemaAlias methods from t that leads
// back to a type of the chain (type A's alias is B, B's is A; or A's is
// []A): invopop follows the chain through pointers and through slices,
// arrays and maps of no name (to which it gives no definition to refer
// to) for ever, and the stack overflow is fatal to the program.
func aliasLoop(t reflect.Type) error {
	chain := []reflect.Type{t}
	for {
		next := aliasOf(chain[len(chain)-1])
		var through []reflect.Type
		for next != nil && !slices.Contains(through, next) {
			if k := next.Kind(); k != reflect.Pointer && (next.Name() != "" || k != reflect.Slice && k != reflect.Array && k != reflect.Map) {
				break
			}
			through = append(through, next)
			next = next.Elem()
		}
		switch {
		case next == nil || slices.Contains(through, next) || next.Kind() == reflect.Interface || !next.Implements(aliasMethod):
			return nil // described otherwise, or by a $ref
		case slices.Contains(chain, next):
			names := make([]string, len(chain))
			for i, c := range chain {
				names[i] = c.String()
			}
			return fmt.Errorf("%s: its JSONSchemaAlias leads back to %s (%s → %s), which invopop/jsonschema would follow for ever: alias another type",
				t, next, strings.Join(names, " → "), next)
		}
		chain = append(chain, next)
	}
}

// givesOwnSchema is the method by which invopop/jsonschema takes the schema
// of struct type t from t itself rather than from its fields: JSONSchema
// (the schema it returns) or JSONSchemaAlias (another type's); "" if
// none. invopop looks for them on t, not on *t, and for JSONSchemaAlias
// first.
func givesOwnSchema(t reflect.Type) string {
	switch {
	case t.Implements(aliasMethod):
		return "JSONSchemaAlias"
	case t.Implements(schemaMethods[0]):
		return "JSONSchema"
	}
	return ""
}

// ownSchemaTags reports a jsonschema or jsonschema_extras tag on a field
// of t, a type that gives its own schema (by the method how), which
// invopop reads none of: maximum=5 on such a field checked nothing.
func ownSchemaTags(t reflect.Type, how string) error {
	for _, f := range reflect.VisibleFields(t) {
		if tag := f.Tag.Get("jsonschema"); tag != "" && tag != "-" || f.Tag.Get("jsonschema_extras") != "" {
			return fmt.Errorf("%s.%s: jsonschema tag on a field of %s, which gives its own schema (%s): invopop/jsonschema reads none of its fields' tags: put the keyword in %s, or check it by a cg rule",
				t, fieldPath(t, f.Index), t, how, how)
		}
	}
	return nil
}

// selfDecodingTags reports a jsonschema tag on a field of t, a type that
// decodes itself and that selfDecoding describes as what it decodes: the
// schema looks into none of its fields, so such a tag checks nothing.
func selfDecodingTags(t reflect.Type) error {
	if t.Kind() != reflect.Struct || selfDecoding(t) == nil {
		return nil // no fields, or invopop describes it: time.Time, a type that gives its schema
	}
	how, what := "UnmarshalText", "a string"
	switch {
	case reflect.PointerTo(t).Implements(jsonUnmarshaler):
		how, what = "UnmarshalJSON", "any value"
	case bind.TakesJSON(t):
		how, what = "UnmarshalJSONFrom", "any value"
	}
	for _, f := range reflect.VisibleFields(t) {
		if tag := f.Tag.Get("jsonschema"); tag != "" && tag != "-" || f.Tag.Get("jsonschema_extras") != "" {
			return fmt.Errorf("%s.%s: jsonschema tag on a field of %s, which decodes itself (%s): the schema takes %s for it and looks into none of its fields: check it in %s or by a cg rule",
				t, fieldPath(t, f.Index), t, how, what, how)
		}
	}
	return nil
}

// checkFieldTag checks each keyword of the jsonschema tag of f, a member
// field of struct type t, where invopop reads it: in the whole tag, whose
// type=, oneof_type= and anyof_type= decide which keywords it takes.
func checkFieldTag(t reflect.Type, f reflect.StructField) error {
	raw := rawSchemaTag(f.Tag.Get("jsonschema"))
	all, prop, err := reflectField(f, raw)
	if err != nil {
		return fieldError(t, f, "%v", err)
	}
	given := map[string]string{}
	for _, kw := range splitSchemaTag(f.Tag.Get("jsonschema")) {
		key, _, hasValue := strings.Cut(kw, "=")
		if prev, ok := given[key]; ok && hasValue && !slices.Contains(gathered, key) {
			return fieldError(t, f, "jsonschema tag: %s given twice (%s, %s), of which invopop/jsonschema keeps the last", key, prev, kw)
		}
		given[key] = kw
	}
	for i := range raw {
		kw := unescapeSchemaTag(raw[i])
		key, value, hasValue := strings.Cut(kw, "=")
		switch {
		case kw == "" || kw == "required" || kw == "nullable":
			continue
		case !hasValue:
			return fieldError(t, f, "jsonschema tag %q is not key=value (a comma inside a value is written \\,)", kw)
		case !slices.Contains(listed, key) && !slices.Contains(annotations, key) && keywordAfterSemicolon(value) != "":
			return fieldError(t, f, "jsonschema tag %q is one value of %s to invopop/jsonschema: keywords are separated by commas (%s)", kw, key, strings.ReplaceAll(kw, ";", ","))
		case key == "uniqueItems" && value != "true":
			return fieldError(t, f, "jsonschema tag %q: invopop/jsonschema reads any uniqueItems=… as true", kw)
		case (key == "pattern" || key == "format") && prop.Type == "array" && (prop.Items == nil || prop.Items.Type != "string"):
			return fieldError(t, f, "jsonschema tag %q has no effect: on an array invopop/jsonschema puts it on the items, which are no strings", kw)
		case key == "format" && schema.FormatCheck(value) == nil:
			return fieldError(t, f, "jsonschema tag %q: the validator knows no format %q", kw, value)
		case key == "format" && value != "date-time" && heldType(f.Type) == timeType:
			// It replaces invopop's date-time: format=date passed
			// "2024-01-02", which T refused, and refused every date-time.
			return fieldError(t, f, "jsonschema tag %q: a time.Time holds an RFC 3339 date-time only (format=date-time): no value would pass both", kw)
		}
		without, _, err := reflectField(f, slices.Delete(slices.Clone(raw), i, i+1))
		if err != nil {
			return fieldError(t, f, "jsonschema tag %q: %v", kw, err)
		}
		if !bytes.Equal(without, all) || key == "type" && value == prop.Type || slices.Contains(annotations, key) {
			continue
		}
		// No effect in the tag: say why, from the field alone and with kw alone.
		base, alone, err := reflectField(f, nil)
		if err != nil {
			return fieldError(t, f, "%v", err)
		}
		if with, _, err := reflectField(f, raw[i:i+1]); err == nil && !bytes.Equal(with, base) {
			return fieldError(t, f, "jsonschema tag %q has no effect beside the other keywords of its tag (type=, oneof_type= or anyof_type=, which invopop/jsonschema reads first)", kw)
		}
		switch {
		case alone.Ref != "":
			return fieldError(t, f, "jsonschema tag %q has no effect: invopop/jsonschema describes %s by a $ref, beside which it keeps no keyword", kw, elemType(f.Type))
		case alone.Type == "":
			return fieldError(t, f, "jsonschema tag %q has no effect on a field of any JSON type: say which first (type=string,%s)", kw, kw)
		}
		return fieldError(t, f, "jsonschema tag %q has no effect on a field of JSON type %s: a keyword, or a value, invopop/jsonschema does not take there", kw, alone.Type)
	}
	for _, key := range []string{"type", "oneof_type", "anyof_type"} { // each given once, or refused above
		if kw, ok := given[key]; ok {
			_, value, _ := strings.Cut(kw, "=")
			if err := typesFit(t, f, kw, value); err != nil {
				return err
			}
		}
	}
	return nil
}

// typesFit reports a JSON type that the keyword kw (type=, oneof_type=
// or anyof_type=, of value types) lets the schema take and that f's Go
// type cannot hold: type=string on an int. invopop takes the type as
// written, so T's schema would pass values that T's decode then refuses,
// and refuse the values T holds: every request that sends the member
// refused, found in production. null fits every field (encoding/json
// leaves the field as it is), integer and number fit each other (a
// number T cannot hold is the 400 of a value out of T's range).
func typesFit(t reflect.Type, f reflect.StructField, kw, types string) error {
	_, alone, err := reflectField(f, nil)
	if err != nil {
		return fieldError(t, f, "%v", err)
	}
	held := alone.Type
	if held == "" {
		return nil // any JSON type: any, json.RawMessage, a type that decodes itself or is described by a $ref
	}
	numeric := func(s string) bool { return s == "integer" || s == "number" }
	for _, want := range strings.Split(types, ";") {
		switch {
		case !slices.Contains(jsonTypes, want):
			return fieldError(t, f, "jsonschema tag %q: no JSON type %q (%s)", kw, want, strings.Join(jsonTypes, ", "))
		case want == held || want == "null" || numeric(want) && numeric(held):
			continue
		}
		return fieldError(t, f, "jsonschema tag %q: the schema would take a JSON %s, which a field of Go type %s (JSON type %s) cannot hold", kw, want, f.Type, held)
	}
	return nil
}

// listed are the jsonschema tag keywords whose value is a list separated
// by semicolons (oneof_type=string;null).
var listed = []string{"oneof_type", "anyof_type", "oneof_ref", "anyof_ref"}

// tagKeywords are the keywords of invopop's jsonschema tag.
var tagKeywords = []string{"title", "description", "type", "anchor", "oneof_required", "anyof_required", "oneof_ref", "oneof_type",
	"anyof_ref", "anyof_type", "minLength", "maxLength", "pattern", "format", "readOnly", "writeOnly", "default", "example", "enum",
	"multipleOf", "minimum", "maximum", "exclusiveMaximum", "exclusiveMinimum", "minItems", "maxItems", "uniqueItems", "required", "nullable"}

// keywordAfterSemicolon is the keyword in value after a semicolon
// ("a;enum=b": enum), as written where a comma was meant; "" when there
// is none.
func keywordAfterSemicolon(value string) string {
	_, rest, found := strings.Cut(value, ";")
	for found {
		var part string
		part, rest, found = strings.Cut(rest, ";")
		if k, _, ok := strings.Cut(part, "="); ok && slices.Contains(tagKeywords, k) {
			return k
		}
	}
	return ""
}

// jsonTypes are the names of JSON Schema's types.
var jsonTypes = []string{"null", "boolean", "object", "array", "number", "integer", "string"}

// annotations are the jsonschema tag keywords invopop knows that check
// nothing: where it drops one, T checks no less than its tags say.
var annotations = []string{"title", "description", "example", "default", "readOnly", "writeOnly"}

// gathered are the jsonschema tag keywords invopop gathers the values of
// when given more than once; of the others it keeps the last.
var gathered = []string{"enum", "example", "default", "oneof_required", "anyof_required"}

// reflectField is the schema invopop reflects for a struct holding only
// a field of f's type and json options, with the keywords raw (as written
// in a tag, commas in them escaped) as its jsonschema tag; and the
// field's property.
func reflectField(f reflect.StructField, raw []string) ([]byte, *jsonschema.Schema, error) {
	_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	tag := `json:` + strconv.Quote("x,"+opts)
	if len(raw) > 0 {
		tag += ` jsonschema:` + strconv.Quote(strings.Join(raw, ","))
	}
	st := reflect.StructOf([]reflect.StructField{{Name: "X", Type: f.Type, Tag: reflect.StructTag(tag)}})
	r := &jsonschema.Reflector{ExpandedStruct: true, Namer: defNamer(), Mapper: selfDecoding, Lookup: shallow}
	s := r.ReflectFromType(st)
	b, err := s.MarshalJSON()
	if err != nil {
		return nil, nil, err
	}
	prop, _ := s.Properties.Get("x")
	if prop == nil {
		prop = &jsonschema.Schema{}
	}
	return b, prop, nil
}

// urlMismatch is why a url.URL cannot be a member: invopop describes it
// as a uri string, and encoding/json (so T) decodes it from an object of
// its fields, so that no value passes both and every body that sends the
// member is refused.
const urlMismatch = "invopop/jsonschema describes url.URL as a uri string, which encoding/json does not decode into it (it reads an object of its fields): no value would pass both: take a string, and url.Parse it"

var (
	aliasMethod = reflect.TypeFor[interface{ JSONSchemaAlias() any }]()
	timeType    = reflect.TypeFor[time.Time]()
	urlType     = reflect.TypeFor[url.URL]()
	rawType     = reflect.TypeFor[json.RawMessage]()
)

// shallow is reflectField's Lookup: a type that invopop describes by a
// $ref to its definition is referred to by an ID instead, and not
// reflected. A tag's keywords never reach into it, and reflecting it (and
// all it holds) for each keyword of each field made the check quadratic
// in the types a T holds: seconds at start-up for a few dozen recursive
// types with a description on each field.
func shallow(t reflect.Type) jsonschema.ID {
	switch t.Kind() {
	case reflect.Struct, reflect.Slice, reflect.Array, reflect.Map:
	default:
		return "" // described in place
	}
	if t.Name() == "" || t == timeType || t == urlType || t == rawType || selfDecoding(t) != nil ||
		t.Implements(aliasMethod) || reflect.PointerTo(t).Implements(aliasMethod) {
		return "" // described in place, or as another type
	}
	return jsonschema.ID("urn:contractguard:" + t.String())
}

// splitSchemaTag splits a jsonschema tag as invopop does: at commas not
// preceded by a backslash, which is dropped.
func splitSchemaTag(tag string) []string {
	out := rawSchemaTag(tag)
	for i := range out {
		out[i] = unescapeSchemaTag(out[i])
	}
	return out
}

// rawSchemaTag splits a jsonschema tag at commas not preceded by a
// backslash, keeping the backslashes: its keywords as written, which
// joined by commas make a tag again.
func rawSchemaTag(tag string) []string {
	parts := strings.Split(tag, ",")
	out := []string{parts[0]}
	for _, p := range parts[1:] {
		if last := out[len(out)-1]; strings.HasSuffix(last, `\`) {
			out[len(out)-1] = last + "," + p
			continue
		}
		out = append(out, p)
	}
	return out
}

// unescapeSchemaTag is a keyword as invopop reads it: each escaped comma
// of its raw form is a comma.
func unescapeSchemaTag(raw string) string {
	return strings.ReplaceAll(raw, `\,`, ",")
}

func elemType(t reflect.Type) string {
	return elem(t).String()
}
