package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVulnerable attacks the application over HTTP with the corpora of
// corpus_test.go, every value through every input location that can carry
// it, in four configurations:
//
//   - control, no protection: decides which attacks work (they change what
//     the database, the shell, the file system or the network did) and
//     which benign values the handler serves as meant;
//   - sink protection alone: every attack that works is blocked before it
//     reaches the sink — SQLite compiled nothing, the shell left no file,
//     no secret came back, the internal servers had no request —, the
//     answer is 403 SINK_BLOCKED, Stats().SinkBlocks counts it once, the
//     log names it without the value; every benign value is served as in
//     the control;
//   - the vulnerability scan and sink protection: every attack that works
//     is stopped by one or the other; which one is counted;
//   - learning mode: the attacks that work happen as in the control, and
//     are counted and logged as blocks that would have been.
//
// The detection and false-positive rates, by sink and input location, are
// printed (go test -run TestVulnerable -v) and copied into
// docs/sink-protection.md.
func TestVulnerable(t *testing.T) {
	n := newTestNet(t)
	key := trustTestKey(t)
	c := &campaign{
		ctl: newEnv(t, n, key, control), prot: newEnv(t, n, key, sinkOnly),
		both: newEnv(t, n, key, layered), learn: newEnv(t, n, key, learning),
		tallies: map[[2]string]*tally{}, fates: map[[3]string]*fate{}, pastScan: map[string][]string{}, scanRejected: map[string][]string{},
	}
	for _, tg := range targets {
		t.Run(tg.res, func(t *testing.T) {
			for _, e := range []*env{c.ctl, c.prot, c.both, c.learn} {
				e.t = t
			}
			for _, sc := range tg.slots {
				for _, loc := range Locations {
					for _, v := range sc.attacks {
						c.send(t, tg, request{res: tg.res, loc: loc, slot: sc.slot, value: v}, true)
					}
					for _, v := range sc.benign {
						c.send(t, tg, request{res: tg.res, loc: loc, slot: sc.slot, value: v}, false)
					}
				}
			}
		})
	}
	// The control agrees with the corpus: an attack works through every
	// location that carries it, unless it is listed as inert (then through
	// none); a benign value is served, unless it is listed as failing.
	for k, f := range c.fates {
		if why := inert[k] + failing[k]; why != "" {
			assert.Zero(t, f.works, "%q is listed (%s), but works through %d locations", k, why, f.works)
		} else {
			assert.Zero(t, f.not, "%q works through %d locations and not through %d", k, f.works, f.not)
		}
	}
	for _, m := range []map[[3]string]string{inert, failing, knownMisses} {
		for k := range m {
			assert.NotNil(t, c.fates[k], "%q is not in the corpus", k)
		}
	}
	// The guard counted exactly the blocks the answers said.
	for _, e := range []*env{c.prot, c.both} {
		assert.Equal(t, e.answered, e.app.Guard.Stats().SinkBlocks, "%s: Stats().SinkBlocks", e.mode.name)
	}
	assert.Contains(t, c.prot.logs.String(), `msg="contractguard: sink protection blocked a call" sink=sql route="GET /users/query" input=query path=city`)
	assert.Contains(t, c.learn.logs.String(), `msg="contractguard: learning mode: sink protection would have blocked a call"`)
	t.Log(report(c.tallies))
	t.Logf("attacks the scan let through where it looks, blocked at a sink:%s", list(c.pastScan))
	t.Logf("benign values the scan rejected:%s", list(c.scanRejected))
}

// campaign is the application in four configurations, and what the
// corpora did to it.
type campaign struct {
	ctl, prot, both, learn *env
	tallies                map[[2]string]*tally // by sink and location
	fates                  map[[3]string]*fate  // by resource, slot and value
	// pastScan are the attacks the scan let through where it looks (body,
	// query, path) and a sink blocked; scanRejected the benign values it
	// rejected: locations by resource, slot and value.
	pastScan, scanRejected map[string][]string
}

// fate is how a value fared in the control, over the locations that carry
// it: works (an attack has its effect, a benign value is served) or not.
type fate struct{ works, not int }

