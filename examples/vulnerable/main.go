// Command vulnerable is a web service with deliberately vulnerable
// handlers, behind a contractguard Guard with sink protection: SQL built by
// string concatenation against SQLite, a shell script with input spliced
// in, a file read by a client-given name, and a fetch of a client-given
// URL. Each is wired the way docs/sink-protection.md says an application
// should be (sink.OpenDB, sink.Command, sink.Files, sink.Transport), and
// nothing else protects it: main_test.go attacks it over HTTP.
//
// Never deploy it: with sink protection off it is as open as it looks.
//
// Sink protection is a paid-tier feature, so it needs a licence key that
// entitles sink-protection (docs/licensing.md), given with -license-key or
// CONTRACTGUARD_LICENSE_KEY:
//
//	cd examples/vulnerable
//	CONTRACTGUARD_LICENSE_KEY=cg1.… GOWORK=off go run .      # 127.0.0.1:8081
//	GOWORK=off go run . -license-key cg1.… -learning          # report, don't block
//
//	curl -s '127.0.0.1:8081/users/query?city=Dublin'
//	curl -s 127.0.0.1:8081/users/header -H "X-City: ' OR '1'='1"     # 403 SINK_BLOCKED
//	curl -s '127.0.0.1:8081/users/query?city=%27%20OR%20%271%27=%271'  # 403 VULNERABILITY_DETECTED: the scan saw it first
//
// The module is outside the repository's Go workspace (its SQLite driver
// would move golang.org/x/sys for every module there), hence GOWORK=off.
//
// # Routes
//
// Each resource reads its inputs from one place of the request per route,
// so that every input location can be aimed at:
//
//	POST /{res}/body                  {"name": "O'Brien"}
//	POST /{res}/keys                  {"name": {"O'Brien": true}}
//	GET  /{res}/query                 ?name=O'Brien
//	GET  /{res}/path/{slot}/{value}   /users/path/name/O'Brien
//	GET  /{res}/header                X-Name: O'Brien
//	GET  /{res}/cookie                Cookie: name=O'Brien
//
// with these resources and inputs (slots):
//
//	users  name, city, id, sort   SELECT … WHERE name = %q AND city = '…' AND id = … ORDER BY …
//	greet  name, city             sh -c "printf 'Hello, %s from %s\n' \"NAME\" CITY"
//	files  name, path             the file name below the files folder, or a path as given
//	fetch  url, host              GET url, or GET http://host/status (given neither: Config.StatusURL)
//
// A blocked call is answered 403 {"error": "SINK_BLOCKED", "sink": …}.
package main

import (
	"bytes"
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"

	"github.com/contractguard/contractguard"
	"github.com/contractguard/contractguard/sink"
)

//go:embed contracts
var contracts embed.FS

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "address to listen on")
	key := flag.String("license-key", "", "licence key entitling sink-protection (default $CONTRACTGUARD_LICENSE_KEY)")
	dir := flag.String("dir", "", "folder for the database and the files (default: a new temporary folder)")
	protect := flag.Bool("sink-protection", true, "turn sink protection on")
	scan := flag.Bool("scan", true, "turn the vulnerability scan on")
	learning := flag.Bool("learning", false, "learning mode: report what would be blocked, block nothing (needs learning-mode in the licence)")
	flag.Parse()
	if *key == "" {
		// Not the flag's default: the usage message prints defaults, and a
		// licence key must never reach a log.
		*key = os.Getenv("CONTRACTGUARD_LICENSE_KEY")
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "vulnerable-")
		if err != nil {
			log.Fatal(err)
		}
		*dir = d
	}
	app, err := New(Config{Dir: *dir, LicenseKey: *key, SinkProtection: *protect,
		VulnerabilityScan: *scan, LearningMode: *learning})
	if err != nil {
		log.Fatal(err) // a missing or insufficient licence key says so here
	}
	log.Printf("vulnerable: data in %s, listening on http://%s", *dir, *addr)
	srv := &http.Server{Addr: *addr, Handler: app.Handler, ReadHeaderTimeout: 10 * time.Second}
	err = srv.ListenAndServe()
	app.Close()
	log.Fatal(err)
}

