package schema

import (
	"encoding/json"
	"fmt"
	"github.com/contractguard/contractguard/internal/failure"
	"math/big"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// walk reports the leaves of a validation error tree. Required and
// additional properties are reported at each property's own path.
// Messages are built from the typed kinds, not from LocalizedString, which
// formats through x/text and costs as much as the validation itself.
//
// With deep set, a failed anyOf or oneOf reports the failures of its
// branches instead of one line for the whole: what an author fixing a
// contract needs, where a client is better served by one line.
func walk(e *jsonschema.ValidationError, deep bool, add func(loc []string, msg string)) {
	loc := e.InstanceLocation
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.AllOf, *kind.Reference:
		for _, c := range e.Causes {
			walk(c, deep, add)
		}
		return
	case *kind.AnyOf, *kind.OneOf:
		if deep && len(e.Causes) > 0 {
			for _, c := range relevant(e.Causes) {
				walk(c, deep, add)
			}
			return
		}
	case *kind.Required:
		for _, p := range k.Missing {
			add(with(loc, p), msgRequired)
		}
		return
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			add(with(loc, p), msgNotAllowed)
		}
		return
	case *foldKind:
		add(with(loc, k.name), msgFoldCase(k.prop))
		return
	case *kind.Dependency:
		for _, p := range k.Missing {
			add(with(loc, p), msgDependency(k.Prop))
		}
		return
	case *kind.DependentRequired:
		for _, p := range k.Missing {
			add(with(loc, p), msgDependency(k.Prop))
		}
		return
	}
	add(loc, message(e))
}

// relevant drops the branches of an anyOf or oneOf that failed only
// because the value has another type than the branch is about ("must be
// an array" when a string was clearly meant for the other branch), unless
// that is all there is.
func relevant(causes []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	var out []*jsonschema.ValidationError
	for _, c := range causes {
		if !onlyTypeError(c) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return causes
	}
	return out
}

func onlyTypeError(e *jsonschema.ValidationError) bool {
	switch e.ErrorKind.(type) {
	case *kind.Type:
		return true
	case *kind.Schema, *kind.Group, *kind.Reference:
		return len(e.Causes) == 1 && onlyTypeError(e.Causes[0])
	}
	return false
}

func with(loc []string, p string) []string {
	l := make([]string, len(loc)+1)
	copy(l, loc)
	l[len(loc)] = p
	return l
}

func message(e *jsonschema.ValidationError) string {
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		return msgType(k.Want, k.Got)
	case *kind.Enum:
		return msgEnum(k.Want)
	case *kind.Const:
		return msgConst(k.Want)
	case *kind.Format:
		return formatMessage(k.Want)
	case *kind.Minimum:
		return msgMinimum(k.Want)
	case *kind.Maximum:
		return msgMaximum(k.Want)
	case *kind.ExclusiveMinimum:
		return msgExclusiveMinimum(k.Want)
	case *kind.ExclusiveMaximum:
		return msgExclusiveMaximum(k.Want)
	case *kind.MultipleOf:
		return msgMultipleOf(k.Want)
	case *kind.MinItems:
		return msgMinItems(k.Want)
	case *kind.MaxItems:
		return msgMaxItems(k.Want)
	case *kind.AdditionalItems:
		return msgAdditionalItems(k.Count)
	case *kind.UniqueItems:
		return msgUniqueItems(k.Duplicates[0], k.Duplicates[1])
	case *kind.Contains:
		return msgContains
	case *kind.MinContains:
		return fmt.Sprintf("must contain at least %d matching %s", k.Want, plural(k.Want, "item"))
	case *kind.MaxContains:
		return fmt.Sprintf("must contain at most %d matching %s", k.Want, plural(k.Want, "item"))
	case *kind.MinLength:
		return msgMinLength(k.Want)
	case *kind.MaxLength:
		return msgMaxLength(k.Want)
	case *kind.Pattern:
		return msgPattern(k.Want)
	case *kind.MinProperties:
		return msgMinProperties(k.Want)
	case *kind.MaxProperties:
		return msgMaxProperties(k.Want)
	case *kind.PropertyNames:
		return msgPropertyName(k.Property)
	case *kind.FalseSchema:
		return msgNotAllowed
	case *kind.Not:
		return msgNot
	case *kind.AnyOf:
		return msgAnyOf
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			return msgOneOfSeveral
		}
		return msgOneOf
	case *kind.ContentEncoding:
		return "must be encoded as " + k.Want
	case *kind.ContentMediaType:
		return "must be of media type " + k.Want
	case *kind.ContentSchema:
		return "has content that does not match its schema"
	case *kind.InvalidJsonValue:
		return msgInvalidValue
	}
	return "is invalid"
}

