//go:build !unix

package contractguard

import "testing"

// unprivileged: a system without Unix users runs every test as it is.
func unprivileged(*testing.T) bool { return false }
