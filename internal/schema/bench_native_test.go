package schema

import (
	"encoding/json"
	"testing"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
)

// BenchmarkNative validates an order-like body on the fast path, valid
// and not: the common keywords only, and with combinators.
func BenchmarkNative(b *testing.B) {
	c := NewCompiler(nil, nil)
	order := `{"type":"object","required":["id","email","items"],"additionalProperties":false,"properties":{
		"id":{"type":"string","format":"uuid"},"email":{"type":"string","format":"email","maxLength":100},
		"note":{"type":"string","pattern":"^[a-z ]*$"},
		"items":{"type":"array","minItems":1,"maxItems":50,"items":{"type":"object","required":["sku","qty"],
			"properties":{"sku":{"type":"string","minLength":3},"qty":{"type":"integer","minimum":1,"maximum":99},
			"price":{"type":"number","exclusiveMinimum":0},"kind":{"enum":["a","b","c"]}}}}}}`
	combined := `{"allOf":[` + order + `],"if":{"required":["note"]},"then":{"properties":{"note":{"minLength":1}}},
		"not":{"required":["forbidden"]}}`
	valid := `{"id":"0b8f6a1e-4f7a-4c39-9d5e-2f1b3c4d5e6f","email":"a@b.co","note":"hello there","items":[` +
		`{"sku":"abc","qty":2,"price":9.5,"kind":"a"},{"sku":"abd","qty":3,"price":1,"kind":"b"},{"sku":"abe","qty":4,"price":0.5,"kind":"c"}]}`
	invalid := `{"id":"x","email":"a@b","note":"HI","items":[{"sku":"a","qty":0,"price":0,"kind":"d"}],"extra":1}`
	for _, sc := range []struct{ name, schema string }{{"common", order}, {"combinators", combined}} {
		s := compileSuiteSchema(b, c, sc.name+".json", json.RawMessage(sc.schema))
		if !s.Native() {
			b.Fatal("not native")
		}
		for _, body := range []struct{ name, text string }{{"valid", valid}, {"invalid", invalid}} {
			v, err := jsonbody.Parse([]byte(body.text), 64)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(sc.name+"/"+body.name, func(b *testing.B) {
				b.ReportAllocs()
				var n int
				rep := failure.ReportFunc(func(string, string) { n++ })
				for b.Loop() {
					s.Validate(v, rep)
				}
			})
		}
	}
}
