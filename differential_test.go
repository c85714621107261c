package contractguard

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The parser-differential tests: for each class of input on which JSON
// parsers are known to disagree, either the guard rejects it (and the test
// shows a parser behind it reading it differently), or every parser reads
// what the guard checked.

type account struct {
	Role string `json:"role"`
	Sku  int    `json:"sku"`
	Kind int    `json:"kind"`
}

// stdlib decodes as a handler behind the guard typically would.
func stdlib(t *testing.T, body string) (account, error) {
	var a account
	err := json.Unmarshal([]byte(body), &a)
	return a, err
}

func TestDifferential_RejectedBecauseParsersDisagree(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/t", Method: "POST",
		Schema: map[string]any{"type": "object", "properties": map[string]any{"role": map[string]any{"enum": []string{"user"}}}}}}})
	tests := []struct {
		name, body string
		// what encoding/json makes of it, to show why the guard refuses it
		stdlib func(t *testing.T, a account, err error)
	}{
		{"duplicate keys: encoding/json keeps the last", `{"role":"user","role":"admin"}`,
			func(t *testing.T, a account, err error) { assert.Equal(t, "admin", a.Role) }},
		{"duplicate after unescaping", `{"role":"user","r\u006fle":"admin"}`,
			func(t *testing.T, a account, err error) { assert.Equal(t, "admin", a.Role) }},
		{"keys equal but for case: encoding/json matches fields case-insensitively", `{"role":"user","ROLE":"admin"}`,
			func(t *testing.T, a account, err error) { assert.Equal(t, "admin", a.Role) }},
		{"long s folds to s", `{"sku":1,"ſku":2}`,
			func(t *testing.T, a account, err error) { assert.Equal(t, 2, a.Sku) }},
		{"the Kelvin sign folds to k", `{"kind":1,"\u212aind":2}`,
			func(t *testing.T, a account, err error) { assert.Equal(t, 2, a.Kind) }},
		{"a lone surrogate: encoding/json replaces it", `{"role":"us\ud800er"}`,
			func(t *testing.T, a account, err error) { assert.Equal(t, "us\uFFFDer", a.Role) }},
		{"invalid UTF-8: encoding/json replaces it", "{\"role\":\"us\xffer\"}",
			func(t *testing.T, a account, err error) { assert.Equal(t, "us\uFFFDer", a.Role) }},
		{"trailing data: a json.Decoder reads the first value", `{"role":"user"} {"role":"admin"}`,
			func(t *testing.T, _ account, _ error) {
				d := json.NewDecoder(strings.NewReader(`{"role":"user"} {"role":"admin"}`))
				var a, b account
				require.NoError(t, d.Decode(&a))
				require.NoError(t, d.Decode(&b))
				assert.Equal(t, "admin", b.Role, "a streaming reader sees a second request")
			}},
		{"a byte order mark", "\xef\xbb\xbf{\"role\":\"user\"}",
			func(t *testing.T, a account, err error) { assert.Error(t, err, "parsers disagree: some skip a BOM") }},
		{"a raw NUL byte", "{\"role\":\"user\"}\x00",
			func(t *testing.T, a account, err error) { assert.Error(t, err) }},
		{"a number literal over 1000 characters", `{"sku":` + strings.Repeat("9", 1001) + `}`,
			func(t *testing.T, a account, err error) { assert.Error(t, err) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := g.Check("POST", "/t", []byte(tt.body))
			require.NotNil(t, v, "the guard must refuse it")
			assert.Equal(t, CodeMalformedJSON, v.Code)
			a, err := stdlib(t, tt.body)
			tt.stdlib(t, a, err)
		})
	}
}

func TestDifferential_AcceptedAndReadAlikeEverywhere(t *testing.T) {
	type target struct {
		Role  string      `json:"role"`
		Big   json.Number `json:"big"`
		Text  string      `json:"text"`
		Count float64     `json:"count"`
	}
	g := mustNew(t, Options{})
	var typed target
	h := Handle(g, func(w http.ResponseWriter, r *http.Request, in target) { typed = in })
	for _, body := range []string{
		`{"r\u006fle":"admin","big":123456789012345678901234567890,"text":"a\u0000b","count":1e2}`,
		`{"role":"\ud83d\ude00","big":-0.0000000000000000000001,"text":"\"\\\/\b\f\n\r\t","count":-0}`,
		"{\"role\":\"x\",\"big\":1E+2,\"text\":\"caf\u00e9\",\"count\":1.5}",
	} {
		t.Run(body, func(t *testing.T) {
			w := send(h, "POST", "/", body)
			require.Equal(t, 200, w.Code, w.Body.String())
			var std target
			d := json.NewDecoder(bytes.NewReader([]byte(body)))
			d.UseNumber()
			require.NoError(t, d.Decode(&std))
			assert.Equal(t, std, typed, "Handle[T] reads what encoding/json reads")
			var v2 struct { // json v2 has no json.Number: the other fields
				Role  string  `json:"role"`
				Text  string  `json:"text"`
				Count float64 `json:"count"`
			}
			require.NoError(t, jsonv2.Unmarshal([]byte(body), &v2))
			assert.Equal(t, [3]any{v2.Role, v2.Text, v2.Count}, [3]any{typed.Role, typed.Text, typed.Count}, "and what json v2 reads")
		})
	}
}

func TestDifferential_BigNumbersKeepEveryDigit(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/t", Method: "POST",
		Schema: map[string]any{"properties": map[string]any{"id": map[string]any{"type": "integer", "maximum": 9007199254740992}}}}}})
	// float64 reads both as 9007199254740992: only exact numbers tell them apart.
	assert.Nil(t, g.Check("POST", "/t", []byte(`{"id":9007199254740992}`)))
	v := g.Check("POST", "/t", []byte(`{"id":9007199254740993}`))
	require.NotNil(t, v)
	assert.Equal(t, []Detail{{"/id", "must be <= 9007199254740992"}}, v.Details)
	var f struct{ ID float64 }
	json.Unmarshal([]byte(`{"id":9007199254740993}`), &f)
	assert.Equal(t, 9007199254740992.0, f.ID, "what a float64 reader would have checked")
}

// TestDifferential_OnePointZeroForIntegers: draft-07 says 1.0 is an
// integer, Go says an int cannot hold it. The schema accepts it; a typed
// handler answers 400 at its path, never a 500; a plain handler decoding
// into an int must handle encoding/json's error itself.
func TestDifferential_OnePointZeroForIntegers(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/t", Method: "POST",
		Schema: map[string]any{"properties": map[string]any{"n": map[string]any{"type": "integer"}}}}}})
	for _, body := range []string{`{"n":1.0}`, `{"n":1e2}`, `{"n":-0.0}`} {
		assert.Nil(t, g.Check("POST", "/t", []byte(body)), body)
		var plain struct {
			N int `json:"n"`
		}
		assert.Error(t, json.Unmarshal([]byte(body), &plain), "encoding/json refuses %s for an int", body)
	}
	type In struct {
		N int `json:"n"`
	}
	h := Handle(mustNew(t, Options{}), func(w http.ResponseWriter, r *http.Request, in In) {})
	eb := rejected(t, send(h, "POST", "/", `{"n":1.0}`), 400, CodeSchemaInvalid)
	assert.Equal(t, []Detail{{"/n", "must be written without a fraction or exponent for int"}}, eb.Details)
}