// The messages both engines give, keyword by keyword.
const (
	msgRequired     = "is required"
	msgNotAllowed   = "is not allowed"
	msgInvalidValue = "is not a JSON value"
	msgContains     = "must contain a matching item"
	msgNot          = "matches a schema it must not match"
	msgAnyOf        = "must match at least one of the allowed schemas"
	msgOneOf        = "must match exactly one of the allowed schemas"
	msgOneOfSeveral = "must match exactly one of the allowed schemas, but matches several"
)

func msgAdditionalItems(count int) string {
	return fmt.Sprintf("has %d more %s than allowed", count, plural(count, "item"))
}

func msgPropertyName(name string) string {
	return fmt.Sprintf("has an invalid property name %q", failure.Clip(name))
}

func msgUniqueItems(j, i int) string {
	return fmt.Sprintf("must not repeat items (items %d and %d are equal)", j, i)
}

func msgDependency(prop string) string {
	return fmt.Sprintf("is required when %q is present", failure.Clip(prop))
}

func msgMultipleOf(want *big.Rat) string { return "must be a multiple of " + ratString(want) }

func msgType(want []string, got string) string {
	return "must be " + typeList(want) + ", not " + article(got)
}
func msgEnum(want []any) string             { return "must be one of " + valueList(want) }
func msgConst(want any) string              { return "must be " + display(want) }
func msgMinimum(r *big.Rat) string          { return "must be >= " + ratString(r) }
func msgMaximum(r *big.Rat) string          { return "must be <= " + ratString(r) }
func msgExclusiveMinimum(r *big.Rat) string { return "must be > " + ratString(r) }
func msgExclusiveMaximum(r *big.Rat) string { return "must be < " + ratString(r) }
func msgPattern(p string) string            { return "must match the pattern " + failure.Clip(p) }

// ExclusiveMessage is the message of a failed exclusiveMinimum (min) or
// exclusiveMaximum of r, as the schema's own.
func ExclusiveMessage(min bool, r *big.Rat) string {
	if min {
		return msgExclusiveMinimum(r)
	}
	return msgExclusiveMaximum(r)
}

func msgMinItems(n int) string {
	return fmt.Sprintf("must have at least %d %s", n, plural(n, "item"))
}

func msgMaxItems(n int) string {
	return fmt.Sprintf("must have at most %d %s", n, plural(n, "item"))
}

func msgMinLength(n int) string {
	return fmt.Sprintf("must be at least %d %s long", n, plural(n, "character"))
}

func msgMaxLength(n int) string {
	return fmt.Sprintf("must be at most %d %s long", n, plural(n, "character"))
}

func msgMinProperties(n int) string {
	return fmt.Sprintf("must have at least %d %s", n, plural(n, "property"))
}

func msgMaxProperties(n int) string {
	return fmt.Sprintf("must have at most %d %s", n, plural(n, "property"))
}

var formatMessages = map[string]string{
	"email":     "must be a valid email address",
	"uri":       "must be a valid URI",
	"uuid":      "must be a valid UUID",
	"date":      "must be a valid date (YYYY-MM-DD)",
	"date-time": "must be a valid date-time (RFC 3339)",
	"time":      "must be a valid time (RFC 3339)",
	"ipv4":      "must be a valid IPv4 address",
	"ipv6":      "must be a valid IPv6 address",
	"hostname":  "must be a valid hostname",
}

func formatMessage(f string) string {
	if m, ok := formatMessages[f]; ok {
		return m
	}
	return "must be a valid " + failure.Clip(f)
}

func typeList(types []string) string {
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = article(t)
	}
	return strings.Join(parts, " or ")
}

func article(t string) string {
	switch t {
	case "null":
		return "null"
	case "integer", "object", "array":
		return "an " + t
	}
	return "a " + t
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	if strings.HasSuffix(word, "y") {
		return word[:len(word)-1] + "ies"
	}
	return word + "s"
}

// valueList shows up to eight allowed values of an enum.
func valueList(vals []any) string {
	const max = 8
	parts := make([]string, 0, min(len(vals), max)+1)
	for i, v := range vals {
		if i == max {
			parts = append(parts, fmt.Sprintf("… (%d more)", len(vals)-max))
			break
		}
		parts = append(parts, display(v))
	}
	return strings.Join(parts, ", ")
}

// display is v as JSON, as the contract wrote it: not HTML-escaped
// (json.Marshal's "R\u0026D" would reach the client as those characters:
// the error body is not HTML-escaped either).
func display(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return failure.Clip(strings.TrimSuffix(b.String(), "\n"))
}

func ratString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	s := strings.TrimRight(r.FloatString(20), "0")
	return strings.TrimSuffix(s, ".")
}
