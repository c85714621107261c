package scan

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// publicRates are the figures of docs/vulnerability-scan.md: for each
// public corpus, how many samples the scan flags (any class) and how many
// as the corpus's own class. A change to the scan that moves them updates
// the table in the docs and here.
var publicRates = map[string][2]int{
	"libinjection sqli-phpids + sqli-rsalgado-bhusa2013":  {315, 314},
	"libinjection xss-owasp-cheatsheet + xss-html5secorg": {233, 233},
	"PayloadsAllTheThings command-execution-unix":         {62, 53},
	"PayloadsAllTheThings directory-traversal":            {130, 130},
	"PayloadsAllTheThings NoSQL + MongoDB":                {39, 28},
	"libinjection false_positives":                        {21, 0},
	"blns, all but its attack sections":                   {0, 0},
}

// TestPublicCorpora measures the scan on the vendored public corpora and
// holds it to the published figures.
func TestPublicCorpora(t *testing.T) {
	for _, c := range publicCorpora(t) {
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
		t.Logf("| %s | %d | %d (%.1f%%) | %d |", c.name, len(c.samples), flagged, 100*float64(flagged)/float64(len(c.samples)), own)
		want, ok := publicRates[c.name]
		if assert.True(t, ok, c.name) {
			assert.Equal(t, want, [2]int{flagged, own}, c.name)
		}
	}
}
