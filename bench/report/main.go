// Command report turns the output of this module's benchmarks into the
// tables of docs/performance.md: the median of every benchmark's runs, and
// each pipeline as a multiple of BenchmarkDecode on the same body.
//
//	cd bench
//	go test -bench . -benchmem -count 6 | tee bench.txt
//	go run ./report < bench.txt
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// pipelines are the body benchmarks, in the order of the tables, with the
// yardstick each is divided by.
var pipelines = []struct{ bench, label, yardstick string }{
	{"Decode", "encoding/json into `map[string]any` (the yardstick)", "Decode"},
	{"ContractguardCheck", "**contractguard `Guard.Check`** (parse, schema, 3 invariants)", "Decode"},
	{"ContractguardMiddleware", "**contractguard `Middleware`** around a handler", "Decode"},
	{"Huma", "huma v2 `huma.Validate` (decode + validate)", "Decode"},
	{"Validator", "encoding/json into a struct + go-playground/validator", "Decode"},
	{"KinOpenAPI", "kin-openapi `openapi3filter.ValidateRequest` with router", "Decode"},
	{"OffTheShelf", "santhosh-tekuri/jsonschema + 3 cel-go programs, off the shelf", "Decode"},
	{"DecodeStruct", "encoding/json into `T` (the yardstick of `Handle[T]`)", "DecodeStruct"},
	{"ContractguardHandle", "**contractguard `Handle[T]`** (checks of T's contract, T decoded)", "DecodeStruct"},
}

var cells = []string{"small/valid", "small/invalid", "1KB/valid", "1KB/invalid", "100KB/valid", "100KB/invalid"}