// send sends q, an attack or a benign value, to the four configurations
// and checks what each did with it.
func (c *campaign) send(t *testing.T, tg target, q request, attack bool) {
	t.Helper()
	key := [3]string{q.res, q.slot, q.value}
	tl := c.tallies[[2]string{tg.sink, q.loc}]
	if tl == nil {
		tl = &tally{}
		c.tallies[[2]string{tg.sink, q.loc}] = tl
	}
	if !c.ctl.expand(q).deliverable() {
		tl.undeliverable++
		return
	}
	ctl := c.ctl.doCounted(q)
	if !ctl.handled() {
		t.Errorf("%v: the control's handler did not answer: %d %s", q, ctl.status, ctl.body)
		return
	}
	works := attack && c.ctl.effective(q, ctl) || !attack && c.ctl.intended(q, ctl)
	f := c.fates[key]
	if f == nil {
		f = &fate{}
		c.fates[key] = f
	}
	if works {
		f.works++
	} else {
		f.not++
	}
	miss := knownMisses[key]
	switch {
	case attack && works:
		tl.effective++
		p := c.prot.doCounted(q)
		switch {
		case miss != "":
			assert.False(t, p.blocked(), "%v: a known miss is blocked now: take it out of knownMisses", q)
			tl.missed++
		case p.blocked():
			tl.blocked++
		default:
			tl.missed++
		}
		if miss == "" {
			c.prot.assertStopped(q, tg.sink, p, false)
		}
		b := c.both.doCounted(q)
		switch {
		case b.scanned():
			tl.edge++
		case b.blocked():
			tl.sinkAfterEdge++
			if q.loc != "header" && q.loc != "cookie" {
				k := fmt.Sprintf("%s/%s %q", q.res, q.slot, q.value)
				c.pastScan[k] = append(c.pastScan[k], q.loc)
			}
		default:
			tl.through++
		}
		if miss == "" {
			c.both.assertStopped(q, tg.sink, b, true)
		}
		l := c.learn.doCounted(q)
		assert.False(t, l.blocked(), "%v: learning mode blocked", q)
		assert.True(t, c.learn.effective(q, l), "%v: in learning mode the call happens: %s", q, l.body)
		if miss == "" && !assert.GreaterOrEqual(t, l.reported[tg.sink], int64(1), "%v: learning mode reported nothing", q) {
			tl.unreported++
		}
	case attack:
		tl.inert++
		if c.prot.doCounted(q).blocked() {
			tl.inertBlocked++
		}
	case works:
		tl.benign++
		p := c.prot.doCounted(q)
		if p.blocked() {
			tl.falseBlocked++
			t.Errorf("%v: a benign value is blocked: %s", q, p.body)
		} else {
			assert.Equal(t, ctl.status, p.status, "%v", q)
			assert.Equal(t, ctl.body, p.body, "%v: served otherwise than in the control", q)
		}
		b := c.both.doCounted(q)
		if b.scanned() {
			tl.scanFalse++
			k := fmt.Sprintf("%s/%s %q", q.res, q.slot, q.value)
			c.scanRejected[k] = append(c.scanRejected[k], q.loc)
		}
		assert.False(t, b.blocked(), "%v: a benign value is blocked behind the scan: %s", q, b.body)
		l := c.learn.doCounted(q)
		assert.Equal(t, ctl.body, l.body, "%v: learning mode", q)
		assert.Zero(t, l.reported.total(), "%v: learning mode reported a benign value", q)
	default:
		tl.failing++
		if c.prot.doCounted(q).blocked() {
			tl.failingBlocked++
		}
	}
}

func list(m map[string][]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "\n%s through %s", k, strings.Join(m[k], ", "))
	}
	return b.String()
}

// tally counts one sink's cases through one input location.
type tally struct {
	undeliverable int // values the location cannot carry unchanged
	// Attacks that work in the control, and what sink protection alone did.
	effective, blocked, missed int
	// The same behind the vulnerability scan: stopped at the edge, by a
	// sink after the scan let them through, or not at all.
	edge, sinkAfterEdge, through int
	inert, inertBlocked          int // attacks that do nothing to the handler
	benign, falseBlocked         int // benign values the handler serves
	scanFalse                    int // … that the scan rejects
	failing, failingBlocked      int // benign values the handler fails on anyway
	unreported                   int // attacks learning mode let through without a report
}

