package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	from = "6f1c2a9e-8d3b-4c5a-9e7f-1a2b3c4d5e6f"
	to   = "0b7e6d5c-4a3b-4c2d-8e1f-0a9b8c7d6e5f"
)

func transfer(extra string) string {
	return `{"from":"` + from + `","to":"` + to + `","amount":120,"currency":"EUR"` + extra + `}`
}

func TestTypedExample(t *testing.T) {
	h, err := newServer()
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()

	do := func(method, path, token, body string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	path := "/accounts/" + from + "/transfers"
	tests := []struct {
		name, path, token, body string
		status                  int
		contains                string
	}{
		{"a valid transfer", path, "ada", transfer(""), 201, `"status":"scheduled"`},
		{"with line items", path, "ada", transfer(`,"lines":[{"description":"rent","amount":100},{"description":"INV-7","amount":1500}]`), 201, `"lines":2`},
		{"not a UUID", path, "ada", strings.Replace(transfer(""), to, "savings", 1), 400, `{"path":"/to","message":"must be a valid UUID"}`},
		{"below the minimum", path, "ada", strings.Replace(transfer(""), `"amount":120`, `"amount":0`, 1), 400, `{"path":"/amount","message":"must be >= 0.01"}`},
		{"an unknown currency", path, "ada", strings.Replace(transfer(""), `"EUR"`, `"BTC"`, 1), 400, `"must be one of \"EUR\", \"USD\", \"GBP\""`},
		{"an unexpected field", path, "ada", transfer(`,"priority":"high"`), 400, `{"path":"/priority","message":"is not allowed"}`},
		{"the field rule", path, "ada", strings.Replace(transfer(""), `"amount":120`, `"amount":12000`, 1), 422, `{"path":"/amount","message":"at most 10000 per transfer"}`},
		{"the daily limit from the claims", path, "ada", strings.Replace(transfer(""), `"amount":120`, `"amount":2600`, 1), 422, `{"path":"","message":"amount exceeds your daily limit"}`},
		{"a frozen account", path, "frozen", transfer(""), 422, `your account is frozen`},
		{"the same account", path, "ada", strings.Replace(transfer(""), to, from, 1), 422, `cannot transfer to the same account`},
		{"a nested line rule", path, "ada", transfer(`,"lines":[{"description":"rent","amount":100},{"description":"car","amount":1500}]`), 422, `{"path":"/lines/1","message":"lines over 1000 need an invoice number"}`},
		{"a nested field rule", path, "ada", transfer(`,"lines":[{"description":"INV-1","amount":6000}]`), 422, `{"path":"/lines/0/amount","message":"a line may not exceed 5000"}`},
		{"the file contract on the same route", "/accounts/" + to + "/transfers", "ada", transfer(""), 422, `a transfer must leave the account in the path`},
		{"a file contract on another route", "/accounts/" + from, "ada", `{"nickname":"` + strings.Repeat("x", 41) + `"}`, 400, `{"path":"/nickname","message":"must be at most 40 characters long"}`},
		{"and it passing", "/accounts/" + from, "ada", `{"nickname":"savings"}`, 200, `"nickname":"savings"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := "POST"
			if !strings.HasSuffix(tt.path, "/transfers") {
				method = "PATCH"
			}
			status, body := do(method, tt.path, tt.token, tt.body)
			assert.Equal(t, tt.status, status, body)
			assert.Contains(t, body, tt.contains)
		})
	}

	status, body := do("GET", "/actuator/contractguard", "", "")
	require.Equal(t, 200, status)
	var m map[string]float64
	require.NoError(t, json.Unmarshal([]byte(body), &m))
	assert.Equal(t, float64(len(tests)), m["requests_validated"])
	assert.Equal(t, float64(len(tests)-3), m["requests_blocked"])
	assert.Equal(t, 3.0, m["contracts_loaded"], "two file contracts and the typed route")
}
