package scan

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// docsTable is the table of docs/vulnerability-scan.md whose header row
// starts with header: its rows below the separator, as trimmed cells.
func docsTable(t *testing.T, header string) [][]string {
	t.Helper()
	text, err := os.ReadFile("../../docs/vulnerability-scan.md")
	require.NoError(t, err)
	var rows [][]string
	in := false
	for line := range strings.Lines(string(text)) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), " | ")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			rows = append(rows, cells)
		case in:
			require.NotEmpty(t, rows, "docs table %q", header)
			return rows
		}
	}
	require.NotEmpty(t, rows, "docs table %q", header)
	return rows
}

// TestPublicCorpora measures the scan on the vendored public corpora and
// holds docs/vulnerability-scan.md's table to the figures, row by row:
// samples, flagged (any class) and flagged as the corpus's own class.
func TestPublicCorpora(t *testing.T) {
	rows := docsTable(t, "| corpus | samples | flagged | as its class |")
	corpora := publicCorpora(t)
	require.Len(t, rows, len(corpora))
	for i, c := range corpora {
		flagged, own := 0, 0
		for _, s := range c.samples {
			switch got := String(s.text); {
			case got == None:
			case got == c.class:
				own++
				flagged++
			default:
				flagged++
			}
		}
		got := []string{fmt.Sprint(len(c.samples)), fmt.Sprintf("%d (%.1f%%)", flagged, 100*float64(flagged)/float64(len(c.samples))), fmt.Sprint(own)}
		if c.class == None { // a benign corpus: flagged in bold, no class
			got[1], got[2] = "**"+got[1]+"**", "–"
		}
		t.Logf("| %s | %s |", c.name, strings.Join(got, " | "))
		require.Equal(t, got, rows[i][1:], "docs row %d (%s) against %s", i+1, rows[i][0], c.name)
	}
}
