package jsonbody

// Raw is the text of the value exactly as the body has it, whitespace
// inside included: what json v2 hands a type's UnmarshalJSON method. (The
// generic value marshalled again is another text: members sorted by
// name, <, > and & escaped, escapes in strings resolved.) The bytes are
// the body's own, not copied: they must not be written to.
//
// The spans of all the values are found on the first call, by one walk
// over the body, and kept in the Doc; like Get, Raw is for the goroutine
// that checks the request.
func (v Value) Raw() []byte {
	d := v.d
	if len(d.raw) == 0 { // NullDoc: the empty body
		return []byte("null")
	}
	b := d.builtOnce()
	if b.spans == nil {
		b.spans = spansOf(d.raw, len(d.nodes))
	}
	return d.raw[b.spans[2*v.i]:b.spans[2*v.i+1]:b.spans[2*v.i+1]]
}

// spansOf finds the start and end in raw, a body Parse accepted, of each
// of its n values: the tape holds them in the order of the body (each
// container before what it holds, each member name before its value),
// which is the order their first bytes come in.
func spansOf(raw []byte, n int) []uint32 {
	spans := make([]uint32, 2*n)
	var open []int // the containers not yet closed
	k := 0         // the next value
	for i := 0; i < len(raw) && k <= n; {
		switch raw[i] {
		case ' ', '\t', '\n', '\r', ',', ':':
			i++
		case '{', '[':
			if k == n {
				return spans
			}
			spans[2*k] = uint32(i)
			open = append(open, k)
			k++
			i++
		case '}', ']':
			i++
			if len(open) > 0 {
				spans[2*open[len(open)-1]+1] = uint32(i)
				open = open[:len(open)-1]
			}
		case '"':
			j := i + 1
			for j < len(raw) && raw[j] != '"' {
				if raw[j] == '\\' {
					j++
				}
				j++
			}
			if k == n {
				return spans
			}
			spans[2*k], spans[2*k+1] = uint32(i), uint32(min(j+1, len(raw)))
			k++
			i = j + 1
		default: // a number or a literal
			j := i
			for j < len(raw) && !endsScalar[raw[j]] {
				j++
			}
			if k == n {
				return spans
			}
			spans[2*k], spans[2*k+1] = uint32(i), uint32(j)
			k++
			i = j
		}
	}
	return spans
}

// endsScalar are the bytes a number or literal ends at.
var endsScalar = [256]bool{' ': true, '\t': true, '\n': true, '\r': true, ',': true, ':': true, '}': true, ']': true, '[': true, '{': true, '"': true}
