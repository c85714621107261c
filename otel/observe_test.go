package cgotel

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/contractguard/contractguard"
)

// BenchmarkObserve is the exporter's own cost per request on the SDK:
// what an event costs once its attribute set has been seen (a map lookup,
// a counter and a histogram).
//
//	go test -run '^$' -bench Observe -benchmem ./otel/
func BenchmarkObserve(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer mp.Shutdown(context.Background())
	x, err := newExporter(mp.Meter(ScopeName), config{buckets: DefaultBuckets})
	if err != nil {
		b.Fatal(err)
	}
	events := []contractguard.Event{
		{Method: "GET", Route: "/api/users/:id", Outcome: contractguard.OutcomePassed, Duration: 40 * time.Microsecond},
		{Method: "POST", Route: "/api/users", Outcome: contractguard.OutcomeRejected, Code: contractguard.CodeSchemaInvalid, Duration: 60 * time.Microsecond},
		{Method: "GET", Outcome: contractguard.OutcomeUnmatched},
	}
	for _, e := range events {
		x.observe(e)
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			x.observe(events[i%len(events)])
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				x.observe(events[i%len(events)])
				i++
			}
		})
	})
}