// Config configures the application.
type Config struct {
	// Dir holds the database (app.db), the folder files are served from
	// (files/) and the shell's working folder (work/). It must exist.
	Dir string
	// LicenseKey must entitle sink-protection when SinkProtection is on,
	// and learning-mode when LearningMode is.
	LicenseKey        string
	SinkProtection    bool
	VulnerabilityScan bool
	LearningMode      bool
	// Resolver and Dial replace the outbound lookup and dial (tests: names
	// resolved in memory, addresses dialled to test servers); nil for the
	// system's.
	Resolver sink.Resolver
	Dial     sink.DialFunc
	// AllowHosts are the hosts or networks client input may make the fetch
	// reach (sink.AllowHosts).
	AllowHosts []string
	// StatusURL is the application's own status service (a sidecar, say),
	// which the fetch handler asks when it is given no url or host: a call
	// the application makes, not one a client chose.
	StatusURL string
	// Logger receives the guard's logs, sink blocks included; nil for
	// slog.Default().
	Logger *slog.Logger
}

// App is the vulnerable application.
type App struct {
	Guard *contractguard.Guard
	// DB is the database, its queries checked (sink.OpenDB). Queries run
	// without a request's context (as Seed's) are not checked.
	DB *sql.DB
	// Handler is the service: the guard in front of the routes.
	Handler http.Handler
	// FilesDir is the folder files are served from; WorkDir is where the
	// shell runs.
	FilesDir, WorkDir string

	files     sink.Files
	client    *http.Client
	statusURL string
}

