package sqlitetest

import (
	"context"
	"database/sql"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/contractguard/contractguard/internal/taint"
	"github.com/contractguard/contractguard/sink"
)

// BenchmarkQuery is one query with a row through SQLite: the driver as it
// is, the wrapper with nothing recorded (sink protection off), and the
// wrapper checking against a request of 20 inputs.
func BenchmarkQuery(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bench.db")
	plain, err := sql.Open("sqlite", path)
	if err != nil {
		b.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.Exec(schema); err != nil {
		b.Fatal(err)
	}
	wrapped, err := sink.OpenDB("sqlite", path, sink.SQLite)
	if err != nil {
		b.Fatal(err)
	}
	defer wrapped.Close()
	q := "SELECT id, name, email FROM users WHERE name = 'ada' AND active = 1 ORDER BY id LIMIT 10"
	r := &taint.Request{
		Method: "GET", Route: "/users", RawQuery: "name=ada&sort=id&page=1&q=ada%40example.com",
		Header: http.Header{"User-Agent": {"Mozilla/5.0 (X11; Linux x86_64)"}, "Accept": {"application/json"}, "Accept-Language": {"en-GB,en;q=0.9"}},
	}
	run := func(b *testing.B, db *sql.DB, ctx context.Context) {
		b.ReportAllocs()
		for b.Loop() {
			var id int
			var name, email string
			if err := db.QueryRowContext(ctx, q).Scan(&id, &name, &email); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("driver", func(b *testing.B) { run(b, plain, context.Background()) })
	b.Run("wrapped-off", func(b *testing.B) { run(b, wrapped, context.Background()) })
	b.Run("wrapped-on", func(b *testing.B) { run(b, wrapped, taint.NewContext(context.Background(), r)) })
}
