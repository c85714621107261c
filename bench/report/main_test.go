package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sample = `goos: linux
goarch: amd64
cpu: Test CPU
BenchmarkDecode/size=1KB/body=valid-2         	  1000	     20000 ns/op	 155 allocs/op
BenchmarkDecode/size=1KB/body=valid-2         	  1000	     22000 ns/op	 155 allocs/op
BenchmarkDecode/size=1KB/body=valid-2         	  1000	     90000 ns/op	 155 allocs/op
BenchmarkContractguardCheck/size=1KB/body=valid-2 	  1000	     15000 ns/op	 15 allocs/op
BenchmarkContractguardCheck/size=1KB/body=valid-2 	  1000	     16000 ns/op	 15 allocs/op
BenchmarkLoad/conns=8/size=1KB-2 	 1000	 180000 ns/op	 15000 unguarded-req/s	 400 unguarded-p50-µs	 3000 unguarded-p99-µs	 14250 typed-req/s	 410 typed-p50-µs	 3100 typed-p99-µs	 95.0 typed-%
`

func TestReport(t *testing.T) {
	res, err := read(strings.NewReader(sample))
	require.NoError(t, err)

	m, ok := res.median("Decode/size=1KB/body=valid", "ns/op")
	assert.True(t, ok)
	assert.Equal(t, 22000.0, m, "the median of three runs is the middle one, outlier or not")
	m, _ = res.median("ContractguardCheck/size=1KB/body=valid", "ns/op")
	assert.Equal(t, 15500.0, m, "the median of two runs is their mean")

	var out strings.Builder
	res.write(&out)
	s := out.String()
	assert.Contains(t, s, "Medians of 3 runs; goos: linux, goarch: amd64, cpu: Test CPU.")
	assert.Contains(t, s, "| **contractguard `Guard.Check`** (parse, schema, 3 invariants) | – | – | 0.70× | – | – | – |")
	assert.Contains(t, s, "| 8, ~1 KB | typed | 14250 | 95% | 410 | 3100 |")
	assert.Contains(t, s, "| 8, ~1 KB | unguarded | 15000 | 100% | 400 | 3000 |")
	assert.Contains(t, s, "| 8, ~1 KB | middleware | – | – | – | – |", "no figures, no share")
	assert.Contains(t, s, "| `Check`, every body, valid and invalid (worst ratio to the decode) | ≤ 0.8× | 0.70× | met |")
	assert.Contains(t, s, "| load (8, ~1 KB): typed server's req/s | ≥ 100% of unguarded | 95% | **not met** |")
	assert.Contains(t, s, "| load (8, ~1 KB): typed server's p99 | ≤ unguarded + 10% | 103% of unguarded | met |")
	assert.Contains(t, s, "| start-up, 1,000 contracts (alike) | ≤ 100 ms | – | not measured |")
}

// Without a load run, the unguarded row claims no share either.
func TestReport_NoLoadRun(t *testing.T) {
	res, err := read(strings.NewReader("BenchmarkDecode/size=1KB/body=valid-2 \t 100 \t 22000 ns/op\n"))
	require.NoError(t, err)
	var out strings.Builder
	res.write(&out)
	assert.Contains(t, out.String(), "| unguarded | – | – | – | – |")
}

func TestReport_NoResults(t *testing.T) {
	_, err := read(strings.NewReader("PASS\nok  \tpkg\t1.0s\n"))
	assert.Error(t, err)
}