// New builds the application in cfg.Dir: it seeds the database and writes
// the files (over what is there).
func New(cfg Config) (*App, error) {
	g, err := contractguard.New(contractguard.Options{
		ContractsFS:       contracts,
		ContractsDir:      "contracts",
		LicenseKey:        cfg.LicenseKey,
		SinkProtection:    cfg.SinkProtection,
		VulnerabilityScan: cfg.VulnerabilityScan,
		LearningMode:      cfg.LearningMode,
		Logger:            cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	a := &App{Guard: g, FilesDir: filepath.Join(cfg.Dir, "files"), WorkDir: filepath.Join(cfg.Dir, "work"), statusURL: cfg.StatusURL}
	if err := writeFiles(cfg.Dir); err != nil {
		return nil, err
	}
	// The database: every query of a request's context is checked.
	a.DB, err = sink.OpenDB("sqlite", "file:"+filepath.Join(cfg.Dir, "app.db"), sink.SQLite)
	if err != nil {
		return nil, err
	}
	a.DB.SetMaxOpenConns(1) // SQLite writes one at a time anyway
	if err := a.Seed(context.Background()); err != nil {
		a.DB.Close()
		return nil, err
	}
	// Files: client input may lead anywhere below FilesDir, and nowhere else.
	a.files = sink.Files{Base: a.FilesDir}
	// Outbound HTTP: a host that came from input is checked where it is dialled.
	base := http.DefaultTransport.(*http.Transport).Clone()
	opts := []sink.TransportOption{sink.AllowHosts(cfg.AllowHosts...)}
	if cfg.Resolver != nil {
		opts = append(opts, sink.WithResolver(cfg.Resolver))
	}
	if cfg.Dial != nil {
		base.DialContext = cfg.Dial // what is not checked is dialled the same way
		base.Proxy = nil
		opts = append(opts, sink.WithDialer(cfg.Dial))
	}
	a.client = &http.Client{Transport: sink.Transport(base, opts...), Timeout: 10 * time.Second}

	mux := http.NewServeMux()
	a.route(mux, "users", a.users, "name", "city", "id", "sort")
	a.route(mux, "greet", a.greet, "name", "city")
	a.route(mux, "files", a.readFile, "name", "path")
	a.route(mux, "fetch", a.fetch, "url", "host")
	a.Handler = g.Middleware(mux)
	return a, nil
}

// Close closes the database and the client's idle connections.
func (a *App) Close() error {
	a.client.CloseIdleConnections()
	return a.DB.Close()
}

// Seed (re)creates the tables and their rows.
func (a *App) Seed(ctx context.Context) error {
	_, err := a.DB.ExecContext(ctx, `
DROP TABLE IF EXISTS users;
DROP TABLE IF EXISTS secrets;
CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL, email TEXT NOT NULL);
CREATE TABLE secrets (id INTEGER PRIMARY KEY, owner INTEGER NOT NULL, password TEXT NOT NULL, api_key TEXT NOT NULL);
INSERT INTO users (id, name, city, email) VALUES
  (1, 'ada', 'London', 'ada@example.com'),
  (2, 'O''Brien', 'Dublin', 'obrien@example.ie'),
  (3, 'D''Angelo', 'Rome', 'dangelo@example.it'),
  (4, 'Zoë', 'Zürich', 'zoe@example.ch'),
  (5, 'José María', 'São Paulo', 'jm@example.br'),
  (6, 'Anne-Marie', 'Aix-en-Provence', 'am@example.fr'),
  (7, '李雷', '北京', 'li@example.cn'),
  (42, 'bob', 'Berlin', 'bob+test@example.de');
INSERT INTO secrets (id, owner, password, api_key) VALUES (1, 1, 'hunter2', 'sk_live_CANARY');
`)
	return err
}

// Files written by New. The dot-files are an operator's mistake the
// example keeps on purpose: secrets left in the folder that is served.
var (
	publicFiles = map[string]string{
		"report.v2.pdf":       "%PDF-1.7 quarterly report, second version",
		"notes.txt":           "meeting notes",
		"notes..txt":          "notes with two dots",
		"..hidden":            "a name that starts with two dots",
		"2024/q1.summary.csv": "quarter,revenue\nq1,100\n",
		"my file (1).txt":     "a copy",
		"résumé.pdf":          "%PDF-1.7 curriculum vitae",
		"archive.tar.gz":      "not really a tarball",
	}
	secretFiles = map[string]string{
		".env":        "DATABASE_PASSWORD=CANARY-DOTENV-not-a-real-password",
		".ssh/id_rsa": "CANARY-PRIVATE-KEY not a real key",
	}
	// outsideSecret is in Dir, next to the files folder, out of its reach.
	outsideSecret = "CANARY-OUTSIDE-SECRET"
)

func writeFiles(dir string) error {
	files := filepath.Join(dir, "files")
	write := func(name, content string) error {
		p := filepath.Join(files, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, []byte(content), 0o644)
	}
	for name, content := range publicFiles {
		if err := write(name, content); err != nil {
			return err
		}
	}
	for name, content := range secretFiles {
		if err := write(name, content); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "work"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "secret.txt"), []byte(outsideSecret), 0o600)
}

// handler is one resource's work: its inputs, by slot, to a JSON answer.
type handler func(ctx context.Context, in map[string]string) (any, error)

// Locations are where a route reads its inputs, in the order of the routes.
var Locations = []string{"body", "keys", "query", "path", "header", "cookie"}

// route registers res's six routes, one per input location.
func (a *App) route(mux *http.ServeMux, res string, h handler, slots ...string) {
	serve := func(read func(r *http.Request, slot string) (string, bool)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			in := map[string]string{}
			for _, s := range slots {
				if v, ok := read(r, s); ok {
					in[s] = v
				}
			}
			v, err := h(r.Context(), in)
			respond(w, v, err)
		}
	}
	body := func(r *http.Request) map[string]any {
		b, _ := contractguard.Body(r) // parsed once, by the guard
		m, _ := b.(map[string]any)
		return m
	}
	mux.Handle("POST /"+res+"/body", serve(func(r *http.Request, s string) (string, bool) {
		v, ok := body(r)[s].(string)
		return v, ok
	}))
	mux.Handle("POST /"+res+"/keys", serve(func(r *http.Request, s string) (string, bool) {
		set, _ := body(r)[s].(map[string]any) // the contract allows one member
		keys := slices.Sorted(maps.Keys(set))
		if len(keys) == 0 {
			return "", false
		}
		return keys[0], true
	}))
	mux.Handle("GET /"+res+"/query", serve(func(r *http.Request, s string) (string, bool) {
		q := r.URL.Query()
		return q.Get(s), q.Has(s)
	}))
	mux.Handle("GET /"+res+"/path/{slot}/{value}", serve(func(r *http.Request, s string) (string, bool) {
		return r.PathValue("value"), r.PathValue("slot") == s
	}))
	mux.Handle("GET /"+res+"/header", serve(func(r *http.Request, s string) (string, bool) {
		v := r.Header.Values("X-" + s)
		if len(v) == 0 {
			return "", false
		}
		return v[0], true
	}))
	mux.Handle("GET /"+res+"/cookie", serve(func(r *http.Request, s string) (string, bool) {
		c, err := r.Cookie(s)
		if err != nil {
			return "", false
		}
		return c.Value, true
	}))
}

// Failure answers a failed call.
type Failure struct {
	Error   string `json:"error"`          // SINK_BLOCKED, NOT_FOUND, BAD_GATEWAY or FAILED
	Sink    string `json:"sink,omitempty"` // the sink that blocked the call
	Message string `json:"message"`
}

