package cgprometheus

import (
	"testing"
	"time"

	"github.com/contractguard/contractguard"
)

// BenchmarkObserve is the collector's own cost per request: what an event
// costs once its label set has been seen (a map lookup, a counter and a
// histogram).
//
//	go test -run '^$' -bench Observe -benchmem ./prometheus/
func BenchmarkObserve(b *testing.B) {
	g, err := contractguard.New(contractguard.Options{})
	if err != nil {
		b.Fatal(err)
	}
	c := NewCollector(g)
	events := []contractguard.Event{
		{Method: "GET", Route: "/api/users/:id", Outcome: contractguard.OutcomePassed, Duration: 40 * time.Microsecond},
		{Method: "POST", Route: "/api/users", Outcome: contractguard.OutcomeRejected, Code: contractguard.CodeSchemaInvalid, Duration: 60 * time.Microsecond},
		{Method: "GET", Outcome: contractguard.OutcomeUnmatched},
	}
	for _, e := range events {
		c.observe(e)
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			c.observe(events[i%len(events)])
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				c.observe(events[i%len(events)])
				i++
			}
		})
	})
}
