//go:build unix

package contractguard

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// nobody is the user (and group) a test runs as when root would read
// through the permissions it is about.
const nobody = 65534

// unprivileged runs the calling test again, when this process is root, in
// a copy of the test binary run as the user nobody, and says whether it
// did: the caller then returns, the test having passed or failed in that
// run. Root reads and searches any file or folder whatever its
// permissions, so what a service account meets cannot be seen as root, and
// CI runs as root. Only top-level tests can be run again.
func unprivileged(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return false
	}
	require.NotContains(t, t.Name(), "/", "a subtest cannot be run again alone")
	dir, err := os.MkdirTemp("", "unprivileged")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	tmp := filepath.Join(dir, "tmp")
	require.NoError(t, os.Mkdir(tmp, 0o755))
	require.NoError(t, os.Chmod(dir, 0o755))
	require.NoError(t, os.Chmod(tmp, 0o1777))
	bin := filepath.Join(dir, "test")
	copyExecutable(t, bin)

	cmd := exec.Command(bin, "-test.run", "^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "HOME="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if errors.Is(err, syscall.EPERM) {
		t.Skipf("root here cannot run a process as another user (%v)", err)
	}
	require.NoError(t, err, "the test run as user %d:\n%s", nobody, out)
	// It ran, and was not skipped there.
	require.Contains(t, string(out), "--- PASS: "+t.Name()+" ", "the test run as user %d:\n%s", nobody, out)
	t.Logf("passed as user %d", nobody)
	return true
}

// copyExecutable copies the running test binary to path, for another
// user to run (the go command builds it in a folder only its owner can
// search).
func copyExecutable(t *testing.T, path string) {
	exe, err := os.Executable()
	require.NoError(t, err)
	src, err := os.Open(exe)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, errors.Join(err, dst.Close()))
}
