package contractguard

import (
	"reflect"
	"slices"
	"strings"

	"github.com/contractguard/contractguard/internal/bind"
	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
)

// checkBody checks the body against c's schema and, when it passes,
// decodes it into c's Go type (a value the schema accepts but the type
// cannot hold fails here). Each failure is reported to q, at its path.
func (c *contract) checkBody(q *request) {
	st := q.state
	doc := st.doc.Load()
	if c.schema != nil && !c.schema.Validate(doc, q) {
		return
	}
	if c.body != nil {
		v := reflect.New(c.body)
		if bind.Into(v.Elem(), doc.Root(), q) && c.floatsHold(v.Elem(), doc.Root(), q) {
			if st.values == nil {
				st.values = st.valBuf[:0]
			}
			st.values = append(st.values, boundValue{c, v.Interface()})
		}
	}
}

// floatsHold holds the floats of v, c's body decoded from d, to the
// exclusive bounds of c's schema (floats.go).
func (c *contract) floatsHold(v reflect.Value, d jsonbody.Value, q *request) bool {
	if c.floats == nil {
		return true
	}
	var path failure.Path
	return c.floats.check(v, d, &path, q)
}

// schemaViolation is the failures of the schemas and of decoding, sorted
// by path: nil when there are none.
func (q *request) schemaViolation() *Violation {
	if len(q.details) == 0 {
		return nil
	}
	sortByPath(q.details)
	return newViolation(CodeSchemaInvalid, q.listed()...)
}

// sortByPath puts schema failures in the order a SCHEMA_INVALID lists
// them: by path, then by message.
func sortByPath(ds []Detail) {
	slices.SortStableFunc(ds, func(a, b Detail) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
}

// ruleViolation is the rules found false, in contract order: nil when
// there are none.
func (q *request) ruleViolation() *Violation {
	if len(q.details) == 0 {
		return nil
	}
	return newViolation(CodeInvariantViolated, q.listed()...)
}
