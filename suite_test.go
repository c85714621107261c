package contractguard

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const suiteDir = "testdata/json-schema-test-suite/draft7"

type expectedFailure struct {
	File, Group, Test, Reason string
}

// TestJSONSchemaTestSuite runs every case of the JSON-Schema-Test-Suite
// through Guard.Check, with the case's schema as an in-code contract, and
// prints the pass count.
func TestJSONSchemaTestSuite(t *testing.T) {
	var expected []expectedFailure
	b, err := os.ReadFile("testdata/json-schema-test-suite/expected_failures.yaml")
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(b, &expected))
	for _, e := range expected {
		require.NotEmpty(t, e.Reason, "%+v needs a reason", e)
	}
	isExpected := func(file, group, test string) bool {
		for _, e := range expected {
			if e.File == file && e.Group == group && e.Test == test {
				return true
			}
		}
		return false
	}

	type group struct {
		Description string          `json:"description"`
		Schema      json.RawMessage `json:"schema"`
		Tests       []struct {
			Description string          `json:"description"`
			Data        json.RawMessage `json:"data"`
			Valid       bool            `json:"valid"`
		} `json:"tests"`
	}
	passed, total := 0, 0
	perFile := map[string][2]int{}
	err = filepath.WalkDir(suiteDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		file := strings.TrimPrefix(path, suiteDir+"/")
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		var groups []group
		require.NoError(t, json.Unmarshal(raw, &groups))
		for _, g := range groups {
			var schema map[string]any
			if err := json.Unmarshal(g.Schema, &schema); err != nil {
				// A boolean schema: Contract.Schema is an object; true is {}, false is {"not":{}}.
				var b bool
				require.NoError(t, json.Unmarshal(g.Schema, &b))
				schema = map[string]any{}
				if !b {
					schema["not"] = map[string]any{}
				}
			}
			delete(schema, "$schema") // uuid.json is from draft 2019-09; contracts are draft-07
			guard, err := New(Options{Contracts: []Contract{{Endpoint: "/t", Method: "POST", Schema: schema}}})
			require.NoError(t, err, "%s / %s", file, g.Description)
			for _, tc := range g.Tests {
				total++
				v := guard.Check("POST", "/t", tc.Data)
				ok := v == nil
				if !ok {
					require.Equal(t, CodeSchemaInvalid, v.Code, "%s / %s / %s: %v", file, g.Description, tc.Description, v)
				}
				want := !isExpected(file, g.Description, tc.Description)
				pass := ok == tc.Valid
				if pass != want {
					t.Errorf("%s / %s / %s: valid=%v, got %v", file, g.Description, tc.Description, tc.Valid, v)
				}
				if pass {
					passed++
					c := perFile[file]
					c[0]++
					perFile[file] = c
				}
				c := perFile[file]
				c[1]++
				perFile[file] = c
			}
		}
		return nil
	})
	require.NoError(t, err)
	files := make([]string, 0, len(perFile))
	for file := range perFile {
		files = append(files, file)
	}
	slices.Sort(files)
	for _, file := range files {
		c := perFile[file]
		t.Logf("%-36s %3d/%3d", file, c[0], c[1])
	}
	fmt.Printf("JSON-Schema-Test-Suite (draft7 + formats) through Guard.Check: %d/%d cases pass\n", passed, total)
	assert.Equal(t, total, passed+len(expected))
}
