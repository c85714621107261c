package sink

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"os/exec"
	"testing"

	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/taint"
)

// benchRequest is a request of 20 inputs: 11 body strings (values and
// names), 2 query values and a query name, a path parameter, 4 headers and a
// cookie.
func benchRequest(b *testing.B, rawQuery string) *taint.Request {
	body := `{"customer":{"name":"Ada Lovelace","email":"ada@example.com"},"sku":"SKU-1001","note":"gift wrap please","city":"London"}`
	d, err := jsonbody.Parse([]byte(body), 64)
	if err != nil {
		b.Fatal(err)
	}
	r := &taint.Request{
		Method: "POST", Route: "/orders/:id", Body: d, RawQuery: rawQuery,
		Host: "shop.example",
		Header: http.Header{
			"User-Agent":      {"Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0"},
			"Accept":          {"application/json"},
			"Accept-Language": {"en-GB,en;q=0.9"},
			"Cookie":          {"session=3f9a0c71"},
		},
		Params: paramList{{"id", "123456"}},
	}
	n := 0
	r.Inputs(func(taint.Input) bool { n++; return true })
	if n != 20 {
		b.Fatalf("%d inputs, want 20", n)
	}
	return r
}

// A 200-byte query with one input inside a literal.
const benchQuery = "SELECT o.id, o.created_at, c.name, c.email FROM orders o JOIN customers c ON c.id = o.customer_id " +
	"WHERE c.name = 'Ada Lovelace' AND o.status IN ('paid', 'shipped') ORDER BY o.created_at DESC LIMIT 20"

func BenchmarkCheckSQL(b *testing.B) {
	if len(benchQuery) < 195 || len(benchQuery) > 205 {
		b.Fatalf("query of %d bytes", len(benchQuery))
	}
	ctx := taint.NewContext(context.Background(), benchRequest(b, "page=2&sort=created_at"))
	b.Run("200B-20inputs", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := CheckSQL(ctx, benchQuery, PostgreSQL); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("no-request", func(b *testing.B) {
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if err := CheckSQL(ctx, benchQuery, PostgreSQL); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("blocked", func(b *testing.B) {
		r := benchRequest(b, "page=2&sort="+"x%27+OR+%271%27%3D%271")
		ctx := taint.NewContext(context.Background(), r)
		q := "SELECT * FROM orders WHERE note = 'x' OR '1'='1'"
		b.ReportAllocs()
		for b.Loop() {
			if CheckSQL(ctx, q, PostgreSQL) == nil {
				b.Fatal("not blocked")
			}
		}
	})
}

func BenchmarkCheckCmd(b *testing.B) {
	cmd := exec.Command("sh", "-c", "convert '/srv/uploads/Ada Lovelace.png' -resize 200x200 /srv/thumbs/123456.png")
	ctx := taint.NewContext(context.Background(), benchRequest(b, "page=2&sort=created_at"))
	b.Run("sh-c-20inputs", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := CheckCmd(ctx, cmd); err != nil {
				b.Fatal(err)
			}
		}
	})
	argv := exec.Command("convert", "/srv/uploads/Ada Lovelace.png", "-resize", "200x200", "/srv/thumbs/123456.png")
	b.Run("argv-20inputs", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := CheckCmd(ctx, argv); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("no-request", func(b *testing.B) {
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if err := CheckCmd(ctx, cmd); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkCheckPath(b *testing.B) {
	ctx := taint.NewContext(context.Background(), benchRequest(b, "page=2&sort=created_at"))
	name := "/srv/uploads/123456/SKU-1001.pdf"
	b.Run("20inputs", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := CheckPath(ctx, name); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("no-request", func(b *testing.B) {
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if err := CheckPath(ctx, name); err != nil {
				b.Fatal(err)
			}
		}
	})
}

type benchResolver struct{}

func (benchResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("203.0.113.10")}, nil
}

// BenchmarkDialCheck is what a request whose host came from input costs
// before its dial: finding the input, resolving (in memory here) and
// checking the addresses.
func BenchmarkDialCheck(b *testing.B) {
	r := benchRequest(b, "page=2&url=https%3A%2F%2Fapi.partner.example%2Fv1%2Fitems")
	ctx := taint.NewContext(context.Background(), r)
	t := Transport(&http.Transport{}, WithResolver(benchResolver{})).(*transport)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://api.partner.example/v1/items", nil)
	b.Run("input-host", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			in, ok := t.taintedHost(r, req)
			if !ok {
				b.Fatal("not found")
			}
			if _, err := t.resolveChecked(ctx, &dialInfo{r, in}, "tcp", net.JoinHostPort("api.partner.example", "443")); err != nil {
				b.Fatal(err)
			}
		}
	})
	other, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://payments.internal/charge", nil)
	b.Run("own-host", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := t.taintedHost(r, other); ok {
				b.Fatal("found")
			}
		}
	})
}

// BenchmarkNoRequest: with nothing recorded in the context (sink
// protection off, or a request the guard did not match), every sink costs
// one context lookup and no allocation.
func BenchmarkNoRequest(b *testing.B) {
	ctx := context.WithValue(context.Background(), struct{ k int }{1}, "an application value")
	cmd := exec.Command("sh", "-c", "echo hi")
	t := Transport(&http.Transport{}).(*transport)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1/", nil)
	b.ReportAllocs()
	for b.Loop() {
		if CheckSQL(ctx, benchQuery, SQLite) != nil || CheckCmd(ctx, cmd) != nil || CheckPath(ctx, "/etc/passwd") != nil {
			b.Fatal("blocked")
		}
		if request(req.Context()) != nil {
			b.Fatal("a request")
		}
		_ = t
	}
}

func TestNoRequest_NoAlloc(t *testing.T) {
	ctx := context.WithValue(context.Background(), struct{ k int }{1}, "an application value")
	cmd := exec.Command("sh", "-c", "echo hi")
	n := testing.AllocsPerRun(200, func() {
		if CheckSQL(ctx, benchQuery, SQLite) != nil || CheckCmd(ctx, cmd) != nil || CheckPath(ctx, "/etc/passwd") != nil {
			t.Fatal("blocked")
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations without a request", n)
	}
}
