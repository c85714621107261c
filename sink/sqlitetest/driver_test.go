package sqlitetest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"net/url"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"modernc.org/sqlite"

	"github.com/contractguard/contractguard/internal/taint"
	"github.com/contractguard/contractguard/sink"
)

const schema = `
CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, age INT, active INT, admin INT DEFAULT 0);
CREATE TABLE secrets (id INTEGER PRIMARY KEY, password TEXT);
INSERT INTO users (name, email, age, active) VALUES ('ada', 'ada@example.com', 36, 1), ('O''Brien', 'ob@example.com', 41, 1), ('bob', 'bob@example.com', 17, 0);
INSERT INTO secrets (password) VALUES ('hunter2');
`

type recorder struct {
	mu     sync.Mutex
	blocks []taint.Block
}

func (rc *recorder) SinkBlocked(_ *taint.Request, b taint.Block) {
	rc.mu.Lock()
	rc.blocks = append(rc.blocks, b)
	rc.mu.Unlock()
}

// withQuery is a request context whose query parameter q is value.
func withQuery(value string) (context.Context, *recorder) {
	rc := &recorder{}
	r := &taint.Request{Method: "GET", Route: "/users", RawQuery: "q=" + url.QueryEscape(value), Reporter: rc}
	return taint.NewContext(context.Background(), r), rc
}

// openDBs opens one database file three ways: sink.OpenDB, a registered
// sink.WrapDriver, and sql.OpenDB over sink.WrapConnector.
func openDBs(t *testing.T) map[string]*sql.DB {
	path := filepath.Join(t.TempDir(), "app.db")
	plain, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = plain.Exec(schema)
	require.NoError(t, err)
	require.NoError(t, plain.Close())

	viaOpen, err := sink.OpenDB("sqlite", path, sink.SQLite)
	require.NoError(t, err)
	registerOnce.Do(func() { sql.Register("sqlite-checked", sink.WrapDriver(&sqlite.Driver{}, sink.SQLite)) })
	viaDriver, err := sql.Open("sqlite-checked", path)
	require.NoError(t, err)
	c, err := sqlite.NewConnector(path)
	require.NoError(t, err)
	viaConnector := sql.OpenDB(sink.WrapConnector(c, sink.SQLite))
	dbs := map[string]*sql.DB{"OpenDB": viaOpen, "WrapDriver": viaDriver, "WrapConnector": viaConnector}
	for _, db := range dbs {
		t.Cleanup(func() { db.Close() })
	}
	return dbs
}

var registerOnce sync.Once

func count(t *testing.T, db *sql.DB, table string) int {
	var n int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM "+table).Scan(&n))
	return n
}

// Every path of database/sql that takes a context is checked: the
// attack never reaches SQLite (the table is still there, the row not
// inserted), and the same paths serve the benign value.
func TestWrappers_EveryPath(t *testing.T) {
	type call func(ctx context.Context, db *sql.DB, query string) error
	calls := map[string]call{
		"DB.QueryContext": func(ctx context.Context, db *sql.DB, q string) error {
			rows, err := db.QueryContext(ctx, q)
			if err == nil {
				rows.Close()
			}
			return err
		},
		"DB.ExecContext": func(ctx context.Context, db *sql.DB, q string) error {
			_, err := db.ExecContext(ctx, q)
			return err
		},
		"DB.PrepareContext": func(ctx context.Context, db *sql.DB, q string) error {
			st, err := db.PrepareContext(ctx, q)
			if err != nil {
				return err
			}
			defer st.Close()
			_, err = st.ExecContext(ctx)
			return err
		},
		"Conn.QueryContext": func(ctx context.Context, db *sql.DB, q string) error {
			c, err := db.Conn(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			rows, err := c.QueryContext(ctx, q)
			if err == nil {
				rows.Close()
			}
			return err
		},
		"Tx.ExecContext": func(ctx context.Context, db *sql.DB, q string) error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, q); err != nil {
				tx.Rollback()
				return err
			}
			return tx.Commit()
		},
		"Tx.PrepareContext": func(ctx context.Context, db *sql.DB, q string) error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			st, err := tx.PrepareContext(ctx, q)
			if err != nil {
				tx.Rollback()
				return err
			}
			_, err = st.ExecContext(ctx)
			st.Close()
			if err != nil {
				tx.Rollback()
				return err
			}
			return tx.Commit()
		},
	}
	for how, db := range openDBs(t) {
		for name, call := range calls {
			t.Run(how+"/"+name, func(t *testing.T) {
				in := "x'; DROP TABLE secrets; --"
				ctx, rc := withQuery(in)
				err := call(ctx, db, "SELECT id FROM users WHERE name = '"+in+"'")
				require.ErrorIs(t, err, sink.ErrBlocked)
				assert.Equal(t, 1, count(t, db, "secrets"), "the table is still there")
				require.Len(t, rc.blocks, 1)
				assert.Equal(t, taint.Block{Sink: "sql", Source: taint.Query, Name: "q", Reason: "adds a comment"}, rc.blocks[0])

				in = "eve', 1); --"
				ctx, _ = withQuery(in)
				err = call(ctx, db, "INSERT INTO users (name, admin) VALUES ('"+in+"', 0)")
				require.ErrorIs(t, err, sink.ErrBlocked)

				ctx, rc = withQuery("Ada Lovelace")
				require.NoError(t, call(ctx, db, "SELECT id FROM users WHERE name = 'Ada Lovelace'"))
				assert.Empty(t, rc.blocks)
			})
		}
	}
}

