package scan

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/contractguard/contractguard/internal/formats"
)

// Path traversal: .. segments and their encoded forms, NUL bytes, and
// sensitive paths.

// sensitivePaths are files and folders a request value has no business
// naming, matched without regard to case after decoding, with \ read as
// /, at the start of the value or after a /. A name that does not end in /
// must end there or before a byte that is not a letter or digit (.env,
// not .envelope).
var sensitivePaths = []string{
	"etc/passwd", "etc/shadow", "etc/group", "etc/hosts", "etc/issue", "etc/sudoers",
	"proc/self/", "proc/version", "proc/cmdline", ".ssh/", "id_rsa", "id_dsa", "id_ed25519",
	".bash_history", ".htpasswd", ".htaccess", ".env", ".git/", "var/log/", ".aws/", ".kube/",
	"etc/ssh/", "web-inf/", "c:/windows/", "windows/system32", "win.ini", "boot.ini", "system.ini",
	"web.config", "ntuser.dat", "wp-config.php", "inetpub/", "global.asa",
}

// pathTraversal reports a .. segment (../ or ..\ and their percent-,
// double- and overlong-encoded forms; see dotDotSegment), a NUL byte, or
// a sensitive path.
func pathTraversal(s string, f uint32) bool {
	if f&hasOverlong != 0 {
		// The lead bytes of an overlong form or of ．／＼∕∖ are also those
		// of Thai, a dash, a quote, an ellipsis: a separator only when the
		// form is there ("id_rsa — my key" is a bare name).
		if hasRawOverlong(s) {
			f |= hasSep
		} else {
			f &^= hasOverlong
		}
	}
	if f&hasPath == 0 {
		return false // a bare name (id_rsa) is a file name, not a path
	}
	if f&hasNUL != 0 {
		return true
	}
	if f&hasSep == 0 {
		// Nothing to decode and no separator: a .. segment is the whole
		// value, a sensitive name without a / its start. (The general path
		// gives the same answer, for ~1.5k more instructions on the order
		// body's dotted values.)
		return urlDotDot(s) || sensitiveStart(s, &sensitiveNamesByFirst)
	}
	d, encoded := s, f&(hasPercent|hasOverlong) != 0 // else decodePath(s) is s
	if encoded {
		d = decodePath(s)
		if strings.IndexByte(d, 0) >= 0 {
			return true
		}
	}
	if encoded || f&hasBackslash != 0 {
		d = strings.ReplaceAll(d, `\`, "/")
	}
	return dotDotSegment(d) && !openInterval(d) || sensitivePath(d)
}

// sensitiveByFirst are sensitivePaths by their first byte, lower case,
// and sensitiveNamesByFirst those without a /: all a value without one can
// hold.
var sensitiveByFirst, sensitiveNamesByFirst = func() (all, names [256][]string) {
	for _, p := range sensitivePaths {
		all[p[0]] = append(all[p[0]], p)
		if !strings.Contains(p, "/") {
			names[p[0]] = append(names[p[0]], p)
		}
	}
	return all, names
}()

// sensitivePath reports one of sensitivePaths at the start of d or after
// a /.
func sensitivePath(d string) bool {
	for i := -1; i < len(d)-1; {
		rest := d[i+1:]
		if sensitiveStart(rest, &sensitiveByFirst) {
			return true
		}
		j := strings.IndexByte(rest, '/')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// sensitiveStart reports one of the paths of byFirst (by their first
// byte) at the start of d.
func sensitiveStart(d string, byFirst *[256][]string) bool {
	if d == "" {
		return false
	}
	c := d[0]
	if 'A' <= c && c <= 'Z' {
		c += 'a' - 'A'
	}
	for _, p := range byFirst[c] {
		n, ok := pathPrefixFold(d, p)
		if ok && (p[len(p)-1] == '/' || len(d) == n || !isAlnum(d[n])) {
			return true
		}
	}
	return false
}

// pathPrefixFold reports whether d starts with the path p (lower case),
// without regard to case, and how much of d that is. Where p has a /, d
// may have more, and ./ steps: etc//passwd and etc/./passwd name
// etc/passwd.
func pathPrefixFold(d, p string) (int, bool) {
	i := 0
	for j := range len(p) {
		if i == len(d) {
			return 0, false
		}
		c := d[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != p[j] {
			return 0, false
		}
		i++
		for c == '/' && i < len(d) && (d[i] == '/' || d[i] == '.' && i+1 < len(d) && d[i+1] == '/') {
			if d[i] == '.' {
				i++
			}
			i++
		}
	}
	return i, true
}

// dotDotSegment reports a path segment that is ".." (also before a ? or
// a #, see urlDotDot), or, before a /,
// ".." with a ;parameter (..;/ is ../ to Tomcat and Spring), "...."
// before an empty segment or "..." before a "." one (....// and ..././,
// which are ../ once a filter has taken ../ out of them), or dots before
// more dots (/.../.../, which old Windows read as ../../): Home/.../x and
// an ellipsis are not.
func dotDotSegment(d string) bool {
	if !strings.Contains(d, "..") {
		return false
	}
	for {
		seg, rest, more := strings.Cut(d, "/")
		if urlDotDot(seg) {
			return true
		}
		if !more {
			return false
		}
		if strings.HasPrefix(seg, "..") && stepUp(seg, rest) {
			return true
		}
		d = rest
	}
}

// urlDotDot reports a segment that is "..", or ".." before a ? or a #,
// where a URL's path ends: WHATWG's parser and RFC 3986 read api/..?x and
// ..#x as a step up, as they read api/.. (a file name may hold a ?, and
// "Wait..?" is no segment).
func urlDotDot(seg string) bool {
	return seg == ".." || len(seg) > 2 && seg[:2] == ".." && (seg[2] == '?' || seg[2] == '#')
}

// stepUp reports whether seg, a segment that starts with .. and that rest
// follows after a /, is one of the other forms dotDotSegment names.
func stepUp(seg, rest string) bool {
	next, _, _ := strings.Cut(rest, "/")
	switch dots, _, param := strings.Cut(seg, ";"); {
	case param:
		return dots == ".." // ..;/
	case seg == "...." && strings.HasPrefix(rest, "/"), // ....//
		seg == "..." && next == ".": // ..././
		return true
	}
	return strings.Trim(seg, ".") == "" && len(next) >= 2 && strings.Trim(next, ".") == "" // /.../.../
}

// openInterval reports an ISO 8601 time interval open at one end, as the
// datetime parameter of OGC API Features writes one: 2018-02-12/.. or
// ../2018-03-18T12:31:12Z.
func openInterval(d string) bool {
	t, ok := strings.CutSuffix(d, "/..")
	if !ok {
		t, ok = strings.CutPrefix(d, "../")
	}
	return ok && (formats.Date(t) || formats.DateTime(t))
}

// decodePath undoes up to three rounds of percent-encoding, with the
// overlong UTF-8 forms of . / \ and IIS's %uXXXX, as a server that decodes
// too often would; and overlong forms already decoded to raw bytes, as a
// query value arrives.
func decodePath(s string) string {
	s = undoRawOverlongs(s)
	for range 3 {
		if strings.IndexByte(s, '%') < 0 {
			break
		}
		next := percentDecode(s)
		if next == s {
			break
		}
		s = next
	}
	return undoRawOverlongs(s) // %c0%ae half encoded: \xc0%ae
}

var overlong = map[string]byte{
	"%c0%ae": '.', "%c0%2e": '.', "%e0%80%ae": '.', "%c0%af": '/', "%e0%80%af": '/', "%c0%2f": '/',
	"%c1%9c": '\\', "%c1%1c": '\\', "%c0%5c": '\\', "%c1%af": '/',
	"%u002e": '.', "%u002f": '/', "%u005c": '\\', "%u2215": '/', "%u2216": '\\', "%uff0e": '.', "%uff0f": '/',
	"%uff3c": '\\',
}

// undoRawOverlongs is s with the raw overlong forms of overlong replaced,
// and the characters of its %uXXXX forms beyond ASCII (fullwidth ．／＼,
// ∕ and ∖), which come so in a JSON string or a decoded query value (and
// itself when it has none: 0xE0, 0xE2 and 0xEF lead real UTF-8 too, in
// Thai or Hindi, dashes and quotes, CJK punctuation).
func undoRawOverlongs(s string) string {
	if !hasRawOverlong(s) {
		return s
	}
	return rawOverlongs.Replace(s)
}

// hasRawOverlong reports whether s may hold what undoRawOverlongs
// replaces.
func hasRawOverlong(s string) bool {
	return strings.IndexByte(s, 0xc0) >= 0 || strings.IndexByte(s, 0xc1) >= 0 || strings.Contains(s, "\xe0\x80") ||
		hasWide(s)
}

// hasWide reports one of the characters ．／＼∕∖ in s.
func hasWide(s string) bool {
	if !strings.Contains(s, "\xef\xbc") && !strings.Contains(s, "\xe2\x88") {
		return false
	}
	for _, w := range [...]string{"．", "／", "＼", "∕", "∖"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// rawOverlongs replaces the overlong UTF-8 forms of overlong, decoded to
// raw bytes, and the characters beyond ASCII of its %uXXXX forms, with
// what they stand for.
var rawOverlongs = func() *strings.Replacer {
	var pairs []string
	for form, c := range overlong {
		if form[1] == 'u' {
			if r, err := strconv.ParseUint(form[2:], 16, 32); err == nil && r >= utf8.RuneSelf {
				pairs = append(pairs, string(rune(r)), string(c))
			}
			continue
		}
		var raw []byte
		for i := 0; i < len(form); i += 3 { // %xx%xx…
			raw = append(raw, formats.Unhex(form[i+1])<<4|formats.Unhex(form[i+2]))
		}
		pairs = append(pairs, string(raw), string(c))
	}
	return strings.NewReplacer(pairs...)
}()

// overlongAt is the byte an overlong form at the start of s stands for,
// and its length; n is 0 when s starts with none.
func overlongAt(s string) (c byte, n int) {
	if len(s) < 6 || strings.IndexByte("cCeEuU", s[1]) < 0 {
		return 0, 0
	}
	var lower [9]byte
	for _, n := range [...]int{9, 6} {
		if n <= len(s) {
			for i := range n {
				lower[i] = s[i]
				if 'A' <= s[i] && s[i] <= 'Z' {
					lower[i] += 'a' - 'A'
				}
			}
			if c, ok := overlong[string(lower[:n])]; ok { // a lookup that does not copy
				return c, n
			}
		}
	}
	return 0, 0
}

func percentDecode(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if c, n := overlongAt(s[i:]); n > 0 {
			b.WriteByte(c)
			i += n - 1
			continue
		}
		if i+2 < len(s) && formats.IsHex(s[i+1]) && formats.IsHex(s[i+2]) {
			b.WriteByte(formats.Unhex(s[i+1])<<4 | formats.Unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte('%')
	}
	return b.String()
}
