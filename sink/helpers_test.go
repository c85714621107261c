package sink

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/taint"
)

// recorder is a Reporter that keeps what it is told.
type recorder struct {
	mu     sync.Mutex
	blocks []taint.Block
}

func (rc *recorder) SinkBlocked(_ *taint.Request, b taint.Block) {
	rc.mu.Lock()
	rc.blocks = append(rc.blocks, b)
	rc.mu.Unlock()
}

func (rc *recorder) all() []taint.Block {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]taint.Block(nil), rc.blocks...)
}

type paramList [][2]string

func (p paramList) EachParam(yield func(name, value string) bool) {
	for _, kv := range p {
		if !yield(kv[0], kv[1]) {
			return
		}
	}
}

// sources are the places an input can come from, each carried by
// inputAt.
var sources = []taint.Source{taint.BodyValue, taint.BodyKey, taint.Query, taint.QueryName, taint.Param, taint.Header, taint.Cookie}

// carries reports whether src can carry value at all: a cookie cannot
// hold ';' (browsers encode it), a header not a line break.
func carries(src taint.Source, value string) bool {
	switch src {
	case taint.Cookie:
		return !strings.ContainsAny(value, ";\r\n") && strings.TrimSpace(value) == value
	case taint.Header:
		return !strings.ContainsAny(value, "\r\n\x00")
	}
	return true
}

// inputAt is a request with value at src under the name "field", with
// some benign company, and a recorder for its blocks.
func inputAt(t testing.TB, src taint.Source, value string) (*taint.Request, *recorder) {
	t.Helper()
	rc := &recorder{}
	r := &taint.Request{Method: "POST", Route: "/things/:field", Reporter: rc, Header: http.Header{"Accept": {"application/json"}}}
	body := map[string]any{"other": "plain words"}
	switch src {
	case taint.BodyValue:
		body["field"] = value
	case taint.BodyKey:
		body[value] = 1
	case taint.Query:
		r.RawQuery = "page=2&field=" + url.QueryEscape(value)
	case taint.QueryName:
		r.RawQuery = "page=2&" + url.QueryEscape(value) + "=1"
	case taint.Param:
		r.Params = paramList{{"field", value}}
	case taint.Header:
		r.Header.Set("X-Field", value)
	case taint.Cookie:
		r.Header.Set("Cookie", "session=abc123; field="+value)
	default:
		t.Fatalf("no source %d", src)
	}
	b, err := json.Marshal(body)
	require.NoError(t, err)
	r.Body, err = jsonbody.Parse(b, 64)
	require.NoError(t, err)
	return r, rc
}

func ctxOf(r *taint.Request) context.Context { return taint.NewContext(context.Background(), r) }

// assertBlocked checks err is a block reported at src, naming where and
// never the value.
func assertBlocked(t testing.TB, err error, rc *recorder, src taint.Source, value, sink string) {
	t.Helper()
	require.Error(t, err)
	require.True(t, errors.Is(err, ErrBlocked), "%v", err)
	var be *BlockedError
	require.True(t, errors.As(err, &be))
	assert.Equal(t, sink, be.Sink)
	assert.Equal(t, src.String(), be.Source)
	assert.Equal(t, "POST /things/:field", be.Route)
	if len(value) >= 4 {
		// (An http.Client wraps it in a *url.Error that names the URL: that
		// is net/http's, and the application's to show or not.)
		assert.NotContains(t, be.Error(), value, "an error must not echo the input")
	}
	bs := rc.all()
	require.NotEmpty(t, bs)
	assert.Equal(t, sink, bs[0].Sink)
	assert.Equal(t, src, bs[0].Source)
	switch src {
	case taint.BodyValue:
		assert.Equal(t, "/field", bs[0].Name)
	case taint.BodyKey, taint.QueryName:
		assert.Equal(t, "", bs[0].Name)
	case taint.Header:
		assert.Equal(t, "X-Field", bs[0].Name)
	default:
		assert.Equal(t, "field", bs[0].Name)
	}
	if len(value) >= 4 {
		assert.NotContains(t, bs[0].Name+bs[0].Reason, value)
	}
}
