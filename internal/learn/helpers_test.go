package learn

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/jsonbody"
)

// request is one request of test traffic.
type request struct {
	method, pattern, path string
	body                  string // "" for none
	at                    time.Time
}

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func parse(t testing.TB, body string) jsonbody.Value {
	t.Helper()
	if body == "" {
		return jsonbody.NullDoc().Root()
	}
	doc, err := jsonbody.Parse([]byte(body), 64)
	require.NoError(t, err, body)
	return doc.Root()
}

func observe(t testing.TB, l *Learner, reqs ...request) {
	t.Helper()
	for _, r := range reqs {
		l.Observe(r.method, r.pattern, r.path, parse(t, r.body), r.at)
	}
}

// learn is the observations of one learner that saw reqs.
func learn(t testing.TB, lim Limits, reqs ...request) *Observations {
	t.Helper()
	l := New(lim)
	observe(t, l, reqs...)
	return l.Export()
}

// posts is one request per body, POST /things at successive seconds.
func posts(bodies ...string) []request {
	var rs []request
	for i, b := range bodies {
		rs = append(rs, request{method: "POST", pattern: "/things", path: "/things", body: b, at: epoch.Add(time.Duration(i) * time.Second)})
	}
	return rs
}

// only is the one contract learned from reqs.
func only(t testing.TB, lim Limits, reqs ...request) Learned {
	t.Helper()
	cs := learn(t, lim, reqs...).Contracts()
	require.Len(t, cs, 1)
	return cs[0]
}

// jsonOf is v as JSON, for comparing schemas.
func jsonOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// traffic is random requests of random shapes over a few routes: routes
// with router patterns and without, ids in paths, bodies with optional,
// nullable, nested and dynamic members, enums, formats, secrets, numbers
// of every kind.
func traffic(rng *rand.Rand, n int) []request {
	var rs []request
	for i := range n {
		r := request{at: epoch.Add(time.Duration(rng.IntN(100000)) * time.Second)}
		switch rng.IntN(6) {
		case 0:
			r.method, r.pattern, r.path = "POST", "/api/users", "/api/users"
		case 1:
			id := rng.IntN(50)
			r.method, r.pattern, r.path = "PUT", "/api/users/{id}", fmt.Sprintf("/api/users/%d", id)
		case 2:
			r.method, r.path = "POST", fmt.Sprintf("/api/orders/%d/items", rng.IntN(1000))
		case 3:
			r.method, r.path = "PATCH", fmt.Sprintf("/api/accounts/%s", []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "niaj"}[rng.IntN(12)])
		case 4:
			r.method, r.path = "GET", fmt.Sprintf("/api/r%d", rng.IntN(20))
		default:
			r.method, r.path = "DELETE", "/api/things/"+fmt.Sprintf("%08x-0000-4000-8000-%012x", rng.Uint32(), rng.Uint64()&0xffffffffffff)
		}
		if r.method != "GET" && r.method != "DELETE" {
			r.body = randomBody(rng, 0)
		}
		_ = i
		rs = append(rs, r)
	}
	return rs
}

func randomBody(rng *rand.Rand, depth int) string {
	var b strings.Builder
	b.WriteByte('{')
	names := []string{"email", "status", "age", "score", "note", "tags", "address", "password", "apiKey", "nested", "maybe", "when", "ip", "id"}
	first := true
	for _, name := range names {
		if rng.IntN(4) == 0 && name != "email" {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		fmt.Fprintf(&b, "%q:", name)
		b.WriteString(randomValue(rng, name, depth))
	}
	if rng.IntN(5) == 0 { // a member keyed by data
		if !first {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\"%d\":%d", rng.IntN(1000000), rng.IntN(10))
	}
	b.WriteByte('}')
	return b.String()
}

func randomValue(rng *rand.Rand, name string, depth int) string {
	switch name {
	case "email":
		return fmt.Sprintf("%q", fmt.Sprintf("user%d@example.com", rng.IntN(1000)))
	case "status":
		return fmt.Sprintf("%q", []string{"active", "pending", "closed", "held"}[rng.IntN(4)])
	case "age":
		return fmt.Sprint(rng.IntN(100) - 5)
	case "score":
		return []string{"1.5", "2", "1e2", "-0", "3.25", "1.0"}[rng.IntN(6)]
	case "note":
		return fmt.Sprintf("%q", fmt.Sprintf("note %d", rng.IntN(40)))
	case "tags":
		var parts []string
		for range rng.IntN(4) {
			parts = append(parts, fmt.Sprintf("%q", []string{"red", "green", "blue"}[rng.IntN(3)]))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case "address":
		if depth > 1 {
			return "null"
		}
		return randomBody(rng, depth+1)
	case "password", "apiKey":
		return fmt.Sprintf("%q", fmt.Sprintf("s3cret-%d", rng.IntN(3)))
	case "nested":
		return fmt.Sprintf(`{"a":{"b":{"c":{"d":%d}}}}`, rng.IntN(3))
	case "maybe":
		return []string{"null", `"x"`, "1", "true", "[]", "{}"}[rng.IntN(6)]
	case "when":
		return fmt.Sprintf("%q", epoch.Add(time.Duration(rng.IntN(1e6))*time.Second).Format(time.RFC3339))
	case "ip":
		return fmt.Sprintf(`"10.0.%d.%d"`, rng.IntN(256), rng.IntN(256))
	default:
		return fmt.Sprintf("%q", fmt.Sprintf("%08x-1111-4222-8333-%012x", rng.Uint32(), rng.Uint64()&0xffffffffffff))
	}
}
