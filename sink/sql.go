package sink

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
)

// WrapDriver returns d with every query and prepared statement checked by
// CheckSQL in dialect before it reaches d, on the paths that take a
// context: QueryContext, ExecContext and PrepareContext of a *sql.DB, a
// *sql.Conn and a *sql.Tx. Register the result under a name of its own:
//
//	sql.Register("sqlite-checked", sink.WrapDriver(&sqlite.Driver{}, sink.SQLite))
//	db, err := sql.Open("sqlite-checked", "file:app.db")
//
// The methods without a context (Query, Exec, Prepare) run with
// context.Background(), which carries no request: they are not checked.
// Pass the request's context, r.Context(), to the Context methods.
func WrapDriver(d driver.Driver, dialect Dialect) driver.Driver {
	w := &sqlDriver{d: d, dialect: dialect}
	if dc, ok := d.(driver.DriverContext); ok {
		return &sqlDriverContext{w, dc}
	}
	return w
}

// WrapConnector returns c with every connection checked as WrapDriver's
// are; sql.OpenDB(sink.WrapConnector(c, dialect)) is the way for drivers
// that hand out connectors (pgx's stdlib.GetConnector, mysql.NewConnector).
func WrapConnector(c driver.Connector, dialect Dialect) driver.Connector {
	return &sqlConnector{c: c, dialect: dialect}
}

// OpenDB opens the database dsn with the registered driver driverName, its
// connections checked as WrapDriver's are:
//
//	db, err := sink.OpenDB("sqlite", "file:app.db", sink.SQLite)
func OpenDB(driverName, dsn string, dialect Dialect) (*sql.DB, error) {
	probe, err := sql.Open(driverName, dsn)
	if err != nil {
		return nil, err
	}
	d := probe.Driver()
	probe.Close()
	if dc, ok := d.(driver.DriverContext); ok {
		c, err := dc.OpenConnector(dsn)
		if err != nil {
			return nil, err
		}
		return sql.OpenDB(&sqlConnector{c: c, dialect: dialect, d: WrapDriver(d, dialect)}), nil
	}
	return sql.OpenDB(&sqlConnector{c: dsnConnector{d, dsn}, dialect: dialect, d: WrapDriver(d, dialect)}), nil
}

type sqlDriver struct {
	d       driver.Driver
	dialect Dialect
}

func (w *sqlDriver) Open(name string) (driver.Conn, error) {
	c, err := w.d.Open(name)
	if err != nil {
		return nil, err
	}
	return &sqlConn{c: c, dialect: w.dialect}, nil
}

type sqlDriverContext struct {
	*sqlDriver
	dc driver.DriverContext
}

func (w *sqlDriverContext) OpenConnector(name string) (driver.Connector, error) {
	c, err := w.dc.OpenConnector(name)
	if err != nil {
		return nil, err
	}
	return &sqlConnector{c: c, dialect: w.dialect, d: w}, nil
}

type sqlConnector struct {
	c       driver.Connector
	dialect Dialect
	d       driver.Driver // the wrapped driver, when known
}

func (w *sqlConnector) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := w.c.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &sqlConn{c: c, dialect: w.dialect}, nil
}

func (w *sqlConnector) Driver() driver.Driver {
	if w.d != nil {
		return w.d
	}
	return WrapDriver(w.c.Driver(), w.dialect)
}

