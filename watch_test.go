package contractguard

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWatch_ReloadsOnChange(t *testing.T) {
	dir := t.TempDir()
	v0, _ := versionContract(0)
	writeVersion(t, dir, v0)
	watching := make(chan struct{}, 1)
	reloads := make(chan string, 16)
	logger := slog.New(logHook(func(r slog.Record) {
		switch r.Message {
		case "contractguard: watching the contracts folder":
			watching <- struct{}{}
		case "contractguard: contracts reloaded", "contractguard: reload failed; the previous contracts stay in force":
			reloads <- r.Message
		}
	}))
	g := mustNew(t, Options{ContractsDir: dir, Logger: logger})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Watch(ctx) }()
	select {
	case <-watching:
	case err := <-done:
		t.Fatalf("Watch: %v", err)
	}

	const reloaded, failed = "contractguard: contracts reloaded", "contractguard: reload failed; the previous contracts stay in force"
	// awaitLog waits for the log line want of a reload, skipping others.
	awaitLog := func(want string) {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case m := <-reloads:
				if m == want {
					return
				}
			case <-timeout:
				t.Fatalf("no %q within 10s of a change", want)
			}
		}
	}
	// await waits until the guard gives the details want for body on
	// POST path.
	await := func(path, body string, want ...Detail) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			v := g.Check("POST", path, []byte(body))
			if v != nil && assert.ObjectsAreEqual(want, v.Details) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("POST %s %s: still %v 10s after a change, want %v", path, body, v, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	v2, _ := versionContract(2)
	writeVersion(t, dir, v2)
	await("/v", `{"n":2}`, Detail{"", "version 2"})

	writeVersion(t, dir, brokenContract(3))
	awaitLog(failed)
	assert.Equal(t, "version 2", g.Check("POST", "/v", []byte(`{"n":2}`)).Details[0].Message)
	writeVersion(t, dir, v2)
	awaitLog(reloaded)

	// A new folder (of schemas, say) is watched as well: by the time its
	// creation has caused a reload, it is watched.
	sub := filepath.Join(dir, "schemas")
	require.NoError(t, os.Mkdir(sub, 0o755))
	awaitLog(reloaded)
	writeSchema := func(required string) {
		require.NoError(t, os.WriteFile(filepath.Join(sub, "m.json"), []byte(`{"type":"object","required":["`+required+`"]}`), 0o644))
	}
	writeSchema("m")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m.yaml"), []byte("endpoint: /m\nmethod: POST\nschema: {$ref: schemas/m.json}\n"), 0o644))
	await("/m", `{}`, Detail{"/m", "is required"})
	writeSchema("k")
	await("/m", `{}`, Detail{"/k", "is required"})

	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
}

func TestWatch_NeedsAFolder(t *testing.T) {
	for name, o := range map[string]Options{
		"no folder":   {Contracts: []Contract{{Endpoint: "/a", Method: "GET"}}},
		"ContractsFS": {ContractsFS: mapFS(map[string]string{"c.yaml": "endpoint: /a\nmethod: GET\n"})},
		"disabled":    {ContractsDir: "testdata/contracts", Disabled: true},
	} {
		t.Run(name, func(t *testing.T) {
			g := mustNew(t, o)
			err := g.Watch(context.Background())
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), "contractguard: Watch"), err.Error())
		})
	}
}

// logHook is a slog handler that calls fn with every record.
type logHook func(slog.Record)

func (h logHook) Enabled(context.Context, slog.Level) bool      { return true }
func (h logHook) Handle(_ context.Context, r slog.Record) error { h(r); return nil }
func (h logHook) WithAttrs([]slog.Attr) slog.Handler            { return h }
func (h logHook) WithGroup(string) slog.Handler                 { return h }
