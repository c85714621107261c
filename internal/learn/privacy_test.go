package learn

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPrivacy_NoValueInAnyOutput sends traffic full of distinctive values:
// secrets under secret-looking names (each repeated, so that anything
// recording values would make them enums), under a secret-looking
// ancestor, tokens under innocent names, data used as member names, and
// values seen once or twice. None of them may appear in the export, in the
// learned contracts or in the files written; the repeated values of an
// innocent field do (the test would prove nothing otherwise).
func TestPrivacy_NoValueInAnyOutput(t *testing.T) {
	secrets := map[string]string{
		"password": "Tr0ub4dor-alpha", "newPassword": "correct-horse-zeta", "token": "tok-quartz-91",
		"apiKey": "key-velvet-77", "Authorization": "Bearer-marble-3", "cookie": "sid-amber-5",
		"sessionId": "sess-cobalt-8", "cardNumber": "4111-1111-1111-1111", "cvv": "737",
		"ssn": "078-05-1120", "pin": "4921", "client_secret": "shh-onyx-4",
	}
	var reqs []request
	var distinct []string
	for i := range 60 {
		var b strings.Builder
		b.WriteString(`{"status":"`)
		b.WriteString([]string{"open", "held", "closed"}[i%3])
		b.WriteString(`"`)
		for name, v := range secrets {
			fmt.Fprintf(&b, `,%q:%q`, name, v)
		}
		once := fmt.Sprintf("Zanzibar-%04d", i)           // a value seen once
		twice := fmt.Sprintf("Quixotic-%04d", i/2)        // seen twice
		token := "tk-9f8e7d6c5b4a39281706zz"              // a token under an innocent name, every time
		email := fmt.Sprintf("person%03d@example.org", i) // data as a member name
		distinct = append(distinct, once, twice, email)
		fmt.Fprintf(&b, `,"note":%q,"nick":%q,"data":%q,"owners":{%q:true}`, once, twice, token, email)
		fmt.Fprintf(&b, `,"credentials":{"user":"Yggdrasil-user","hint":"Yggdrasil-hint"}`)
		fmt.Fprintf(&b, `,"payment":{"card":{"holder":"Ophelia-Holder","brand":"visa"}}`)
		b.WriteString("}")
		reqs = append(reqs, request{method: "POST", pattern: "/signup", path: "/signup", body: b.String(), at: epoch.Add(time.Duration(i) * time.Second)})
	}
	forbidden := append(distinct, "tk-9f8e7d6c5b4a39281706zz", "Yggdrasil-user", "Yggdrasil-hint", "Ophelia-Holder", "visa")
	for _, v := range secrets {
		forbidden = append(forbidden, v)
	}

	// Three replicas, so that merged exports are checked too.
	var parts [3][]request
	for i, r := range reqs {
		parts[i%3] = append(parts[i%3], r)
	}
	var exports []*Observations
	var texts []string
	for _, p := range parts {
		o := learn(t, Limits{}, p...)
		exports = append(exports, o)
		b, err := json.Marshal(o)
		require.NoError(t, err)
		texts = append(texts, string(b))
	}
	merged := Merge(Merge(exports[0], exports[1]), exports[2])
	b, err := json.Marshal(merged)
	require.NoError(t, err)
	texts = append(texts, string(b))
	whole := learn(t, Limits{}, reqs...)
	b, err = json.Marshal(whole)
	require.NoError(t, err)
	texts = append(texts, string(b))

	cs := merged.Contracts()
	require.Len(t, cs, 1)
	texts = append(texts, fmt.Sprintf("%#v", cs))
	dir := t.TempDir()
	_, err = WriteContracts(dir, cs, WriteOptions{})
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		texts = append(texts, string(data))
	}

	for i, text := range texts {
		for _, v := range forbidden {
			assert.NotContains(t, text, v, "output %d", i)
		}
	}
	// What is allowed through: repeated values of an innocent field, and
	// the shape, names included.
	assert.Contains(t, texts[len(texts)-1], "enum: [closed, held, open]")
	assert.Contains(t, texts[len(texts)-1], "brand:")
}