func (a *tally) add(b *tally) {
	a.undeliverable += b.undeliverable
	a.effective += b.effective
	a.blocked += b.blocked
	a.missed += b.missed
	a.edge += b.edge
	a.sinkAfterEdge += b.sinkAfterEdge
	a.through += b.through
	a.inert += b.inert
	a.inertBlocked += b.inertBlocked
	a.benign += b.benign
	a.falseBlocked += b.falseBlocked
	a.scanFalse += b.scanFalse
	a.failing += b.failing
	a.failingBlocked += b.failingBlocked
	a.unreported += b.unreported
}

// report is the rates, by sink and location, as the Markdown tables of
// docs/sink-protection.md.
func report(tallies map[[2]string]*tally) string {
	var b strings.Builder
	pct := func(n, d int) string {
		if d == 0 {
			return "–"
		}
		return fmt.Sprintf("%d/%d (%.1f%%)", n, d, 100*float64(n)/float64(d))
	}
	row := func(sink, loc string, tl *tally) {
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %d / %d / %d | %d | %s | %d |\n", sink, loc, tl.effective, pct(tl.blocked, tl.effective),
			tl.edge, tl.sinkAfterEdge, tl.through, tl.benign, pct(tl.falseBlocked, tl.benign), tl.scanFalse)
	}
	b.WriteString("\n| sink | input location | attacks that work | blocked by sink protection | with the scan on: stopped by the scan / by sink protection / not | benign values served | blocked by sink protection | with the scan on: rejected by the scan |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|\n")
	var all tally
	sums := map[string]*tally{}
	for _, tg := range targets {
		sum := &tally{}
		sums[tg.sink] = sum
		for _, loc := range Locations {
			if tl := tallies[[2]string{tg.sink, loc}]; tl != nil {
				sum.add(tl)
				row(tg.sink, loc, tl)
			}
		}
		row("**"+tg.sink+"**", "**all**", sum)
		all.add(sum)
	}
	row("**all**", "**all**", &all)
	b.WriteString("\n| sink | attack values | benign values | attacks that do nothing here, blocked | benign values the handler fails on anyway, blocked | cases a location cannot carry | attacks learning mode did not report |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	values := 0
	for _, tg := range targets {
		s, attacks, benign := sums[tg.sink], 0, 0
		for _, sc := range tg.slots {
			attacks, benign = attacks+len(sc.attacks), benign+len(sc.benign)
		}
		values += attacks + benign
		fmt.Fprintf(&b, "| %s | %d | %d | %d/%d | %d/%d | %d | %d |\n", tg.sink, attacks, benign,
			s.inertBlocked, s.inert, s.failingBlocked, s.failing, s.undeliverable, s.unreported)
	}
	fmt.Fprintf(&b, "\n%d values, %d cases sent through %d locations (%d attacks that work, %d benign values served), %d known misses\n",
		values, all.effective+all.inert+all.benign+all.failing, len(Locations), all.effective, all.benign, len(knownMisses))
	return b.String()
}

// expand fills in q's {port} and {base} for e.
func (e *env) expand(q request) request {
	q.value = strings.NewReplacer("{port}", e.net.port, "{base}", e.app.FilesDir).Replace(q.value)
	return q
}

// counts are blocks reported by sink.
type counts map[string]int64

func (c counts) total() (n int64) {
	for _, v := range c {
		n += v
	}
	return n
}

// doCounted sends q (expanded for e) and notes the blocks the guard
// counted while it ran, and, for a blocked answer, the sink it names.
func (e *env) doCounted(q request) outcome {
	e.t.Helper()
	before := e.app.Guard.Stats().SinkBlocks
	o := e.do(e.expand(q))
	after := e.app.Guard.Stats().SinkBlocks
	o.reported = counts{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			o.reported[k] = d
		}
	}
	if e.answered == nil {
		e.answered = map[string]int64{"sql": 0, "shell": 0, "file": 0, "http": 0}
	}
	if o.blocked() {
		e.answered[o.sink]++
		assert.Equal(e.t, counts{o.sink: 1}, o.reported, "%v: one block counted, for its sink", q)
	} else if !e.mode.learning {
		assert.Zero(e.t, o.reported.total(), "%v: a block counted for a call that was not blocked", q)
	}
	return o
}

