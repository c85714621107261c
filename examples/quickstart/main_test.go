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

const order = `{"orderId":"6f1c2a9e-8d3b-4c5a-9e7f-1a2b3c4d5e6f","email":"ada@example.com",
 "items":[{"sku":"BK-001","quantity":2,"unitPrice":19.99}],"currency":"EUR","total":39.98,
 "placedAt":"2026-11-21T10:15:00Z"}`

func TestQuickstart(t *testing.T) {
	h, err := newServer()
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()

	do := func(method, path, body string, header ...string) (int, string) {
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	tests := []struct {
		name, method, path, body string
		header                   []string
		status                   int
		contains                 string
	}{
		{"a valid registration", "POST", "/api/users", `{"email":"ada@example.com","password":"correct horse","age":36}`, nil, 200, `"accepted":"POST /api/users"`},
		{"a bad email", "POST", "/api/users", `{"email":"ada.example.com","password":"correct horse","age":36}`, nil, 400, `{"path":"/email","message":"must be a valid email address"}`},
		{"too young, missing password, extra field", "POST", "/api/users", `{"email":"ada@example.com","age":12,"nickname":"a"}`, nil, 400, `"details":[{"path":"/age","message":"must be >= 18"},{"path":"/nickname","message":"is not allowed"},{"path":"/password","message":"is required"}]`},
		{"an unknown role", "POST", "/api/users", `{"email":"ada@example.com","password":"correct horse","age":36,"role":"root"}`, nil, 400, `"must be one of \"user\", \"admin\""`},
		{"password equal to email", "POST", "/api/users", `{"email":"ada@example.com","password":"ada@example.com","age":36}`, nil, 422, `"the password must not be the email address"`},
		{"an admin created by a non-admin", "POST", "/api/users", `{"email":"ada@example.com","password":"correct horse","age":36,"role":"admin"}`, nil, 422, `only an admin can create an admin`},
		{"an admin created by an admin", "POST", "/api/users", `{"email":"ada@example.com","password":"correct horse","age":36,"role":"admin"}`, []string{"X-Demo-Role", "admin"}, 200, `"role":"admin"`},
		{"a valid order", "POST", "/api/orders", order, nil, 200, `"accepted":"POST /api/orders"`},
		{"an order without items", "POST", "/api/orders", strings.Replace(order, `[{"sku":"BK-001","quantity":2,"unitPrice":19.99}]`, `[]`, 1), nil, 400, `{"path":"/items","message":"must have at least 1 item"}`},
		{"an order too large", "POST", "/api/orders", strings.Replace(order, `"total":39.98`, `"total":20000`, 1), nil, 422, `orders over 10000 need a sales contact`},
		{"a duplicate key", "POST", "/api/orders", `{"total":1,"total":2}`, nil, 400, `"code":"MALFORMED_JSON"`},
		{"form data", "POST", "/api/orders", `{}`, []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, `"code":"UNSUPPORTED_MEDIA_TYPE"`},
		{"a path parameter rule", "GET", "/api/orders/42", ``, nil, 422, `orderId must be a UUID`},
		{"a matching path parameter", "GET", "/api/orders/6f1c2a9e-8d3b-4c5a-9e7f-1a2b3c4d5e6f", ``, nil, 200, `"accepted"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := do(tt.method, tt.path, tt.body, tt.header...)
			assert.Equal(t, tt.status, status, body)
			assert.Contains(t, body, tt.contains)
		})
	}

	status, body := do("GET", "/actuator/contractguard", "")
	require.Equal(t, 200, status)
	var m map[string]float64
	require.NoError(t, json.Unmarshal([]byte(body), &m))
	assert.Equal(t, float64(len(tests)), m["requests_validated"])
	assert.Equal(t, 10.0, m["requests_blocked"])
	assert.Equal(t, 3.0, m["contracts_loaded"])

	// The same, for Prometheus: by route, outcome and code. (The document
	// above and this scrape are requests no contract matches.)
	status, body = do("GET", "/metrics", "")
	require.Equal(t, 200, status)
	for _, line := range []string{
		`contractguard_requests_total{code="",method="POST",outcome="passed",route="/api/users"} 2`,
		`contractguard_requests_total{code="SCHEMA_INVALID",method="POST",outcome="rejected",route="/api/users"} 3`,
		`contractguard_requests_total{code="INVARIANT_VIOLATED",method="POST",outcome="rejected",route="/api/users"} 2`,
		`contractguard_requests_total{code="MALFORMED_JSON",method="POST",outcome="rejected",route="/api/orders"} 1`,
		`contractguard_requests_total{code="UNSUPPORTED_MEDIA_TYPE",method="POST",outcome="rejected",route="/api/orders"} 1`,
		`contractguard_requests_total{code="INVARIANT_VIOLATED",method="GET",outcome="rejected",route="/api/orders/:orderId"} 1`,
		`contractguard_requests_total{code="",method="GET",outcome="unmatched",route=""} 2`,
		`contractguard_check_duration_seconds_count{method="POST",route="/api/users"} 7`,
		`contractguard_contracts_loaded 3`,
		`contractguard_scan_findings_total{class="sql_injection"} 0`,
	} {
		assert.Contains(t, body, line+"\n")
	}
}