// Close closes the wrapped connector if it is an io.Closer, as sql.DB.Close
// would have.
func (w *sqlConnector) Close() error {
	if c, ok := w.c.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// dsnConnector is a driver without connectors as one, the way database/sql
// does it.
type dsnConnector struct {
	d   driver.Driver
	dsn string
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.d.Open(c.dsn) }
func (c dsnConnector) Driver() driver.Driver                        { return c.d }

// sqlConn checks the text of every query and statement, and passes all
// else to the driver's connection, including the optional interfaces it
// implements, as database/sql would use them without the wrapper.
type sqlConn struct {
	c       driver.Conn
	dialect Dialect
}

// Unwrap is the driver's own connection, for sql.Conn.Raw callers that need
// a driver's extensions. What they run through it is not checked.
func (w *sqlConn) Unwrap() driver.Conn { return w.c }

func (w *sqlConn) Prepare(query string) (driver.Stmt, error) { return w.c.Prepare(query) }
func (w *sqlConn) Close() error                              { return w.c.Close() }

func (w *sqlConn) Begin() (driver.Tx, error) { return w.c.Begin() }

func (w *sqlConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if err := CheckSQL(ctx, query, w.dialect); err != nil {
		return nil, err
	}
	if p, ok := w.c.(driver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, query)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return w.c.Prepare(query)
}

func (w *sqlConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	switch e := w.c.(type) {
	case driver.ExecerContext:
		if err := CheckSQL(ctx, query, w.dialect); err != nil {
			return nil, err
		}
		return e.ExecContext(ctx, query, args)
	case driver.Execer: // the legacy interface, as database/sql uses it
		if err := CheckSQL(ctx, query, w.dialect); err != nil {
			return nil, err
		}
		vs, err := values(args)
		if err != nil {
			return nil, err
		}
		return e.Exec(query, vs)
	}
	return nil, driver.ErrSkip // database/sql prepares it: PrepareContext checks it
}

func (w *sqlConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	switch q := w.c.(type) {
	case driver.QueryerContext:
		if err := CheckSQL(ctx, query, w.dialect); err != nil {
			return nil, err
		}
		return q.QueryContext(ctx, query, args)
	case driver.Queryer: // the legacy interface, as database/sql uses it
		if err := CheckSQL(ctx, query, w.dialect); err != nil {
			return nil, err
		}
		vs, err := values(args)
		if err != nil {
			return nil, err
		}
		return q.Query(query, vs)
	}
	return nil, driver.ErrSkip
}

func (w *sqlConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if b, ok := w.c.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	// What database/sql does for a driver without BeginTx.
	if opts.Isolation != driver.IsolationLevel(sql.LevelDefault) {
		return nil, errors.New("sql: driver does not support non-default isolation level")
	}
	if opts.ReadOnly {
		return nil, errors.New("sql: driver does not support read-only transactions")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return w.c.Begin()
}

func (w *sqlConn) Ping(ctx context.Context) error {
	if p, ok := w.c.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (w *sqlConn) ResetSession(ctx context.Context) error {
	if r, ok := w.c.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (w *sqlConn) IsValid() bool {
	if v, ok := w.c.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (w *sqlConn) CheckNamedValue(nv *driver.NamedValue) error {
	if c, ok := w.c.(driver.NamedValueChecker); ok {
		return c.CheckNamedValue(nv)
	}
	return driver.ErrSkip // database/sql's own conversion, as without the wrapper
}

func values(args []driver.NamedValue) ([]driver.Value, error) {
	vs := make([]driver.Value, len(args))
	for i, a := range args {
		if a.Name != "" {
			return nil, errors.New("sql: driver does not support the use of Named Parameters")
		}
		vs[i] = a.Value
	}
	return vs, nil
}

var (
	_ driver.Conn               = (*sqlConn)(nil)
	_ driver.ConnPrepareContext = (*sqlConn)(nil)
	_ driver.ExecerContext      = (*sqlConn)(nil)
	_ driver.QueryerContext     = (*sqlConn)(nil)
	_ driver.ConnBeginTx        = (*sqlConn)(nil)
	_ driver.Pinger             = (*sqlConn)(nil)
	_ driver.SessionResetter    = (*sqlConn)(nil)
	_ driver.Validator          = (*sqlConn)(nil)
	_ driver.NamedValueChecker  = (*sqlConn)(nil)
	_ driver.DriverContext      = (*sqlDriverContext)(nil)
)