// assertStopped asserts that an attack that works in the control was
// stopped before its sink: by that sink's check (or, with scan, by the
// scan), with the answer saying so, and nothing of it reaching the sink.
func (e *env) assertStopped(q request, sinkName string, o outcome, scan bool) {
	e.t.Helper()
	if scan && o.scanned() {
		assert.Equal(e.t, 403, o.status, "%v", q)
	} else {
		if !assert.True(e.t, o.blocked(), "%v: not blocked (%s): %d %s", q, e.mode.name, o.status, o.body) {
			return
		}
		assert.Equal(e.t, 403, o.status, "%v", q)
		assert.Equal(e.t, sinkName, o.sink, "%v", q)
		assert.Contains(e.t, o.body, "sink: "+sinkName+" call blocked", "%v", q)
	}
	// Nothing reached the sink.
	assert.Empty(e.t, o.compiled, "%v: SQLite compiled something", q)
	assert.False(e.t, o.changed, "%v: the database changed", q)
	assert.Empty(e.t, o.markers, "%v: the shell left files", q)
	assert.Zero(e.t, o.hits, "%v: an internal server was reached", q)
	assert.NotRegexp(e.t, secrets, o.body, "%v: a secret came back", q)
	// The log names the block, never the value.
	if v := e.expand(q).value; len(v) >= 8 {
		assert.NotContains(e.t, e.logs.String(), v, "%v: the value is in the log", q)
	}
}

// secrets are what no blocked answer may hold: the canaries of the files,
// the database and the internal servers, /etc/passwd, the shell's id.
var secrets = regexp.MustCompile(`CANARY|hunter2|root:x?:0:0|uid=\d`)

// handled says whether the application's handler answered (and not the
// router or the guard).
func (o outcome) handled() bool {
	switch o.errCode {
	case "", "FAILED", "NOT_FOUND", "BAD_GATEWAY", "SINK_BLOCKED":
		return o.status == 200 || o.errCode != ""
	}
	return false
}

// effective says whether the attack q changed what the handler did, in e
// (the control, or learning mode): what the database compiled or returned
// or kept, what the shell ran, which file was read, which server was
// reached.
func (e *env) effective(q request, o outcome) bool {
	switch q.res {
	case "files":
		return o.status == 200 && !e.intended(q, o)
	case "fetch":
		return o.hits > 0
	}
	return !e.intended(q, o)
}

// intended says whether o is what the handler means to do with q: what it
// does when the input is data — a SQL parameter, a word of argv, a name of
// the files folder, a URL of a host outside.
func (e *env) intended(q request, o outcome) bool {
	q = e.expand(q)
	switch q.res {
	case "users":
		want, compiled := e.twinUsers(q.slot, q.value)
		return o.status == 200 && o.body == want && !o.changed && slices.Equal(sorted(o.compiled), sorted(compiled))
	case "greet":
		name, city := "guest", "nowhere"
		if q.slot == "name" {
			name = q.value
		} else {
			city = q.value
		}
		return o.status == 200 && o.body == mustEncode(Greeting{fmt.Sprintf("Hello, %s from %s\n", name, city)}) && len(o.markers) == 0
	case "files":
		p := q.value
		if q.slot == "name" {
			p = filepath.Join(e.app.FilesDir, p)
		}
		rel, err := filepath.Rel(e.app.FilesDir, filepath.Clean(p))
		content, public := publicFiles[filepath.ToSlash(rel)]
		return err == nil && public && o.status == 200 && o.body == mustEncode(File{content})
	case "fetch":
		var f Fetched
		return o.status == 200 && o.hits == 0 && json.Unmarshal([]byte(o.body), &f) == nil && f.Status == 200 &&
			(strings.HasPrefix(f.Body, "public ") || strings.HasPrefix(f.Body, "partner "))
	}
	panic("unknown resource " + q.res)
}

