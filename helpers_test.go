package contractguard

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// errorBody is the JSON error body of a rejection.
type errorBody struct {
	Error   string   `json:"error"`
	Code    string   `json:"code"`
	Details []Detail `json:"details"`
}

func mustNew(t testing.TB, o Options) *Guard {
	t.Helper()
	g, err := New(o)
	require.NoError(t, err)
	return g
}

func testdataGuard(t testing.TB, mod ...func(*Options)) *Guard {
	o := Options{ContractsDir: "testdata/contracts", Metrics: true}
	for _, m := range mod {
		m(&o)
	}
	return mustNew(t, o)
}

func readFile(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}

// echo is a handler that records what reached it and echoes the body.
type echo struct {
	calls int
	body  []byte
	r     *http.Request
}

func (e *echo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.calls++
	e.r = r
	e.body, _ = io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.Write(e.body)
}

// send runs a request through h; header pairs follow the body.
func send(h http.Handler, method, target, body string, header ...string) *httptest.ResponseRecorder {
	var rd io.Reader = http.NoBody
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := httptest.NewRequest(method, target, rd)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			r.Header.Del(header[i])
		} else {
			r.Header.Set(header[i], header[i+1])
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// rejected asserts a rejection and returns its body.
func rejected(t testing.TB, w *httptest.ResponseRecorder, status int, code string) errorBody {
	t.Helper()
	require.Equal(t, status, w.Code, w.Body.String())
	assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
	var eb errorBody
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &eb), w.Body.String())
	assert.Equal(t, "CONTRACT_VIOLATION", eb.Error)
	assert.Equal(t, code, eb.Code)
	assert.NotNil(t, eb.Details)
	return eb
}

func paths(ds []Detail) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Path
	}
	return out
}

var discard = slog.New(slog.DiscardHandler)

func mapFS(files map[string]string) fstest.MapFS {
	m := fstest.MapFS{}
	for name, data := range files {
		m[name] = &fstest.MapFile{Data: []byte(data)}
	}
	return m
}

// TestMain keeps the guards the tests start from writing their start-up
// lines to the test output; tests about logging give their own Logger.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}
