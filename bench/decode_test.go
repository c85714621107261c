package bench

import (
	"encoding/json"
	"testing"
)

// BenchmarkDecode is the yardstick: encoding/json into map[string]any,
// no validation at all. Every other pipeline is reported as a multiple of
// it.
func BenchmarkDecode(b *testing.B) {
	forBodies(b, func(b *testing.B, size, validity string, body []byte) {
		for b.Loop() {
			var v map[string]any
			if err := json.Unmarshal(body, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDecodeStruct is encoding/json into the request type: the
// yardstick of Handle[T].
func BenchmarkDecodeStruct(b *testing.B) {
	forBodies(b, func(b *testing.B, size, validity string, body []byte) {
		for b.Loop() {
			var err error
			if size == "small" {
				var l Line
				err = json.Unmarshal(body, &l)
			} else {
				var o Order
				err = json.Unmarshal(body, &o)
			}
			if err != nil && validity == "valid" {
				b.Fatal(err)
			}
		}
	})
}

// forBodies runs f on every size, valid and invalid, as sub-benchmarks
// named size=…/body=….
func forBodies(b *testing.B, f func(b *testing.B, size, validity string, body []byte)) {
	for _, size := range sizes {
		for _, validity := range []string{"valid", "invalid"} {
			body := bodies[size]
			if validity == "invalid" {
				body = bodies[size+"-invalid"]
			}
			b.Run("size="+size+"/body="+validity, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(body)))
				f(b, size, validity, body)
			})
		}
	}
}

// verdict fails the benchmark when a pipeline accepts an invalid body or
// refuses a valid one.
func verdict(b *testing.B, validity string, rejected bool, why any) {
	if rejected != (validity == "invalid") {
		b.Fatalf("%s body: rejected=%v (%v)", validity, rejected, why)
	}
}