// twinUsers is the users handler's answer with the input passed as a
// parameter (an ordering only if it is a list of columns), and what SQLite
// compiled for it.
func (e *env) twinUsers(slot, v string) (string, []string) {
	q, args := "SELECT id, name, city FROM users", []any{}
	order := "id"
	switch slot {
	case "name", "city", "id":
		q += " WHERE " + slot + " = ?"
		args = append(args, v)
	case "sort":
		if columnList.MatchString(v) {
			order = v
		}
	}
	q += " ORDER BY " + order
	_, mark := e.audit.since(0)
	rows, err := e.app.DB.QueryContext(context.Background(), q, args...) // no request: unchecked
	require.NoError(e.t, err)
	defer rows.Close()
	users := []User{}
	for rows.Next() {
		var u User
		require.NoError(e.t, rows.Scan(&u.ID, &u.Name, &u.City))
		users = append(users, u)
	}
	require.NoError(e.t, rows.Err())
	compiled, _ := e.audit.since(mark)
	return mustEncode(map[string]any{"users": users}), compiled
}

// columnList is an ordering the users handler means to take: columns, each
// ASC or DESC.
var columnList = regexp.MustCompile(`(?i)^\s*(users\.)?(id|name|city|email)(\s+(asc|desc))?(\s*,\s*(users\.)?(id|name|city|email)(\s+(asc|desc))?)*\s*$`)

func mustEncode(v any) string {
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		panic(err)
	}
	return b.String()
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestVulnerable_OwnCall: a call the application makes on its own (the
// fetch handler, given no URL, asks the status service it is configured
// with, a sidecar on the loopback) is not the client's doing, and is
// served whatever the client sends — except when the request's Host header
// names the sidecar's host: sink protection takes the Host header for
// input, and the sidecar's host for the client's choice (knownFalseBlocks).
func TestVulnerable_OwnCall(t *testing.T) {
	n := newTestNet(t)
	key := trustTestKey(t)
	sidecar := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "sidecar ok")
	}))
	defer sidecar.Close()
	_, sidecarPort, _ := net.SplitHostPort(sidecar.Listener.Addr().String())
	for _, sidecarHost := range []string{"127.0.0.1", "localhost"} {
		app, err := New(Config{Dir: t.TempDir(), LicenseKey: key, SinkProtection: true, Resolver: n, Dial: n.Dial,
			StatusURL: "http://" + sidecarHost + ":" + sidecarPort + "/status", Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		defer app.Close()
		srv := httptest.NewServer(app.Handler)
		defer srv.Close()
		_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
		for _, host := range []string{
			"api.example.com",
			"10.1.2.3:" + port,  // a pod's address, as a Kubernetes probe sends it
			"127.0.0.1:" + port, // a local reverse proxy, a container health check, curl 127.0.0.1:…
			"127.0.0.1",
			"localhost:" + port, // a browser in development
		} {
			t.Run(sidecarHost+"/"+host, func(t *testing.T) {
				req, err := http.NewRequest(http.MethodGet, srv.URL+"/fetch/query", nil)
				require.NoError(t, err)
				req.Host = host
				resp, err := srv.Client().Do(req)
				require.NoError(t, err)
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				h, _, err := net.SplitHostPort(host)
				if err != nil {
					h = host
				}
				if why := knownFalseBlocks[[2]string{sidecarHost, h}]; why != "" {
					assert.Equal(t, 403, resp.StatusCode, "known false block (%s) no longer happens: take it out of knownFalseBlocks", why)
					assert.Contains(t, string(b), `input from header \"Host\" points the request at a loopback address`)
					return
				}
				assert.Equal(t, 200, resp.StatusCode, "%s", b)
				assert.Contains(t, string(b), "sidecar ok")
			})
		}
	}
}

// knownFalseBlocks are the sidecar hosts and Host headers that make the
// application's own call to its sidecar a block, and why.
// Empty: the two it held (the sidecar on 127.0.0.1 or localhost while the
// Host header named the same host on another port) are fixed, the Host
// header counting only with its port (sink.TestCheckURL_HostHeaderNeedsThePort).
var knownFalseBlocks = map[[2]string]string{}

// TestVulnerable_NeedsLicence: sink protection is a paid feature, and the
// application does not start without a key entitling it.
func TestVulnerable_NeedsLicence(t *testing.T) {
	_, err := New(Config{Dir: t.TempDir(), SinkProtection: true, Logger: slog.New(slog.DiscardHandler)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sink-protection is a paid feature")
}
