//go:build unix

package contractguard

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoad_NamedPipeIsNoContractsFile: a named pipe x.yaml in the
// contracts folder is a load error, not read (found by review: reading
// it waited for a writer for ever, and held New, Reload and Watch with
// it); a link to one likewise.
func TestLoad_NamedPipeIsNoContractsFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("endpoint: /a\nmethod: POST\n"), 0o644))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "x.yaml"), 0o644))
	_, err := New(Options{ContractsDir: dir, Logger: discard})
	assert.ErrorContains(t, err, "x.yaml: not a regular file")

	require.NoError(t, os.Remove(filepath.Join(dir, "x.yaml")))
	g := mustNew(t, Options{ContractsDir: dir, Logger: discard})
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
	require.NoError(t, os.Symlink("pipe", filepath.Join(dir, "y.yaml")))
	assert.ErrorContains(t, g.Reload(), "y.yaml: not a regular file")
}
