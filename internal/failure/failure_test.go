package failure

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPointer(t *testing.T) {
	assert.Equal(t, "", Pointer(nil))
	assert.Equal(t, "/a/0/b~1c/d~0e", Pointer([]string{"a", "0", "b/c", "d~e"}))
}

func TestClip(t *testing.T) {
	assert.Equal(t, "short", Clip("short"))
	long := ""
	for range 70 {
		long += "é"
	}
	c := Clip(long)
	assert.LessOrEqual(t, len(c), MaxEcho+len("…"))
	assert.Equal(t, "…", c[len(c)-len("…"):])
}

func TestPath(t *testing.T) {
	var p Path
	assert.Equal(t, "", p.Pointer())
	assert.Equal(t, "/", p.Pointer(""), "the empty member name")
	p.Member("items")
	p.Index(0)
	p.SetIndex(2)
	p.Member("a/b~c")
	assert.Equal(t, "/items/2/a~1b~0c", p.Pointer())
	assert.Equal(t, "/items/2/a~1b~0c/sku", p.Pointer("sku"))
	p.Pop()
	p.Pop()
	assert.Equal(t, "/items", p.Pointer())
	for i := range 40 { // past the 16 levels kept without allocating
		p.Index(i)
	}
	assert.Equal(t, 41, strings.Count(p.Pointer(), "/"))
	p.Reset()
	assert.Equal(t, "", p.Pointer())
}

func TestSegment(t *testing.T) {
	assert.Equal(t, "/", Segment(""))
	assert.Equal(t, "/sku", Segment("sku"))
	assert.Equal(t, "/a~1b~0c~0~1", Segment("a/b~c~/"))

	var p Path
	p.Segment(Segment("a/b"))
	assert.Equal(t, "/a~1b", p.Pointer(), "a member of the root")
	assert.Equal(t, "/a~1b/x~0", p.Pointer("x~"))
	assert.Equal(t, "/a~1b/x~1", p.PointerSegment(Segment("x/")))
	p.Index(120)
	p.Member("c~d")
	p.Segment(Segment("e"))
	assert.Equal(t, "/a~1b/120/c~0d/e", p.Pointer())
	p.Reset()
	assert.Equal(t, "/q", p.PointerSegment(Segment("q")), "at the root, the segment itself")
}

// TestPath_AsPointer holds a Path to Pointer over the same tokens, however
// each member is stepped into (by name or by Segment), past the 16 levels
// it keeps inline too.
func TestPath_AsPointer(t *testing.T) {
	names := []string{"", "a", "~", "/", "a/b~c", "~01", "é/", "items"}
	for seed := range 2000 {
		var p Path
		var tokens []string
		x := seed
		next := func(n int) int { x = x*1103515245 + 12345; return (x >> 8 & 0x7fffffff) % n }
		for range next(24) {
			switch next(3) {
			case 0:
				i := next(1500)
				p.Index(i)
				tokens = append(tokens, strconv.Itoa(i))
			case 1:
				name := names[next(len(names))]
				p.Member(name)
				tokens = append(tokens, name)
			default:
				name := names[next(len(names))]
				p.Segment(Segment(name))
				tokens = append(tokens, name)
			}
		}
		last := names[next(len(names))]
		require.Equal(t, Pointer(tokens), p.Pointer(), "seed %d", seed)
		require.Equal(t, Pointer(append(tokens, last)), p.Pointer(last), "seed %d", seed)
		require.Equal(t, Pointer(append(tokens, last)), p.PointerSegment(Segment(last)), "seed %d", seed)
	}
}

// TestPath_RootSegmentAllocatesNothing: a failure at a declared member of
// the root, the most common, renders its pointer without an allocation.
func TestPath_RootSegmentAllocatesNothing(t *testing.T) {
	seg := Segment("quantity")
	var p Path
	var got string
	allocs := testing.AllocsPerRun(100, func() {
		p.Segment(seg)
		got = p.Pointer()
		p.Pop()
		got = p.PointerSegment(seg)
	})
	assert.Equal(t, "/quantity", got)
	assert.Zero(t, allocs)
}

// TestPrintable: a name is shown as it is, or quoted when it holds what
// would not print as itself, so that an error stays one line.
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"orders.yaml": "orders.yaml", "café/ü.json": "café/ü.json", "a b": "a b",
		"a\nb.yaml": `"a\nb.yaml"`, "x\xffy": `"x\xffy"`, "tab\t": `"tab\t"`,
	} {
		assert.Equal(t, want, Printable(in), "%q", in)
	}
}

func TestPrintablePath(t *testing.T) {
	_, err := os.ReadFile("no\nsuch file")
	assert.Equal(t, `open "no\nsuch file": no such file or directory`, PrintablePath(err).Error())
	_, err = os.ReadFile("no such file")
	assert.Same(t, err, PrintablePath(err), "a printable name: the error as it is")
	other := errors.New("a\nb")
	assert.Same(t, other, PrintablePath(other))
}
