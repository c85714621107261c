package main

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUsage_NeverPrintsTheLicenceKey: a mistyped flag prints the usage,
// which ends up in a container's log: it names the variable the key comes
// from, never the key. (The test runs main in a child process.)
func TestUsage_NeverPrintsTheLicenceKey(t *testing.T) {
	if os.Getenv("VULNERABLE_TEST_MAIN") == "1" {
		os.Args = []string{"vulnerable", "-no-such-flag"}
		main()
		return
	}
	const key = "cg1.eyJub3QiOiJhIGtleSJ9.c2lnbmF0dXJlLW9mLW5vdGhpbmc"
	cmd := exec.Command(os.Args[0], "-test.run=^TestUsage_NeverPrintsTheLicenceKey$")
	cmd.Env = append(os.Environ(), "VULNERABLE_TEST_MAIN=1", "CONTRACTGUARD_LICENSE_KEY="+key)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	assert.Equal(t, 2, exit.ExitCode(), "a usage error")
	assert.Contains(t, string(out), "$CONTRACTGUARD_LICENSE_KEY")
	assert.NotContains(t, string(out), key[:24])
}
