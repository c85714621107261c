package contractguard

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMetrics(t *testing.T) {
	g := testdataGuard(t)
	h := g.Middleware(&echo{})
	send(h, "GET", "/api/users/1", "")
	send(h, "GET", "/api/users/x", "")
	send(h, "GET", "/untracked", "")
	w := send(g.MetricsHandler(), "GET", "/actuator/contractguard", "")
	require.Equal(t, 200, w.Code)
	var m map[string]any
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &m))
	assert.Len(t, m, 5, "the document of SPEC 8 and requests_would_block (learning mode); no licence, no learning report")
	assert.Equal(t, 0.0, m["requests_would_block"])
	assert.Equal(t, 2.0, m["requests_validated"])
	assert.Equal(t, 1.0, m["requests_blocked"])
	assert.Equal(t, 5.0, m["contracts_loaded"])
	assert.Greater(t, m["average_latency_ms"], 0.0)

	off := mustNew(t, Options{})
	assert.Equal(t, 404, send(off.MetricsHandler(), "GET", "/actuator/contractguard", "").Code)
	assert.Equal(t, 405, send(g.MetricsHandler(), "POST", "/actuator/contractguard", "").Code)
}
