// Package names finds an object member name among the fixed names a
// schema or a struct declares. Both look a name up for every member of
// every body; a Go map hashes the whole name each time, where the names of
// one object are usually told apart by their length and end bytes.
package names

// Index is an immutable set of names, each with its position in the list
// it was built from. It is safe for concurrent use.
type Index struct {
	names []string
	slots []int32 // positions in names; -1: empty
	mask  uint32
	// byName replaces the table when names cluster under the hash: a miss
	// must never walk a long run of slots.
	byName map[string]int
}

// maxProbe is the longest run of occupied slots a lookup may walk before
// the table gives way to a map.
const maxProbe = 8

// New indexes names; a name listed twice keeps its first position.
func New(names []string) *Index {
	size := 4
	for size < 2*len(names) {
		size *= 2
	}
	x := &Index{names: names, slots: make([]int32, size), mask: uint32(size - 1)}
	for i := range x.slots {
		x.slots[i] = -1
	}
	for i, n := range names {
		if x.Find(n) >= 0 {
			continue
		}
		h := hash(n) & x.mask
		for x.slots[h] >= 0 {
			h = (h + 1) & x.mask
		}
		x.slots[h] = int32(i)
	}
	if x.longestRun() > maxProbe {
		x.byName = make(map[string]int, len(names))
		for j := len(names) - 1; j >= 0; j-- {
			x.byName[names[j]] = j
		}
		x.slots = nil
	}
	return x
}

// longestRun is the most occupied slots in a row (around the end): what a
// lookup of a name not in the set walks at worst.
func (x *Index) longestRun() int {
	longest, run := 0, 0
	for i := range 2 * len(x.slots) {
		if x.slots[i&int(x.mask)] >= 0 {
			run++
			longest = max(longest, min(run, len(x.slots)))
		} else {
			run = 0
		}
	}
	return longest
}

// Find returns the position of name, or -1; a nil Index holds no name.
func (x *Index) Find(name string) int {
	if x == nil {
		return -1
	}
	if x.byName != nil {
		if i, ok := x.byName[name]; ok {
			return i
		}
		return -1
	}
	for h := hash(name) & x.mask; ; h = (h + 1) & x.mask {
		i := x.slots[h]
		if i < 0 {
			return -1
		}
		if x.names[i] == name {
			return int(i)
		}
	}
}

// Len is the number of names the index was built from.
func (x *Index) Len() int { return len(x.names) }

// hash mixes a name's length and its first, second and last bytes.
func hash(s string) uint32 {
	h := uint32(len(s))
	if len(s) > 0 {
		h = h<<8 | uint32(s[0])
		h = h<<8 | uint32(s[len(s)-1])
		if len(s) > 2 {
			h ^= uint32(s[1]) << 24
		}
	}
	return (h * 0x9E3779B1) >> 7
}
