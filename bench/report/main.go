// Command report turns the output of this module's benchmarks into the
// tables of docs/performance.md: the median of every benchmark's runs, and
// each pipeline as a multiple of BenchmarkDecode on the same body.
//
//	cd bench
//	for pass in 1 2 3 4 5 6; do go test -bench . -benchmem -count 1; done | tee bench.txt
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
	fmt.Fprintln(w, "Load test, chi on loopback, the three servers in interleaved rounds (the share is the median of each run's ratio):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| connections, body | server | req/s | of unguarded | p50 µs | p99 µs |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|")
	for _, l := range loads {
		for _, s := range []string{"unguarded", "typed", "middleware"} {
			share := res.num(l.bench, s+"-%", 1, "%.0f%%")
			if _, ok := res.median(l.bench, "unguarded-req/s"); ok && s == "unguarded" {
				share = "100%" // the base; "–" when there is no load run
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", l.label, s, res.num(l.bench, s+"-req/s", 1, "%.0f"), share,
				res.num(l.bench, s+"-p50-µs", 1, "%.0f"), res.num(l.bench, s+"-p99-µs", 1, "%.0f"))
		}
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "Start-up and scale (alike: the contracts share a schema and a rule, as a service's do, compiled once; distinct: nothing shared):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| benchmark | time | allocs/op | other |")
	fmt.Fprintln(w, "|---|---:|---:|---|")
	for _, n := range []string{"1000", "10000"} {
		for _, kind := range []string{"alike", "distinct"} {
			for _, op := range []string{"new", "reload"} {
				name := "Startup/contracts=" + n + "/" + kind + "/op=" + op
				other := ""
				if op == "new" {
					other = res.num(name, "KiB-kept/contract", 1, "%.1f") + " KiB kept a contract"
				}
				fmt.Fprintf(w, "| %s %s contracts, `%s` | %s ms | %s | %s |\n", n, kind, map[string]string{"new": "New", "reload": "Reload"}[op],
					res.num(name, "ns/op", 1e-6, "%.0f"), res.num(name, "allocs/op", 1, "%.0f"), other)
			}
		}
	}
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

	res.writeGoals(w)
}

// loads are the load test's variants.
var loads = []struct{ bench, label string }{
	{"Load/conns=8/size=1KB", "8, ~1 KB"},
	{"Load/conns=64/size=1KB", "64, ~1 KB"},
	{"Load/conns=8/size=small", "8, ~100 B"},
	{"Load/conns=8/size=100KB", "8, ~100 KB"},
}

// goal is one of the performance goals (issue 20) and what the run says
// of it.
type goal struct {
	what, want string
	got        float64
	ok         bool // measured
	limit      float64
	atLeast    bool // met when got >= limit; else when got <= limit
	format     string
}

func (g goal) met() bool {
	if g.atLeast {
		return g.got >= g.limit
	}
	return g.got <= g.limit
}

func (res *results) writeGoals(w io.Writer) {
	var goals []goal
	// ratio is the worst ratio of bench to its yardstick over every body.
	ratio := func(bench, yardstick string) (float64, bool) {
		worst, any := 0.0, false
		for _, c := range cells {
			t, ok1 := res.median(bodyName(bench, c), "ns/op")
			y, ok2 := res.median(bodyName(yardstick, c), "ns/op")
			if ok1 && ok2 {
				worst, any = max(worst, t/y), true
			}
		}
		return worst, any
	}
	for _, r := range []struct {
		bench, yardstick, label string
		limit                   float64
	}{
		{"ContractguardCheck", "Decode", "`Check`, every body, valid and invalid", 0.8},
		{"ContractguardMiddleware", "Decode", "`Middleware`, every body", 1.0},
		{"ContractguardHandle", "DecodeStruct", "`Handle[T]`, every body", 1.0},
	} {
		v, ok := ratio(r.bench, r.yardstick)
		goals = append(goals, goal{r.label + " (worst ratio to the decode)", fmt.Sprintf("≤ %.1f×", r.limit), v, ok, r.limit, false, "%.2f×"})
	}
	for _, l := range loads {
		for _, s := range []struct {
			server string
			limit  float64
		}{{"typed", 100}, {"middleware", 90}} {
			v, ok := res.median(l.bench, s.server+"-%")
			goals = append(goals, goal{fmt.Sprintf("load (%s): %s server's req/s", l.label, s.server), fmt.Sprintf("≥ %.0f%% of unguarded", s.limit), v, ok,
				s.limit, true, "%.0f%%"})
			p, ok1 := res.median(l.bench, s.server+"-p99-µs")
			u, ok2 := res.median(l.bench, "unguarded-p99-µs")
			goals = append(goals, goal{fmt.Sprintf("load (%s): %s server's p99", l.label, s.server), "≤ unguarded + 10%", 100 * p / u, ok1 && ok2,
				110, false, "%.0f%% of unguarded"})
		}
	}
	scan := func(via string) (float64, bool) {
		on, ok1 := res.median("ContractguardScan/via="+via+"/scan=on", "ns/op")
		off, ok2 := res.median("ContractguardScan/via="+via+"/scan=off", "ns/op")
		return 100 * (on/off - 1), ok1 && ok2
	}
	for _, via := range []string{"check", "middleware"} {
		v, ok := scan(via)
		goals = append(goals, goal{"vulnerability scan on, ~1 KB order, via " + via, "≤ +15%", v, ok, 15, false, "%+.0f%%"})
	}
	for _, st := range []struct {
		name, label string
		limitMS     float64
	}{
		{"Startup/contracts=1000/alike/op=new", "start-up, 1,000 contracts (alike)", 100},
		{"Startup/contracts=1000/distinct/op=new", "start-up, 1,000 contracts (distinct)", 100},
		{"Startup/contracts=10000/alike/op=new", "start-up, 10,000 contracts (alike)", 1000},
		{"Startup/contracts=10000/distinct/op=new", "start-up, 10,000 contracts (distinct)", 1000},
		{"Startup/contracts=1000/alike/op=reload", "reload, 1,000 contracts (alike)", 100},
		{"Startup/contracts=1000/distinct/op=reload", "reload, 1,000 contracts (distinct)", 100},
	} {
		v, ok := res.median(st.name, "ns/op")
		goals = append(goals, goal{st.label, fmt.Sprintf("≤ %.0f ms", st.limitMS), v / 1e6, ok, st.limitMS, false, "%.0f ms"})
	}
	for _, a := range []struct {
		bench, label string
		limit        float64
	}{
		{"ContractguardCheck/size=small/body=valid", "allocations, ~100 B valid body, `Check`", 5},
		{"ContractguardMiddleware/size=small/body=valid", "allocations, ~100 B valid body, `Middleware`", 10},
	} {
		v, ok := res.median(a.bench, "allocs/op")
		goals = append(goals, goal{a.label, fmt.Sprintf("≤ %.0f", a.limit), v, ok, a.limit, false, "%.0f"})
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "The goals of issue 20, as this run measured them:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| goal | wanted | measured | verdict |")
	fmt.Fprintln(w, "|---|---|---:|---|")
	for _, g := range goals {
		got, verdict := "–", "not measured"
		if g.ok {
			got, verdict = fmt.Sprintf(g.format, g.got), "**not met**"
			if g.met() {
				verdict = "met"
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", g.what, g.want, got, verdict)
	}
}

// num formats the median of name in unit, scaled; "–" when not measured.
func (res *results) num(name, unit string, scale float64, format string) string {
	v, ok := res.median(name, unit)
	if !ok {
		return "–"
	}
	return fmt.Sprintf(format, v*scale)
}
