package contractguard

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNew_RefusesFeaturesNotBuilt(t *testing.T) {
	// A LearnSampleRate that is no rate (NaN) would turn learning off
	// without a word: a paid feature is never silently off.
	for _, o := range []Options{{LearningMode: true}, {SinkProtection: true}, {MaxDepth: 20000}, {MaxBodyBytes: -1},
		{LearnSampleRate: math.NaN()}, {LearnSampleRate: 1.5}} {
		_, err := New(o)
		assert.Error(t, err, "%+v", o)
	}
}

// enabled: false passes every request through, reads no contract file,
// and counts nothing.
func TestDisabled_PassesEverythingThrough(t *testing.T) {
	var logs bytes.Buffer
	g := mustNew(t, Options{
		ContractsDir: "testdata/nope", // not read
		Disabled:     true, Metrics: true, RequireContract: true,
		Contracts: []Contract{{Endpoint: "/a", Method: "POST", Schema: map[string]any{"type": "object", "required": []any{"x"}}}},
		Logger:    slog.New(slog.NewTextHandler(&logs, nil)),
		User:      func(*http.Request) any { return map[string]any{"role": "admin"} },
	})
	assert.Contains(t, logs.String(), "contractguard: disabled")
	next := &echo{}
	h := g.Middleware(next)
	assert.Equal(t, next, h, "Middleware returns the handler itself")
	assert.Nil(t, g.Check("POST", "/a", []byte(`{}`)))
	assert.Nil(t, g.Check("POST", "/nowhere", []byte(`not json`)))
	assert.Nil(t, g.CheckRequest(httptest.NewRequest("POST", "/a", strings.NewReader("{"))))
	assert.NoError(t, g.Reload())

	type T struct {
		X int      `json:"x" jsonschema:"minimum=10"`
		_ struct{} `cg:"cel=data.x != 3,msg=not three"`
	}
	var got []T
	th := Handle(g, func(w http.ResponseWriter, r *http.Request, v T) {
		got = append(got, v)
		body, ok := Body(r)
		assert.True(t, ok, "Body works with the guard off")
		assert.Equal(t, map[string]any{"x": json.Number("3")}, body)
		assert.Equal(t, map[string]any{"role": "admin"}, User(r), "User works with the guard off")
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	})
	w := send(th, "POST", "/t", `{"x":3}`)
	assert.Equal(t, http.StatusOK, w.Code, "neither the schema nor the rule is checked")
	assert.Equal(t, `{"x":3}`, w.Body.String(), "the handler reads the body it was sent")
	assert.Equal(t, []T{{X: 3}}, got)

	// A body that is not a T cannot reach the handler, guard or no guard.
	w = send(th, "POST", "/t", `{"x":"three"}`)
	rejected(t, w, http.StatusBadRequest, CodeSchemaInvalid)
	rejected(t, send(th, "POST", "/t", `{"x":`), http.StatusBadRequest, CodeMalformedJSON)
	assert.Len(t, got, 1)

	m := g.Metrics()
	assert.Zero(t, m.RequestsValidated)
	assert.Zero(t, m.RequestsBlocked)
	assert.Zero(t, m.ContractsLoaded, "the typed contract is built (a bad one still fails at start) but not in force")

	type Bad struct {
		_ struct{} `cg:"cel=data.nope > 0,msg=m"`
		X int      `json:"x"`
	}
	_, err := NewHandler(g, func(http.ResponseWriter, *http.Request, Bad) {})
	require.Error(t, err, "a bad typed contract fails at start-up with the guard off too")
	assert.Contains(t, err.Error(), "nope")
}
