package learn

import (
	"crypto/sha256"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
)

// An enum is the distinct strings one place of a body took, while they are
// few: candidates for an enum. A string is a candidate only if it is at
// most maxCandidate bytes, matches none of the inferred formats (an email
// or a uuid is data, not a member of a closed set), does not look like a
// token (see tokenLike), and its member's name does not look secret. A
// string that is not a candidate, or one distinct string more than
// Limits.EnumValues, drops the candidates of that place for good (over).
//
// A candidate is kept in the clear only once it was seen revealAt times.
// Before that it is kept as a share of a revealAt-out-of-n secret sharing
// (Shamir's, over the prime field 2^61-1) whose polynomial is derived from
// the value itself, plus a fingerprint (a truncated SHA-256 of the value):
// revealAt shares of the same value, from one learner or from several
// merged exports, give the value back, and fewer give nothing but the
// fingerprint. Merging is exact because a value seen revealAt times across
// replicas is revealed by the merge just as one learner reveals it at its
// revealAt-th sighting; the fingerprint lets anyone who guesses a value
// test the guess, as with an unsalted hash. This is the construction of
// STAR (Davidson et al., "STAR: Secret Sharing for Private Threshold
// Aggregation Reporting", 2022), without its randomness server.
type enum struct {
	over    bool
	values  map[string]int64 // seen at least revealAt times
	pending map[fingerprint]*pending
}

// fingerprint is the first 16 bytes of SHA-256 over tagDomain and the value.
type fingerprint [16]byte

// pending is a candidate seen fewer than revealAt times: its shares.
type pending struct {
	n      int64
	shares []share // distinct x
}

// share is one point of each chunk's polynomial, at x.
type share struct {
	x uint64
	y [chunks]uint64
}

const (
	// revealAt is how many times a candidate is seen before it is kept in
	// the clear: the threshold of the sharing.
	revealAt = 3
	// maxCandidate is the longest string that can be a candidate, in bytes.
	maxCandidate = 64
	// chunks is the field elements a candidate is cut into: its length byte
	// and up to maxCandidate bytes, 7 bytes (< 2^61) each.
	chunks = (1 + maxCandidate + 6) / 7
	// prime is the field's order, 2^61-1.
	prime = 1<<61 - 1

	tagDomain   = "contractguard.learn/v1 fingerprint\x00"
	coefDomain  = "contractguard.learn/v1 coefficients\x00"
	coefPerHash = sha256.Size / 8
)

func fingerprintOf(v string) fingerprint {
	if len(v) > maxCandidate { // never a candidate; not truncated either
		h := sha256.New()
		h.Write([]byte(tagDomain))
		h.Write([]byte(v))
		return fingerprint(h.Sum(nil)[:16])
	}
	var buf [len(tagDomain) + maxCandidate]byte
	n := copy(buf[:], tagDomain)
	n += copy(buf[n:], v)
	sum := sha256.Sum256(buf[:n])
	return fingerprint(sum[:16])
}

// secretChunks cuts a candidate into field elements: its length, then its
// bytes, zero-padded, 7 per element.
func secretChunks(v string) (c [chunks]uint64) {
	var b [chunks * 7]byte
	b[0] = byte(len(v))
	copy(b[1:], v)
	for i := range c {
		var w [8]byte
		copy(w[1:], b[7*i:7*i+7])
		c[i] = binary.BigEndian.Uint64(w[:])
	}
	return c
}

// coefficients are the higher coefficients of each chunk's polynomial,
// derived from the value, so that every sighting of a value, on every
// replica, lies on the same polynomials.
func coefficients(v string) (a [chunks][revealAt - 1]uint64) {
	var buf [len(coefDomain) + 1 + maxCandidate]byte
	n := copy(buf[:], coefDomain)
	at := n
	n += 1 + copy(buf[n+1:], v)
	var words [chunks * (revealAt - 1)]uint64
	for w := 0; w < len(words); {
		buf[at] = byte(w / coefPerHash)
		sum := sha256.Sum256(buf[:n])
		for i := 0; i < coefPerHash && w < len(words); i, w = i+1, w+1 {
			words[w] = binary.BigEndian.Uint64(sum[8*i:]) % prime
		}
	}
	for i := range a {
		for j := range a[i] {
			a[i][j] = words[i*(revealAt-1)+j]
		}
	}
	return a
}

// newShare is the share of v at a random nonzero x.
func newShare(v string) share {
	s := share{x: 1 + rand.Uint64N(prime-1)}
	c, a := secretChunks(v), coefficients(v)
	for i := range s.y {
		y, xp := c[i], uint64(1)
		for j := range a[i] {
			xp = mulmod(xp, s.x)
			y = addmod(y, mulmod(a[i][j], xp))
		}
		s.y[i] = y
	}
	return s
}