func respond(w http.ResponseWriter, v any, err error) {
	status := http.StatusOK
	var blocked *sink.BlockedError
	var fetchErr *fetchError
	switch {
	case errors.As(err, &blocked): // errors.Is(err, sink.ErrBlocked), with its details
		status, v = http.StatusForbidden, Failure{"SINK_BLOCKED", blocked.Sink, blocked.Error()}
	case errors.Is(err, fs.ErrNotExist):
		status, v = http.StatusNotFound, Failure{"NOT_FOUND", "", "no such file"}
	case errors.As(err, &fetchErr):
		status, v = http.StatusBadGateway, Failure{"BAD_GATEWAY", "", fetchErr.Error()}
	case err != nil:
		// Deliberately careless: the database's and the shell's errors go
		// to the client, as in many an application that is attacked.
		status, v = http.StatusInternalServerError, Failure{"FAILED", "", err.Error()}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// User is a row of users.
type User struct {
	ID   any `json:"id"`
	Name any `json:"name"`
	City any `json:"city"`
}

// users searches the users table. VULNERABLE: every input is concatenated
// into the query.
func (a *App) users(ctx context.Context, in map[string]string) (any, error) {
	var where []string
	if v, ok := in["name"]; ok {
		where = append(where, fmt.Sprintf("name = %q", v)) // Go's quoting is not SQL's
	}
	if v, ok := in["city"]; ok {
		where = append(where, "city = '"+v+"'")
	}
	if v, ok := in["id"]; ok {
		where = append(where, "id = "+v)
	}
	q := "SELECT id, name, city FROM users"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	if v, ok := in["sort"]; ok {
		q += " ORDER BY " + v
	} else {
		q += " ORDER BY id"
	}
	rows, err := a.DB.QueryContext(ctx, q) // checked: the request's context
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	users := []User{}
	for rows.Next() {
		var u User
		if err := rows.Scan(&u.ID, &u.Name, &u.City); err != nil {
			return nil, err
		}
		users = append(users, u)
	}
	return map[string]any{"users": users}, rows.Err()
}

// Greeting is the shell's answer.
type Greeting struct {
	Output string `json:"output"`
}

// greet greets through a shell. VULNERABLE: the name is spliced between
// double quotes, the city with no quotes at all.
func (a *App) greet(ctx context.Context, in map[string]string) (any, error) {
	name, city := "guest", "nowhere"
	if v, ok := in["name"]; ok {
		name = v
	}
	if v, ok := in["city"]; ok {
		city = v
	}
	script := `printf 'Hello, %s from %s\n' "` + name + `" ` + city
	cmd, err := sink.Command(ctx, "sh", "-c", script)
	if err != nil {
		return nil, err
	}
	cmd.Dir = a.WorkDir
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%w: %s%s", err, out.String(), stderr.String())
	}
	return Greeting{out.String()}, nil
}

// File is a file's content.
type File struct {
	Content string `json:"content"`
}

// readFile reads a file by name below FilesDir, or by path as given.
// VULNERABLE: the name is joined without a check, the path used as is.
func (a *App) readFile(ctx context.Context, in map[string]string) (any, error) {
	p := filepath.Join(a.FilesDir, in["name"])
	if v, ok := in["path"]; ok {
		p = v // as an upload form handed it out
	}
	f, err := a.files.Open(ctx, p) // checked: anywhere below FilesDir, no further
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, err
	}
	return File{string(b)}, nil
}

// Fetched is what a fetch brought back.
type Fetched struct {
	Status int    `json:"status"`
	Body   string `json:"body"`
}

type fetchError struct{ err error }

func (e *fetchError) Error() string { return e.err.Error() }
func (e *fetchError) Unwrap() error { return e.err }

// fetch gets a URL, or a host's status page, or with neither the
// application's own status service. VULNERABLE: any URL, any host.
func (a *App) fetch(ctx context.Context, in map[string]string) (any, error) {
	target, ok := in["url"]
	if h, isHost := in["host"]; isHost {
		target, ok = "http://"+h+"/status", true
	}
	if !ok {
		target = a.statusURL
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, &fetchError{err}
	}
	resp, err := a.client.Do(req) // checked: sink.Transport
	if err != nil {
		return nil, &fetchError{err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return nil, &fetchError{err}
	}
	return Fetched{resp.StatusCode, string(b)}, nil
}