func main() {
	res, err := read(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	res.write(w)
}

// results holds every value of every run, by benchmark name (without its
// GOMAXPROCS suffix) and unit as the benchmark printed it.
type results struct {
	values map[string]map[string][]float64
	config []string // goos, goarch, cpu, …
}

func read(r io.Reader) (*results, error) {
	res := &results{values: map[string]map[string][]float64{}}
	seen := map[string]bool{}
	br := benchfmt.NewReader(r, "stdin")
	for br.Scan() {
		switch rec := br.Result(); rec := rec.(type) {
		case *benchfmt.SyntaxError:
			return nil, rec
		case *benchfmt.Result:
			for _, c := range rec.Config {
				if c.File && (c.Key == "goos" || c.Key == "goarch" || c.Key == "cpu") {
					if kv := c.Key + ": " + string(c.Value); !seen[kv] {
						seen[kv] = true
						res.config = append(res.config, kv)
					}
				}
			}
			base, parts := rec.Name.Parts()
			name := string(base)
			for _, p := range parts {
				if p[0] == '/' {
					name += string(p)
				}
			}
			if res.values[name] == nil {
				res.values[name] = map[string][]float64{}
			}
			for _, v := range rec.Values {
				unit, val := v.Unit, v.Value
				if v.OrigUnit != "" {
					unit, val = v.OrigUnit, v.OrigValue
				}
				res.values[name][unit] = append(res.values[name][unit], val)
			}
		}
	}
	if err := br.Err(); err != nil {
		return nil, err
	}
	if len(res.values) == 0 {
		return nil, fmt.Errorf("no benchmark results on standard input")
	}
	return res, nil
}

// median of the runs of name in unit; false when there are none.
func (res *results) median(name, unit string) (float64, bool) {
	vs := slices.Clone(res.values[name][unit])
	if len(vs) == 0 {
		return 0, false
	}
	slices.Sort(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2], true
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2, true
}

func (res *results) runs() int {
	n := 0
	for _, units := range res.values {
		n = max(n, len(units["ns/op"]))
	}
	return n
}

func bodyName(bench, cell string) string {
	size, validity, _ := strings.Cut(cell, "/")
	return bench + "/size=" + size + "/body=" + validity
}

func (res *results) write(w io.Writer) {
	fmt.Fprintf(w, "Medians of %d runs; %s.\n\n", res.runs(), strings.Join(res.config, ", "))

	fmt.Fprintln(w, "Time per request as a multiple of the yardstick on the same body (lower is better):")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| pipeline | %s |\n", strings.Join(cells, " | "))
	fmt.Fprintf(w, "|---|%s\n", strings.Repeat("---:|", len(cells)))
	for _, p := range pipelines {
		row := []string{p.label}
		for _, c := range cells {
			t, ok1 := res.median(bodyName(p.bench, c), "ns/op")
			y, ok2 := res.median(bodyName(p.yardstick, c), "ns/op")
			if !ok1 || !ok2 {
				row = append(row, "–")
				continue
			}
			row = append(row, fmt.Sprintf("%.2f×", t/y))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "The ~1 KB order body in absolute figures:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| pipeline | valid µs | valid allocs | valid B | invalid µs | invalid allocs |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	for _, p := range pipelines {
		v, i := bodyName(p.bench, "1KB/valid"), bodyName(p.bench, "1KB/invalid")
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", p.label,
			res.num(v, "ns/op", 1e-3, "%.1f"), res.num(v, "allocs/op", 1, "%.0f"), res.num(v, "B/op", 1, "%.0f"),
			res.num(i, "ns/op", 1e-3, "%.1f"), res.num(i, "allocs/op", 1, "%.0f"))
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "Load test, chi on loopback, 8 client connections, ~1 KB order body, the three servers in interleaved rounds (the share is the median of each run's ratio):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| server | req/s | of unguarded | p50 µs | p99 µs |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, s := range []string{"unguarded", "typed", "middleware"} {
		share := res.num("Load", s+"-%", 1, "%.0f%%")
		if _, ok := res.median("Load", "unguarded-req/s"); ok && s == "unguarded" {
			share = "100%" // the base; "–" when there is no load run
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", s, res.num("Load", s+"-req/s", 1, "%.0f"), share,
			res.num("Load", s+"-p50-µs", 1, "%.0f"), res.num("Load", s+"-p99-µs", 1, "%.0f"))
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "Start-up and scale:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| benchmark | time | allocs/op | other |")
	fmt.Fprintln(w, "|---|---:|---:|---|")
	fmt.Fprintf(w, "| load 1,000 contracts (`New`) | %s ms | %s | %s MiB kept |\n",
		res.num("Startup1000Contracts", "ns/op", 1e-6, "%.0f"), res.num("Startup1000Contracts", "allocs/op", 1, "%.0f"),
		res.num("Startup1000Contracts", "MiB-kept", 1, "%.1f"))
	for _, op := range []string{"match", "check-matched", "check-unmatched", "middleware-unmatched"} {
		n := "MatchAmong10000/op=" + op
		fmt.Fprintf(w, "| among 10,000 contracts: %s | %s ns | %s | %s B/op |\n", op,
			res.num(n, "ns/op", 1, "%.0f"), res.num(n, "allocs/op", 1, "%.0f"), res.num(n, "B/op", 1, "%.0f"))
	}
	fmt.Fprintf(w, "| 1 MiB order body (`Check`) | %s ms | %s | %s MB/s, %s KiB/op |\n",
		res.num("1MiBBody", "ns/op", 1e-6, "%.1f"), res.num("1MiBBody", "allocs/op", 1, "%.0f"),
		res.num("1MiBBody", "MB/s", 1, "%.0f"), res.num("1MiBBody", "B/op", 1.0/1024, "%.0f"))
	fmt.Fprintf(w, "| 1 MiB order body, encoding/json into a map | %s ms | %s | %s MB/s, %s KiB/op |\n",
		res.num("1MiBDecode", "ns/op", 1e-6, "%.1f"), res.num("1MiBDecode", "allocs/op", 1, "%.0f"),
		res.num("1MiBDecode", "MB/s", 1, "%.0f"), res.num("1MiBDecode", "B/op", 1.0/1024, "%.0f"))
}

// num formats the median of name in unit, scaled; "–" when not measured.
func (res *results) num(name, unit string, scale float64, format string) string {
	v, ok := res.median(name, unit)
	if !ok {
		return "–"
	}
	return fmt.Sprintf(format, v*scale)
}
