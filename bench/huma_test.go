package bench

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/danielgtaylor/huma/v2"
)

// BenchmarkHuma is huma v2: encoding/json into any, huma.Validate against
// the schema huma builds from the request type, then the three rules.
func BenchmarkHuma(b *testing.B) {
	registry := huma.NewMapRegistry("#/components/schemas/", huma.DefaultSchemaNamer)
	schemas := map[string]*huma.Schema{
		"small": huma.SchemaFromType(registry, reflect.TypeOf(Line{})),
		"order": huma.SchemaFromType(registry, reflect.TypeOf(Order{})),
	}
	pb := huma.NewPathBuffer(make([]byte, 0, 128), 0)
	res := &huma.ValidateResult{}
	forBodies(b, func(b *testing.B, size, validity string, body []byte) {
		s := schemas["order"]
		if size == "small" {
			s = schemas["small"]
		}
		for b.Loop() {
			var v any
			if err := json.Unmarshal(body, &v); err != nil {
				b.Fatal(err)
			}
			pb.Reset()
			res.Reset()
			huma.Validate(registry, s, pb, huma.ModeWriteToServer, v, res)
			rejected := len(res.Errors) > 0
			if !rejected {
				rejected = mapRules(size, v.(map[string]any)) != nil
			}
			verdict(b, validity, rejected, res.Errors)
		}
	})
}