// Arguments passed as parameters are not in the text: O'Brien and an
// attack alike go through, as values.
func TestWrappers_Parameters(t *testing.T) {
	for how, db := range openDBs(t) {
		for _, in := range []string{"O'Brien", "' OR '1'='1", "x'; DROP TABLE secrets; --"} {
			ctx, rc := withQuery(in)
			var n int
			require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM users WHERE name = ?", in).Scan(&n), how)
			want := 0
			if in == "O'Brien" {
				want = 1
			}
			assert.Equal(t, want, n, "%s %q", how, in)
			assert.Empty(t, rc.blocks)
		}
		// Quoted properly by the application: one literal.
		ctx, _ := withQuery("O'Brien")
		var n int
		require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM users WHERE name = 'O''Brien'").Scan(&n))
		assert.Equal(t, 1, n)
	}
}

// The methods without a context cannot see a request: they are not
// checked (documented), and the attack runs.
func TestWrappers_NoContextNotChecked(t *testing.T) {
	db := openDBs(t)["OpenDB"]
	var n int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM users WHERE name = '' OR '1'='1'").Scan(&n))
	assert.Equal(t, 3, n)
}

func TestWrappers_ReportOnly(t *testing.T) {
	db := openDBs(t)["OpenDB"]
	rc := &recorder{}
	r := &taint.Request{Method: "GET", Route: "/users", RawQuery: "q=" + url.QueryEscape("' OR '1'='1"), Reporter: rc, ReportOnly: true}
	ctx := taint.NewContext(context.Background(), r)
	var n int
	require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM users WHERE name = '' OR '1'='1'").Scan(&n))
	assert.Equal(t, 3, n, "learning mode lets it run")
	assert.Len(t, rc.blocks, 1)
}

// The wrapped pool behaves as the driver's: transactions isolate, Ping
// works, and the driver's own connection is reachable for its extensions.
func TestWrappers_Pool(t *testing.T) {
	db := openDBs(t)["WrapConnector"]
	require.NoError(t, db.PingContext(context.Background()))
	tx, err := db.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: false})
	require.NoError(t, err)
	_, err = tx.Exec("INSERT INTO secrets (password) VALUES ('x')")
	require.NoError(t, err)
	require.NoError(t, tx.Rollback())
	assert.Equal(t, 1, count(t, db, "secrets"))
	c, err := db.Conn(context.Background())
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Raw(func(dc any) error {
		u, ok := dc.(interface{ Unwrap() driver.Conn })
		require.True(t, ok, "the wrapper gives the driver's connection")
		_, ok = u.Unwrap().(sqlite.AuthorizerRegisterer)
		assert.True(t, ok)
		return nil
	}))
}

// TestWrappers_NULCutsTheQuery: SQLite compiles a query up to its first
// NUL byte, so an input holding one in a comment drops the WHERE after
// it (all three users instead of the one inactive); the wrappers refuse it.
func TestWrappers_NULCutsTheQuery(t *testing.T) {
	in := "x\x00"
	q := "SELECT count(*) FROM users /* search: " + in + " */ WHERE active = 0"
	dbs := openDBs(t)
	var n int
	require.NoError(t, dbs["OpenDB"].QueryRow(q).Scan(&n), "without a request, unchecked")
	assert.Equal(t, 3, n, "SQLite read the query up to the NUL byte")
	for name, db := range dbs {
		ctx, rc := withQuery(in)
		err := db.QueryRowContext(ctx, q).Scan(&n)
		assert.ErrorIs(t, err, sink.ErrBlocked, name)
		assert.NotEmpty(t, rc.blocks, name)
	}
	// Inside a string literal or a quoted name the cut leaves it unclosed:
	// SQLite refuses the query, so an input quoted there is let through
	// (FuzzSQL holds quoted inputs to that), and SQLite runs nothing.
	for _, quoted := range []string{
		"SELECT count(*) FROM users WHERE name = '" + in + "' AND active = 0",
		`SELECT count(*) FROM users WHERE "` + in + `" = 1 AND active = 0`,
	} {
		require.Error(t, dbs["OpenDB"].QueryRow(quoted).Scan(&n), "SQLite refuses %q", quoted)
		for name, db := range dbs {
			ctx, rc := withQuery(in)
			err := db.QueryRowContext(ctx, quoted).Scan(&n)
			assert.NotErrorIs(t, err, sink.ErrBlocked, name)
			assert.Error(t, err, name)
			assert.Empty(t, rc.blocks, name)
		}
	}
}
