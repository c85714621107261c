package learn

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/jsonbody"
)

// tightLimits are hit by traffic(…, 600): TestMerge_CapsHit.
var tightLimits = Limits{Routes: 6, Properties: 5, Depth: 2, EnumValues: 3, EnumMinSamples: 5, StableSamples: 4, MaxBytes: 6 * 15 << 10}

// roundTrip passes observations through the exchange format, as replicas'
// exports travel.
func roundTrip(t testing.TB, o *Observations) *Observations {
	t.Helper()
	b, err := json.Marshal(o)
	require.NoError(t, err)
	var back Observations
	require.NoError(t, json.Unmarshal(b, &back))
	return &back
}

// rendered is every contract as the file WriteContracts writes.
func rendered(ls []Learned) []string {
	var out []string
	for _, l := range ls {
		out = append(out, string(render(l)))
	}
	return out
}

// TestMerge_ExactAcrossReplicas is the merge property: random traffic,
// split at random over three replicas, merged in every order and
// grouping, gives exactly the contracts (and the files) of one learner
// that saw it all. It holds under the default limits and under limits so
// tight that every cap is hit: the caps keep what they keep whatever the
// order.
func TestMerge_ExactAcrossReplicas(t *testing.T) {
	for _, tc := range []struct {
		name string
		lim  Limits
	}{
		{"default limits", Limits{}},
		{"every cap hit", tightLimits},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(6) {
				rng := rand.New(rand.NewPCG(seed, 17))
				reqs := traffic(rng, 600)
				whole := learn(t, tc.lim, reqs...)
				want := whole.Contracts()
				require.NotEmpty(t, want)

				var parts [3][]request
				for _, r := range reqs {
					i := rng.IntN(3)
					parts[i] = append(parts[i], r)
				}
				var ex [3]*Observations
				for i := range parts {
					ex[i] = roundTrip(t, learn(t, tc.lim, parts[i]...))
				}
				a, b, c := ex[0], ex[1], ex[2]
				merges := map[string]*Observations{
					"(ab)c": Merge(Merge(a, b), c), "a(bc)": Merge(a, Merge(b, c)),
					"(ba)c": Merge(Merge(b, a), c), "(ac)b": Merge(Merge(a, c), b),
					"(ca)b": Merge(Merge(c, a), b), "(bc)a": Merge(Merge(b, c), a),
					"c(ba)": Merge(c, Merge(b, a)), "b(ca)": Merge(b, Merge(c, a)),
				}
				for order, m := range merges {
					got := m.Contracts()
					require.Equal(t, want, got, "seed %d, merged %s", seed, order)
					assert.Equal(t, rendered(want), rendered(got), "seed %d, merged %s", seed, order)
					assert.Equal(t, whole.Samples(), m.Samples())
					assert.Equal(t, whole.Dropped(), m.Dropped(), "seed %d, merged %s", seed, order)
					assert.Equal(t, contractsOf(t, roundTrip(t, m)), got, "through JSON")
				}
			}
		})
	}
}

func contractsOf(t testing.TB, o *Observations) []Learned { return o.Contracts() }

// TestMerge_CapsHit checks that the tight limits of the property test do
// hit every cap, or the test above would prove less than it says.
func TestMerge_CapsHit(t *testing.T) {
	o := learn(t, tightLimits, traffic(rand.New(rand.NewPCG(1, 17)), 600)...)
	assert.NotNil(t, o.routeCut, "routes cap")
	assert.Positive(t, o.Dropped())
	cut, skipped, deep, over := false, false, false, false
	for _, r := range o.routes {
		cut = cut || r.cut != nil
		if r.body != nil {
			r.body.walk(func(n *node) {
				skipped = skipped || n.skipped > 0
				deep = deep || n.deep > 0
				over = over || n.enum != nil && n.enum.over
			})
		}
	}
	assert.True(t, cut, "bytes cap")
	assert.True(t, skipped, "properties cap")
	assert.True(t, deep, "depth cap")
	assert.True(t, over, "enum cap")
}

// TestMerge_Identity: merging with empty observations changes nothing,
// and merging is the same through JSON.
func TestMerge_Identity(t *testing.T) {
	o := learn(t, Limits{}, traffic(rand.New(rand.NewPCG(3, 4)), 300)...)
	empty := New(Limits{}).Export()
	assert.Equal(t, o.Contracts(), Merge(o, empty).Contracts())
	assert.Equal(t, o.Contracts(), Merge(empty, o).Contracts())
	b1, err := json.Marshal(o)
	require.NoError(t, err)
	b2, err := json.Marshal(roundTrip(t, o))
	require.NoError(t, err)
	assert.Equal(t, string(b1), string(b2), "the exchange format reads back to the same bytes")
}

