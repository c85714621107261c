package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"cel.dev/cel-go/cel"
	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// BenchmarkOffTheShelf is the straightforward build from the same
// libraries the guard uses, as they come: encoding/json (UseNumber),
// santhosh-tekuri/jsonschema v6 against the contract's schema, and the
// three invariants as cel-go programs over a map activation.
func BenchmarkOffTheShelf(b *testing.B) {
	src, err := os.ReadFile("testdata/contracts/contracts.yaml")
	if err != nil {
		b.Fatal(err)
	}
	env, err := cel.NewEnv(cel.Variable("request", cel.MapType(cel.StringType, cel.DynType)), cel.CrossTypeNumericComparisons(true))
	if err != nil {
		b.Fatal(err)
	}
	type contract struct {
		schema *jsonschema.Schema
		prgs   []cel.Program
	}
	contracts := map[string]contract{}
	for i, doc := range strings.Split(string(src), "\n---\n") {
		var c struct {
			Endpoint   string         `yaml:"endpoint"`
			Schema     map[string]any `yaml:"schema"`
			Invariants []struct {
				Expr string `yaml:"expr"`
			} `yaml:"invariants"`
		}
		if err := yaml.Unmarshal([]byte(doc), &c); err != nil {
			b.Fatal(err)
		}
		raw, _ := json.Marshal(c.Schema)
		sdoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			b.Fatal(err)
		}
		comp := jsonschema.NewCompiler()
		comp.DefaultDraft(jsonschema.Draft7)
		comp.AssertFormat()
		url := "file:///c" + string(rune('0'+i)) + ".json"
		comp.AddResource(url, sdoc)
		sch, err := comp.Compile(url)
		if err != nil {
			b.Fatal(err)
		}
		var prgs []cel.Program
		for _, inv := range c.Invariants {
			ast, iss := env.Compile(inv.Expr)
			if iss.Err() != nil {
				b.Fatal(iss.Err())
			}
			p, err := env.Program(ast)
			if err != nil {
				b.Fatal(err)
			}
			prgs = append(prgs, p)
		}
		contracts[c.Endpoint] = contract{sch, prgs}
	}
	forBodies(b, func(b *testing.B, size, validity string, body []byte) {
		c := contracts[path(size)]
		for b.Loop() {
			d := json.NewDecoder(bytes.NewReader(body))
			d.UseNumber()
			var v any
			if err := d.Decode(&v); err != nil {
				b.Fatal(err)
			}
			why := c.schema.Validate(v)
			rejected := why != nil
			if !rejected {
				act := map[string]any{"request": map[string]any{"body": v}}
				for _, p := range c.prgs {
					if out, _, err := p.Eval(act); err != nil || out.Value() != true {
						rejected = true
					}
				}
			}
			verdict(b, validity, rejected, why)
		}
	})
}
