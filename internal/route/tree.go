package route

// Tree maps (method, pattern) to values of type T. Lookups walk one node per
// path segment, trying the static child before the parameter child and
// backtracking only when a branch dead-ends, so the most specific pattern
// wins: compared from the left, a static segment beats a parameter.
type Tree[T any] struct {
	root node[T]
	n    int
}

type node[T any] struct {
	static  map[string]*node[T]
	param   *node[T]
	methods map[string]T
}

// Add stores v for method (upper case) and pattern. If the tree already
// holds a value for the same method and shape, Add returns that value and
// false, and stores nothing.
func (t *Tree[T]) Add(method string, p Pattern, v T) (T, bool) {
	n := &t.root
	for _, s := range p {
		if s.Param != "" {
			if n.param == nil {
				n.param = &node[T]{}
			}
			n = n.param
			continue
		}
		if n.static == nil {
			n.static = map[string]*node[T]{}
		}
		c := n.static[s.Static]
		if c == nil {
			c = &node[T]{}
			n.static[s.Static] = c
		}
		n = c
	}
	if old, ok := n.methods[method]; ok {
		return old, false
	}
	if n.methods == nil {
		n.methods = map[string]T{}
	}
	n.methods[method] = v
	t.n++
	var zero T
	return zero, true
}

// Len is the number of values in the tree.
func (t *Tree[T]) Len() int { return t.n }

// Lookup finds the value for method (upper case) and path segments. A HEAD
// request with no HEAD pattern takes the GET one, as net/http's ServeMux
// routes HEAD to GET handlers.
func (t *Tree[T]) Lookup(method string, segs []string) (T, bool) {
	return t.lookup(method, segs, nil)
}

// Visits is the number of tree nodes a lookup visits: what matching costs,
// whatever the number of patterns.
func (t *Tree[T]) Visits(method string, segs []string) int {
	n := 0
	t.lookup(method, segs, &n)
	return n
}

func (t *Tree[T]) lookup(method string, segs []string, visits *int) (T, bool) {
	if v, ok := t.root.find(method, segs, visits); ok {
		return v, true
	}
	if method == "HEAD" {
		return t.root.find("GET", segs, visits)
	}
	var zero T
	return zero, false
}

func (n *node[T]) find(method string, segs []string, visits *int) (T, bool) {
	if visits != nil {
		*visits++
	}
	if len(segs) == 0 {
		v, ok := n.methods[method]
		return v, ok
	}
	if c := n.static[segs[0]]; c != nil {
		if v, ok := c.find(method, segs[1:], visits); ok {
			return v, true
		}
	}
	if n.param != nil {
		return n.param.find(method, segs[1:], visits)
	}
	var zero T
	return zero, false
}

// Match reads rawPath (percent-encoded, without query) as Segments does and
// looks it up. When that reading matches nothing and the path can be read
// another way by some router or handler (see alternateReadings), those
// readings are tried in turn. It returns the value and the segments of the
// reading that matched; segs is appended to buf.
func (t *Tree[T]) Match(method, rawPath string, buf []string) (v T, segs []string, ok bool) {
	segs = Segments(rawPath, buf[:0])
	if v, ok = t.Lookup(method, segs); ok {
		return v, segs, true
	}
	for _, alt := range alternateReadings(rawPath) {
		segs = Segments(alt, buf[:0])
		if v, ok = t.Lookup(method, segs); ok {
			return v, segs, true
		}
	}
	return v, nil, false
}