// TestMerge_LeavesInputs: Merge does not change its arguments.
func TestMerge_LeavesInputs(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	a := learn(t, Limits{}, traffic(rng, 200)...)
	b := learn(t, Limits{}, traffic(rng, 200)...)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	Merge(a, b)
	Merge(b, a)
	ja2, _ := json.Marshal(a)
	jb2, _ := json.Marshal(b)
	assert.Equal(t, string(ja), string(ja2))
	assert.Equal(t, string(jb), string(jb2))
}

// TestMerge_DifferentLimits: exports made under different limits merge
// into what one learner under the stricter of each would hold (Properties
// aside, which each learner applies to each request: equal here).
func TestMerge_DifferentLimits(t *testing.T) {
	loose := Limits{EnumMinSamples: 5, StableSamples: 4}
	strict := Limits{Routes: 5, Depth: 2, EnumValues: 3, EnumMinSamples: 6, StableSamples: 5, MaxBytes: 5 * 16 << 10}
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 23))
		reqs := traffic(rng, 500)
		var a, b []request
		for _, r := range reqs {
			if rng.IntN(2) == 0 {
				a = append(a, r)
			} else {
				b = append(b, r)
			}
		}
		m := Merge(roundTrip(t, learn(t, loose, a...)), roundTrip(t, learn(t, strict, b...)))
		want := learn(t, meet(loose.withDefaults(), strict.withDefaults()), reqs...)
		assert.Equal(t, want.Limits(), m.Limits())
		require.Equal(t, want.Contracts(), m.Contracts(), "seed %d", seed)
		assert.Equal(t, want.Dropped(), m.Dropped())
	}
}

// TestLearner_Concurrent: observing, sampling and exporting from many
// goroutines at once (run with -race) loses no sample, and gives what one
// goroutine observing the same requests gives.
func TestLearner_Concurrent(t *testing.T) {
	reqs := traffic(rand.New(rand.NewPCG(11, 12)), 800)
	bodies := make([]jsonbody.Value, len(reqs))
	for i, r := range reqs {
		bodies[i] = parse(t, r.body)
	}
	l := New(Limits{SampleRate: 1})
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := g; i < len(reqs); i += 4 {
				if r := reqs[i]; l.Sample() {
					l.Observe(r.method, r.pattern, r.path, bodies[i], r.at)
				}
				if i%100 == 0 {
					l.Export().Contracts()
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	o := l.Export()
	assert.EqualValues(t, len(reqs), o.Samples())
	assert.Equal(t, learn(t, Limits{}, reqs...).Contracts(), o.Contracts())
}

// TestMerge_CountsDoNotWrap: an export may say 2^53 of anything, and
// learn merge adds any number of exports: 1,025 of them wrapped the
// counts negative (a summary of negative requests, a route learned from
// "fewer than" its minimum). The sums hold at the largest count.
func TestMerge_CountsDoNotWrap(t *testing.T) {
	const doc = `{"format":"contractguard.learn/v1","limits":{},"samples":9007199254740992,"routes":[{"method":"POST","template":"/a","samples":9007199254740992,"first":"2026-01-01T00:00:00Z","last":"2026-01-01T00:00:01Z","body":{"seen":9007199254740992,"str":9007199254740992,"formats":[]}}]}`
	var one Observations
	require.NoError(t, json.Unmarshal([]byte(doc), &one))
	merged := &one
	for range 1100 {
		merged = Merge(merged, &one)
	}
	assert.Equal(t, int64(math.MaxInt64), merged.Samples())
	assert.Zero(t, merged.Dropped())
	b, err := json.Marshal(merged)
	require.NoError(t, err)
	assert.NotContains(t, string(b), `":-`, "a negative count")
}

// TestMerge_EnumCountsDoNotWrap: the count of an enum value held in the
// clear, at the largest count after many merges, joined by the pending
// sighting of the same value from another export, wrapped negative (a
// negative count in the export, the enum lost) where the sums of
// TestMerge_CountsDoNotWrap hold.
func TestMerge_EnumCountsDoNotWrap(t *testing.T) {
	const doc = `{"format":"contractguard.learn/v1","limits":{},"samples":9007199254740992,"routes":[{"method":"POST","template":"/a","samples":9007199254740992,"first":"2026-01-01T00:00:00Z","last":"2026-01-01T00:00:01Z","body":{"seen":9007199254740992,"str":9007199254740992,"formats":[],"enum":{"values":{"red":9007199254740992}}}}]}`
	var one Observations
	require.NoError(t, json.Unmarshal([]byte(doc), &one))
	merged := &one
	for range 1100 {
		merged = Merge(merged, &one)
	}
	l := New(Limits{SampleRate: 1})
	observe(t, l, request{method: "POST", pattern: "/a", path: "/a", body: `"red"`, at: epoch})
	merged = Merge(merged, l.Export())
	b, err := json.Marshal(merged)
	require.NoError(t, err)
	assert.NotContains(t, string(b), `":-`, "a negative count")
	cs := merged.Contracts()
	require.Len(t, cs, 1)
	assert.Equal(t, []any{"red"}, cs[0].Schema["enum"], "the enum kept")
}
