package learn_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/learn"
)

// Example is the guard's side of learning: sample a request that matched
// no contract, observe it, and later export what was learned and infer
// contracts from it (merged with other replicas' exports first).
func Example() {
	l := learn.New(learn.Limits{SampleRate: 1})
	for i := range 12 {
		body := fmt.Sprintf(`{"email":"user%d@example.com","quantity":%d}`, i, i+1)
		doc, err := jsonbody.Parse([]byte(body), 64)
		if err != nil {
			panic(err)
		}
		if l.Sample() {
			// The pattern is the router's ("" if unknown); the path as received.
			l.Observe("POST", "", fmt.Sprintf("/carts/%d/items", 100+i), doc.Root(), time.Unix(int64(i), 0))
		}
	}
	o := learn.Merge(l.Export(), learn.New(learn.Limits{}).Export()) // another replica's export
	for _, c := range o.Contracts() {
		schema, _ := json.Marshal(c.Schema)
		fmt.Println(c.Method, c.Endpoint, c.Samples)
		fmt.Println(string(schema))
	}
	// Output:
	// POST /carts/{cartId}/items 12
	// {"additionalProperties":false,"properties":{"email":{"format":"email","type":"string"},"quantity":{"minimum":0,"type":"integer"}},"required":["email","quantity"],"type":"object"}
}
