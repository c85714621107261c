package schema

import "sync"

var formatChecks sync.Map // name → func(string) bool

// FormatCheck returns the check the compiled schemas of a guard run for
// the format name (the fast path's native check, or the library's with
// the stricter rules of formats.go), so that code which infers formats
// gives the verdict the guard will give. It returns nil for a format the
// compiler does not know.
func FormatCheck(name string) func(string) bool {
	if f, ok := formatChecks.Load(name); ok {
		return f.(func(string) bool)
	}
	s, err := NewCompiler(nil, nil).Compile("format.json", map[string]any{"format": name})
	if err != nil || s.s.Format == nil {
		return nil
	}
	f, _ := formatChecks.LoadOrStore(name, formatCheck(s.s.Format))
	return f.(func(string) bool)
}
