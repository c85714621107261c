// Package formats checks the string formats request bodies use most, on
// the string itself, allocating nothing (but IPv6 refusing a string that
// has the colons of an address): the schema's fast path uses them
// in place of santhosh-tekuri/jsonschema's checks (and is tested against
// those), the vulnerability scan to recognise values it need not read.
package formats

import (
	"net/netip"
	"strings"
)

// UUID reports 8-4-4-4-12 hex digits, either case.
func UUID(s string) bool {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !hex[s[i]] && i != 8 && i != 13 && i != 18 && i != 23 {
			return false
		}
	}
	return true
}

var hex = func() (t [256]bool) {
	for _, c := range "0123456789abcdefABCDEF" {
		t[c] = true
	}
	return t
}()

// Date reports a full-date of RFC 3339 (YYYY-MM-DD), with the days of its
// month, as time.Parse(time.DateOnly) accepts it.
func Date(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	y1, ok1 := twoDigits(s[0:2])
	y2, ok2 := twoDigits(s[2:4])
	m, ok3 := twoDigits(s[5:7])
	d, ok4 := twoDigits(s[8:10])
	if !ok1 || !ok2 || !ok3 || !ok4 || m < 1 || m > 12 || d < 1 {
		return false
	}
	return d <= daysIn(m, y1*100+y2)
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// DateTime reports an RFC 3339 date-time. A leap second (:60) is allowed only
// at 23:59 UTC, as the library allows it.
func DateTime(s string) bool {
	return len(s) >= 20 && (s[10] == 'T' || s[10] == 't') && Date(s[:10]) && clock(s[11:])
}

// clock reports hh:mm:ss, an optional fraction, then Z or ±hh:mm.
func clock(s string) bool {
	if len(s) < 9 || s[2] != ':' || s[5] != ':' {
		return false
	}
	h, ok1 := twoDigits(s[0:2])
	m, ok2 := twoDigits(s[3:5])
	sec, ok3 := twoDigits(s[6:8])
	if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || sec > 60 {
		return false
	}
	s = s[8:]
	if rest, ok := strings.CutPrefix(s, "."); ok {
		n := 0
		for n < len(rest) && '0' <= rest[n] && rest[n] <= '9' {
			n++
		}
		if n == 0 {
			return false
		}
		s = rest[n:]
	}
	if s != "Z" && s != "z" {
		if len(s) != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':' {
			return false
		}
		zh, ok1 := twoDigits(s[1:3])
		zm, ok2 := twoDigits(s[4:6])
		if !ok1 || !ok2 || zh > 23 || zm > 59 {
			return false
		}
		off := zh*60 + zm
		if s[0] == '+' {
			off = -off
		}
		hm := h*60 + m + off // in UTC
		if hm < 0 {
			hm += 24 * 60
		}
		h, m = hm/60, hm%60
	}
	return sec < 60 || h == 23 && m == 59
}

func twoDigits(s string) (int, bool) {
	if s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return 0, false
	}
	return int(s[0]-'0')*10 + int(s[1]-'0'), true
}

// IPv4 reports four decimals 0-255 without leading zeros, digits and dots only.
func IPv4(s string) bool {
	groups, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
			continue
		}
		g := s[start:i]
		if len(g) == 0 || len(g) > 3 || len(g) > 1 && g[0] == '0' {
			return false
		}
		n := 0
		for j := 0; j < len(g); j++ {
			n = n*10 + int(g[j]-'0')
		}
		if n > 255 {
			return false
		}
		groups++
		start = i + 1
	}
	return groups == 4
}

// IPv6 reports an IPv6 address without a zone (IPv4-mapped forms included).
// An address has "::", or seven colons, or six before an IPv4 address;
// other strings are refused before netip.ParseAddr, whose refusal
// allocates (so "10:15" costs nothing).
func IPv6(s string) bool {
	colons, double := 0, false
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			colons++
			double = double || i > 0 && s[i-1] == ':'
		}
	}
	if !double && colons != 7 && !(colons == 6 && strings.IndexByte(s, '.') >= 0) {
		return false
	}
	a, err := netip.ParseAddr(s)
	return err == nil && a.Zone() == ""
}

// IsHex reports a hexadecimal digit.
func IsHex(c byte) bool {
	return hex[c]
}

// Unhex is the value of the hexadecimal digit c (IsHex(c)).
func Unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c&^0x20 - 'A' + 10
}

// Email reports an address as santhosh-tekuri/jsonschema's email format
// reads it (at most 254 bytes; a local part of at most 64, quoted or of
// letters, digits and !#$%&'*+-/=?^_`{|}~ and single inner dots; a
// hostname as domain), with a local part that is not empty (the rule the
// schema package adds). A domain in brackets, an IP literal, is not
// decided here: literal is true, and the caller asks the library.
func Email(s string) (ok, literal bool) {
	at := strings.LastIndexByte(s, '@')
	if len(s) > 254 || at <= 0 {
		return false, false
	}
	local, domain := s[:at], s[at+1:]
	if len(local) > 64 {
		return false, false
	}
	if len(local) > 1 && local[0] == '"' && local[len(local)-1] == '"' {
		if strings.ContainsAny(local[1:len(local)-1], `\"`) {
			return false, false
		}
	} else {
		if local[0] == '.' || local[len(local)-1] == '.' || strings.Contains(local, "..") {
			return false, false
		}
		for i := 0; i < len(local); i++ {
			if c := local[i]; !isAlnum(c) && strings.IndexByte(".!#$%&'*+-/=?^_`{|}~", c) < 0 {
				return false, false
			}
		}
	}
	if len(domain) > 1 && domain[0] == '[' && domain[len(domain)-1] == ']' {
		return false, true
	}
	return Hostname(domain), false
}

// Hostname reports a hostname as santhosh-tekuri/jsonschema's hostname
// format reads it: at most 253 bytes without a trailing dot, labels of 1
// to 63 letters, digits and hyphens, not starting or ending with one.
func Hostname(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if len(s) > 253 {
		return false
	}
	start := 0 // of the current label
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			if c := s[i]; !isAlnum(c) && c != '-' {
				return false
			}
			continue
		}
		label := s[start:i]
		if len(label) < 1 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		start = i + 1
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
