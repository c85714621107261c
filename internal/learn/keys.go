package learn

import (
	"cmp"
	"strings"
)

// Every route and every node of a body has a key, a pure function of what
// it is (the route's method and template; the node's route and path), so
// that every learner, and every merge, orders them alike. The caps keep the
// smallest keys (a bottom-k sample): which routes and nodes survive a cap
// then depends only on the set seen, never on the order it came in, and
// merging stays exact at the caps.
//
// A node's key is its depth first, then a hash of its path: a parent's key
// is always smaller than its children's, so what a cap keeps is always a
// whole tree from the root down. Two different paths that hash alike are
// told apart by the paths themselves.

// The kinds of edges from a node to a child.
const (
	edgeMember  = 'm' // the member of an object with a given name
	edgeDynamic = 'd' // every member whose name looks like data (an id, an email)
	edgeItems   = 'i' // every element of an array
	edgeRoute   = 'r' // from nothing to a route, named "METHOD template"
	edgeBody    = 'b' // from a route to its body
)

// mix is the hash of an edge of a kind and a name from a parent's hash:
// FNV-1a over the parent's hash, the kind and the name, then the
// splitmix64 finalizer. It is part of the export format: changing it
// changes which nodes every cap keeps.
func mix(parent uint64, kind byte, name string) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	for i := range 8 {
		h = (h ^ (parent >> (8 * i) & 0xff)) * prime
	}
	h = (h ^ uint64(kind)) * prime
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * prime
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// routeKey is the key of a route, and the cut of the routes cap.
type routeKey struct {
	hash uint64
	name string // "METHOD template"
}

func keyOfRoute(name string) routeKey { return routeKey{mix(0, edgeRoute, name), name} }

func compareRoutes(a, b routeKey) int {
	if c := cmp.Compare(a.hash, b.hash); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

// minRoute is the smaller of two route cuts (nil: no cut).
func minRoute(a, b *routeKey) *routeKey {
	if a == nil || b != nil && compareRoutes(*b, *a) < 0 {
		return b
	}
	return a
}

// A path names a node within its route's body: "" for the body, then one
// "/" and an edge per level: "m" and the member's name (with ~ and / escaped
// as in a JSON pointer), "d" for the dynamic members, "i" for the items.

// appendEdge appends an edge to a path.
func appendEdge(path []byte, kind byte, name string) []byte {
	path = append(path, '/', kind)
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '~':
			path = append(path, '~', '0')
		case '/':
			path = append(path, '~', '1')
		default:
			path = append(path, name[i])
		}
	}
	return path
}

// cutKey is a sticky threshold of the bytes cap of a route: the smallest
// key ever dropped; every node at or above it is refused for good. It is
// kept as the path of that node, from which its key follows.
type cutKey struct {
	depth int
	hash  uint64
	path  string
}

func compareCuts(a, b *cutKey) int {
	if c := cmp.Compare(a.depth, b.depth); c != 0 {
		return c
	}
	if c := cmp.Compare(a.hash, b.hash); c != 0 {
		return c
	}
	return strings.Compare(a.path, b.path)
}

// minCut is the smaller of two cuts (nil: no cut).
func minCut(a, b *cutKey) *cutKey {
	if a == nil || b != nil && compareCuts(b, a) < 0 {
		return b
	}
	return a
}

// parseCut reads a cut written as a path, for the route whose body's hash
// is root.
func parseCut(path string, root uint64) (*cutKey, bool) {
	c := &cutKey{path: path, hash: root}
	rest := path
	for rest != "" {
		if rest[0] != '/' || len(rest) < 2 {
			return nil, false
		}
		rest = rest[1:]
		end := strings.IndexByte(rest, '/')
		if end < 0 {
			end = len(rest)
		}
		edge := rest[:end]
		rest = rest[end:]
		kind, name := edge[0], edge[1:]
		switch kind {
		case edgeMember:
			if strings.Contains(name, "~") {
				if !validEscapes(name) {
					return nil, false
				}
				name = strings.NewReplacer("~1", "/", "~0", "~").Replace(name)
			}
		case edgeDynamic, edgeItems:
			if name != "" {
				return nil, false
			}
		default:
			return nil, false
		}
		c.hash = mix(c.hash, kind, name)
		c.depth++
	}
	return c, true
}

func validEscapes(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '~' && (i+1 == len(s) || s[i+1] != '0' && s[i+1] != '1') {
			return false
		}
	}
	return true
}