// reveal gives back the value of revealAt shares with distinct x, if they
// are shares of the value with fingerprint f.
func reveal(f fingerprint, shares []share) (string, bool) {
	if len(shares) < revealAt {
		return "", false
	}
	shares = shares[:revealAt]
	var c [chunks]uint64
	for k, s := range shares {
		// The Lagrange basis polynomial of point k, at 0.
		num, den := uint64(1), uint64(1)
		for m, o := range shares {
			if m != k {
				num = mulmod(num, o.x)
				den = mulmod(den, submod(o.x, s.x))
			}
		}
		if den == 0 {
			return "", false
		}
		l := mulmod(num, inverse(den))
		for i := range c {
			c[i] = addmod(c[i], mulmod(s.y[i], l))
		}
	}
	var b [chunks * 7]byte
	for i, w := range c {
		if w >= 1<<56 {
			return "", false
		}
		var e [8]byte
		binary.BigEndian.PutUint64(e[:], w)
		copy(b[7*i:], e[1:])
	}
	n := int(b[0])
	if n > maxCandidate {
		return "", false
	}
	v := string(b[1 : 1+n])
	if fingerprintOf(v) != f {
		return "", false
	}
	return v, true
}

func addmod(a, b uint64) uint64 {
	s := a + b
	if s >= prime {
		s -= prime
	}
	return s
}

func submod(a, b uint64) uint64 {
	if a >= b {
		return a - b
	}
	return a + prime - b
}

func mulmod(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	s := (hi<<3 | lo>>61) + lo&prime
	s = s&prime + s>>61
	if s >= prime {
		s -= prime
	}
	return s
}

func inverse(a uint64) uint64 {
	r, e := uint64(1), uint64(prime-2)
	for e > 0 {
		if e&1 == 1 {
			r = mulmod(r, a)
		}
		a = mulmod(a, a)
		e >>= 1
	}
	return r
}

// candidate reports whether a string may be an enum candidate (see enum),
// given the formats it matches.
func candidate(s string, formats uint8) bool {
	return len(s) <= maxCandidate && formats == 0 && !tokenLike(s)
}

// tokenLike reports a string of 16 bytes or more with both letters and
// digits (an identifier, a key, a token), or one with 10 digits or more
// (a card, an account or a telephone number): never a member of a closed
// set, and personal more often than not.
func tokenLike(s string) bool {
	letter, digits := false, 0
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		letter = letter || 'a' <= c && c <= 'z'
		if '0' <= s[i] && s[i] <= '9' {
			digits++
		}
	}
	return digits >= 10 || len(s) >= 16 && letter && digits > 0
}

// held is the number of candidates held, each charged candBytes.
func (e *enum) held() int { return len(e.values) + len(e.pending) }

func (e *enum) setOver() {
	e.over, e.values, e.pending = true, nil, nil
}

// observe records one sighting of a candidate s, at most limit distinct.
func (e *enum) observe(s string, limit int) {
	if e.over {
		return
	}
	if n, ok := e.values[s]; ok {
		e.values[s] = n + 1
		return
	}
	f := fingerprintOf(s)
	if p := e.pending[f]; p != nil {
		if p.n+1 >= revealAt {
			delete(e.pending, f)
			if e.values == nil {
				e.values = map[string]int64{}
			}
			e.values[strings.Clone(s)] = p.n + 1
			return
		}
		p.n++
		p.shares = append(p.shares, newShare(s))
		return
	}
	if e.held() >= limit {
		e.setOver()
		return
	}
	if e.pending == nil {
		e.pending = map[fingerprint]*pending{}
	}
	e.pending[f] = &pending{n: 1, shares: []share{newShare(s)}}
}

func (e *enum) clone() *enum {
	if e == nil {
		return nil
	}
	c := &enum{over: e.over}
	if e.values != nil {
		c.values = make(map[string]int64, len(e.values))
		for v, n := range e.values {
			c.values[v] = n
		}
	}
	if e.pending != nil {
		c.pending = make(map[fingerprint]*pending, len(e.pending))
		for f, p := range e.pending {
			c.pending[f] = &pending{n: p.n, shares: slices.Clone(p.shares)}
		}
	}
	return c
}

// mergeEnums is the candidates of both, revealing what the two together
// saw revealAt times. It leaves a and b as they are. Whether the result
// holds more candidates than the limit is for normalize to tell.
func mergeEnums(a, b *enum) *enum {
	switch {
	case b == nil:
		return a.clone()
	case a == nil:
		return b.clone()
	case a.over || b.over:
		return &enum{over: true}
	}
	m := a.clone()
	for v, n := range b.values {
		if m.values == nil {
			m.values = map[string]int64{}
		}
		m.values[v] = addCounts(m.values[v], n)
	}
	for f, p := range b.pending {
		q := m.pending[f]
		if q == nil {
			if m.pending == nil {
				m.pending = map[fingerprint]*pending{}
			}
			m.pending[f] = &pending{n: p.n, shares: slices.Clone(p.shares)}
			continue
		}
		q.n = addCounts(q.n, p.n)
		for _, s := range p.shares {
			if len(q.shares) < revealAt && !slices.ContainsFunc(q.shares, func(o share) bool { return o.x == s.x }) {
				q.shares = append(q.shares, s)
			}
		}
	}
	if len(m.pending) == 0 {
		return m
	}
	// Shares of a value one side holds in the clear join it.
	for v, n := range m.values {
		f := fingerprintOf(v)
		if p := m.pending[f]; p != nil {
			m.values[v] = addCounts(n, p.n)
			delete(m.pending, f)
		}
	}
	// A value seen revealAt times in all is revealed.
	for f, p := range m.pending {
		if p.n < revealAt {
			continue
		}
		if v, ok := reveal(f, p.shares); ok {
			if m.values == nil {
				m.values = map[string]int64{}
			}
			m.values[v] = p.n
			delete(m.pending, f)
		}
	}
	return m
}
