package jsonbody

// The values of short number literals, read by one loop where strconv
// takes its general path: what the schema's bounds and the rules read
// from a body's numbers, which are mostly short (2, 19.99). Each is held
// to strconv by TestShortDecimal_AsParseFloat, TestShortInt_AsParseInt and
// FuzzShortNumbersVsStrconv.

// ShortInt is the value of an integer literal of at most 18 digits,
// optionally negative (2, -15): what strconv.ParseInt returns, and no
// 18-digit literal overflows an int64. ok is false for any other text.
func ShortInt(lit string) (i int64, ok bool) {
	digits := lit
	if len(lit) > 0 && lit[0] == '-' {
		digits = lit[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	for j := 0; j < len(digits); j++ {
		c := digits[j]
		if c < '0' || c > '9' {
			return 0, false
		}
		i = i*10 + int64(c-'0')
	}
	if len(digits) < len(lit) {
		i = -i
	}
	return i, true
}

// pow10 are the powers of ten ShortDecimal divides by.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// ShortDecimal is the float64 of a number literal without exponent and of
// at most 15 digits (19.99, -0.5, 12): its digits as an integer, exact
// below 2^53, divided by a power of ten, exact up to 1e22, which IEEE
// division rounds correctly: what strconv.ParseFloat returns, without its
// general path. ok is false for any other text.
func ShortDecimal(lit string) (f float64, ok bool) {
	s := lit
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	var mantissa uint64
	n, scale, point := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			mantissa = mantissa*10 + uint64(c-'0')
			n++
			if point {
				scale++
			}
		case c == '.' && !point:
			point = true
		default:
			return 0, false // an exponent
		}
	}
	if n == 0 || n > 15 {
		return 0, false
	}
	f = float64(mantissa) / pow10[scale]
	if neg {
		f = -f
	}
	return f, true
}
