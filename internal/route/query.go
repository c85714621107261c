package route

import (
	"bytes"
	"errors"
	"io"
	"iter"
	"mime"
	"mime/multipart"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/contractguard/contractguard/internal/formats"
)

// QueryAsFastify parses a query string as fast-querystring, Fastify's
// parser, does, where url.ParseQuery drops what it finds malformed: pairs
// are split at '&' alone (a ';' belongs to its name or value), a pair at
// its first '=', '+' is a space, and a name or value whose escapes do not
// decode to UTF-8 is kept as sent. It reads the query of the reading that
// ends a path at its first ';' (Hit.OwnQuery).
func QueryAsFastify(s string) url.Values {
	vals := url.Values{}
	for k, v := range FastifyPairs(s) {
		vals[k] = append(vals[k], v)
	}
	return vals
}

// FastifyPairs are the names and values of QueryAsFastify, in the order
// of s, without a map of them.
func FastifyPairs(s string) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for s != "" {
			var pair string
			pair, s, _ = strings.Cut(s, "&")
			if pair == "" {
				continue
			}
			k, v, _ := strings.Cut(pair, "=")
			if !yield(decodeComponent(k), decodeComponent(v)) {
				return
			}
		}
	}
}

// NodePairs are the names and values of a query string as Node's
// querystring reads them (Express 5's query parser, and body-parser's
// urlencoded parser with extended: false), in the order of s: pairs split
// at '&' alone, a pair at its first '=', '+' a space, and, where an escape
// is malformed (decodeURIComponent fails, and unescapeBuffer decodes what
// it can), every escape of two hex digits decoded and the malformed ones
// kept as sent: "%3Cscript%3E%zz" is "<script>%zz" to it, dropped by
// url.ParseQuery and kept whole, encoded, by FastifyPairs; what is then
// not UTF-8 is read as Node's Buffer reads it, each maximal invalid
// sequence one U+FFFD (toValidUTF8).
func NodePairs(s string) iter.Seq2[string, string] { return nodePairs(s, false) }

// NodeOnlyPairs are the pairs of NodePairs that FastifyPairs reads
// otherwise, or may: those with a malformed escape, or an escape of a
// byte beyond ASCII (which fast-querystring keeps as sent where it is not
// UTF-8). Node reads every other pair as fast-querystring does.
func NodeOnlyPairs(s string) iter.Seq2[string, string] { return nodePairs(s, true) }

func nodePairs(s string, only bool) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for s != "" {
			var pair string
			pair, s, _ = strings.Cut(s, "&")
			if pair == "" || only && !unlikeFastify(pair) {
				continue
			}
			k, v, _ := strings.Cut(pair, "=")
			if !yield(unescapeLenient(k), unescapeLenient(v)) {
				return
			}
		}
	}
}

// unlikeFastify reports a pair with a malformed escape or an escape of a
// byte beyond ASCII (NodeOnlyPairs).
func unlikeFastify(pair string) bool {
	for i := strings.IndexByte(pair, '%'); i >= 0; {
		if i+2 >= len(pair) || !formats.IsHex(pair[i+1]) || !formats.IsHex(pair[i+2]) || formats.Unhex(pair[i+1]) >= 8 {
			return true
		}
		j := strings.IndexByte(pair[i+3:], '%')
		if j < 0 {
			break
		}
		i += 3 + j
	}
	return false
}

// unescapeLenient is s with '+' read as a space and every escape of two
// hex digits decoded, a malformed escape kept as it is (NodePairs).
func unescapeLenient(s string) string {
	s = strings.ReplaceAll(s, "+", " ")
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	b, _ := unescapeBytes(s)
	return toValidUTF8(b)
}

// unescapeBytes is s with every escape of two hex digits decoded, and
// whether all its escapes were: a malformed one is kept as it is.
func unescapeBytes(s string) (b []byte, whole bool) {
	b, whole = make([]byte, 0, len(s)), true
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && formats.IsHex(s[i+1]) && formats.IsHex(s[i+2]) {
			b = append(b, formats.Unhex(s[i+1])<<4|formats.Unhex(s[i+2]))
			i += 2
			continue
		}
		whole = whole && s[i] != '%'
		b = append(b, s[i])
	}
	return b, whole
}

// toValidUTF8 is b as a string, each maximal invalid subsequence (as the
// WHATWG decoder, and so Node's Buffer, reads it) replaced by U+FFFD.
func toValidUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var out strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r != utf8.RuneError || n > 1 {
			out.Write(b[:n])
			b = b[n:]
			continue
		}
		out.WriteRune(utf8.RuneError)
		b = b[invalidPrefix(b):]
	}
	return out.String()
}

// invalidPrefix is the length of the maximal subpart of b's first
// sequence, which does not decode: a lead byte and the continuation
// bytes that could follow it, at least 1.
func invalidPrefix(b []byte) int {
	lo, hi, need := byte(0x80), byte(0xBF), 0
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		lo, need = 0xA0, 2
	case c == 0xED:
		hi, need = 0x9F, 2
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		lo, need = 0x90, 3
	case c == 0xF4:
		hi, need = 0x8F, 3
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	default:
		return 1
	}
	n := 1
	for ; n <= need && n < len(b); n++ {
		if b[n] < lo || b[n] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return n
}

// sentFileName is the file name of part p as the client sent it:
// FileName drops its folders (filepath.Base, as RFC 7578 asks), while
// werkzeug's FileStorage.filename, Spring's getOriginalFilename and
// formidable's originalFilename give a handler
// "../../var/www/html/shell.php" whole.
func sentFileName(p *multipart.Part) string {
	_, params, err := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
	if err != nil {
		return ""
	}
	return params["filename"]
}

// looseDisposition is the values of every name and filename parameter
// (name*, filename* too, percent-decoded) of a Content-Disposition, read
// loosely: split at the semicolons outside quotes, a quoted value
// unquoted, whatever mime.ParseMediaType refuses (a parameter twice).
// And, where it holds RFC 2231 continuations (filename*0, filename*1*),
// the name and file name werkzeug reads: each piece appended, in the
// order written, to the last name or name* before it (Go joins them in
// index order, and stops at a missing index).
func looseDisposition(v string) (names, files []string) {
	var joined [2]strings.Builder // werkzeug's name and filename
	var continued [2]bool
	param := func(p string) {
		k, val, ok := strings.Cut(p, "=")
		if !ok {
			return
		}
		k = strings.ToLower(strings.TrimSpace(k))
		val = strings.TrimSpace(val)
		base, index, piece := strings.Cut(k, "*")
		extended := strings.HasSuffix(k, "*") // name*, filename*0*: charset'language'percent-encoded (RFC 5987, 2231)
		index = strings.TrimSuffix(index, "*")
		if base != "name" && base != "filename" || index != "" && !allDigits(index) {
			return
		}
		piece = piece && index != ""
		quoted := len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"'
		if quoted {
			var b strings.Builder
			for i := 1; i < len(val)-1; i++ {
				if val[i] == '\\' && i+1 < len(val)-1 {
					i++
				}
				b.WriteByte(val[i])
			}
			val = b.String()
		}
		if extended {
			// charset'language'value (RFC 2231, werkzeug, Go): the value
			// is what follows the second quote, quotes and all
			// (utf-8''%2e%2e%2fshell'php is ../shell'php). Quoted, it is
			// no such triple to werkzeug, which takes it whole, unquoted
			// (filename*="../x" is ../x).
			if _, rest, ok := strings.Cut(val, "'"); ok && !quoted {
				if _, v, ok := strings.Cut(rest, "'"); ok {
					val = v
				}
			}
			if d, err := url.PathUnescape(val); err == nil {
				val = d
			}
		}
		w := 0
		if base == "filename" {
			w = 1
		}
		if piece {
			joined[w].WriteString(val)
			continued[w] = true
			return
		}
		joined[w].Reset()
		joined[w].WriteString(val)
		if w == 0 {
			names = append(names, val)
		} else {
			files = append(files, val)
		}
	}
	start, quoted := 0, false
	for i := 0; i < len(v); i++ {
		switch {
		case v[i] == '\\' && quoted:
			i++
		case v[i] == '"':
			quoted = !quoted
		case v[i] == ';' && !quoted:
			param(v[start:i])
			start = i + 1
		}
	}
	param(v[start:])
	if continued[0] {
		names = append(names, joined[0].String())
	}
	if continued[1] {
		files = append(files, joined[1].String())
	}
	return names, files
}

func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// FormMaxPairs is url.ParseQuery's bound on the pairs of a query or a
// form body (GODEBUG urlmaxqueryparams at its default): of more, it reads
// none, and r.ParseForm gives the handler no field of the body.
const FormMaxPairs = 10000

// FormTooLarge reports a query or form body of more pairs than
// url.ParseQuery reads (FormMaxPairs), counted as it counts them: its
// '&' and one.
func FormTooLarge(s string) bool { return strings.Count(s, "&") >= FormMaxPairs }

// GoPairs are the pairs of query split at each of seps, as url.ParseQuery
// reads them: a pair with a ';' left in it, or a malformed escape,
// dropped; with seps "&;", as it reads them once http.AllowQuerySemicolons
// has made every ';' a '&'.
func GoPairs(query, seps string) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for query != "" {
			var pair string
			if i := strings.IndexAny(query, seps); i >= 0 {
				pair, query = query[:i], query[i+1:]
			} else {
				pair, query = query, ""
			}
			k, v, _ := strings.Cut(pair, "=")
			k, err1 := url.QueryUnescape(k)
			v, err2 := url.QueryUnescape(v)
			if pair == "" || strings.IndexByte(pair, ';') >= 0 || err1 != nil || err2 != nil {
				continue
			}
			if !yield(k, v) {
				return
			}
		}
	}
}

// decodeComponent is s with '+' read as a space and its escapes decoded,
// or s as it is, but for the '+', when an escape is malformed or what they
// decode to is not UTF-8 (as fast-decode-uri-component gives up).
func decodeComponent(s string) string {
	s = strings.ReplaceAll(s, "+", " ")
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	if b, whole := unescapeBytes(s); whole && utf8.Valid(b) {
		return string(b)
	}
	return s
}

// MultipartMaxParts and MultipartMaxHeaders are the bounds of
// multipart.Reader.ReadForm (r.ParseMultipartForm, r.FormValue), GODEBUG
// multipartmaxparts and multipartmaxheaders at their defaults: a form of
// more parts, with a part of more header lines, or with file parts of more
// header lines in all, is multipart.ErrMessageTooLarge to it, and the
// handler gets none of its fields.
const (
	MultipartMaxParts   = 1000
	MultipartMaxHeaders = 10000
)

// MultipartFields are the fields of a multipart body as a handler reads
// them (r.FormValue, r.MultipartForm, r.MultipartReader), in order: for
// each part, its form name with the file name FileName gives (a file
// part), then with its content, decoded as the multipart reader decodes it
// (quoted-printable); as far as the body reads as multipart. A body cut
// short (read up to a size limit) is read as if a closing delimiter
// followed it: the reader holds back a part's last bytes until it sees
// what follows them, and they are the part's (after a whole body's own
// closing delimiter, the one added is not read). Each content is a copy:
// at most the body's size.
//
// It reads no further than ReadForm does, and sets *tooLarge (when not
// nil) where ReadForm fails for the bounds above: at the part one over
// MultipartMaxParts, or one with more header lines than are left, which
// is not yielded. A streaming handler (r.MultipartReader, busboy) reads
// on: a caller that finds *tooLarge set must not take what was yielded
// for all the body holds. Reading each of a megabyte's 100,000 empty parts
// cost 84 ms.
func MultipartFields(body []byte, boundary string, tooLarge *bool) iter.Seq2[string, string] {
	return multipartFields(body, boundary, tooLarge, false)
}

// MultipartText is MultipartFields with a content that is not UTF-8 (a
// file, an image: no text) given as "", and every name and file name as
// it is, whatever its bytes: what the client named a part or a file is
// text to the handler that shows it. A file name is given also as sent,
// when FileName dropped folders from it (see sentFileName).
func MultipartText(body []byte, boundary string, tooLarge *bool) iter.Seq2[string, string] {
	return multipartFields(body, boundary, tooLarge, true)
}

// multipartFields is MultipartFields, or, with text, MultipartText.
func multipartFields(body []byte, boundary string, tooLarge *bool, text bool) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		if boundary == "" {
			return
		}
		mr := multipart.NewReader(io.MultiReader(bytes.NewReader(body), strings.NewReader("\r\n--"+boundary+"--\r\n")), boundary)
		var buf bytes.Buffer           // read into, for all parts: a copy of its length is yielded
		headers := MultipartMaxHeaders // left for the file parts, as ReadForm counts them
		over := func() {
			if tooLarge != nil {
				*tooLarge = true
			}
		}
		for parts := 0; ; parts++ {
			p, err := mr.NextPart()
			if errors.Is(err, multipart.ErrMessageTooLarge) { // a part of over MultipartMaxHeaders lines
				over()
			}
			if err != nil {
				return
			}
			lines := 0
			for _, v := range p.Header {
				lines += len(v)
			}
			if parts == MultipartMaxParts || lines > headers {
				over()
				return
			}
			name := p.FormName()
			fn := p.FileName()
			if fn != "" && name != "" {
				headers -= lines
			}
			if fn != "" && !yield(name, fn) {
				return
			}
			sent := ""
			if text && fn != "" {
				if sent = sentFileName(p); sent != fn && !yield(name, sent) {
					return
				}
			}
			if ds := p.Header["Content-Disposition"]; text && len(ds) > 0 && (name == "" || strings.IndexByte(ds[0], '*') >= 0 || len(ds) > 1) {
				// A disposition Go cannot parse (a parameter given twice),
				// or of a type other than form-data (attachment; name=…,
				// which FormName reads as no name, werkzeug and Django as
				// the name), names no part to Go, which skips it; hosts
				// that keep the first or the last of a parameter read a
				// name and a file name there, whatever the type: every one
				// written is text to them. So is a
				// plain name or filename that Go's reading of a name* or
				// filename* beside it replaced (werkzeug and Django keep
				// the last written, Python's cgi the plain one), and any
				// of a second Content-Disposition line, which Go does not
				// read and Django does (the last line of each header).
				for _, d := range ds {
					names, files := looseDisposition(d)
					for _, n := range names {
						if n != name && !yield(n, "") {
							return
						}
					}
					for _, f := range files {
						if f != fn && f != sent && !yield("", f) {
							return
						}
					}
				}
			}
			// Not io.ReadAll's buffer, which is 512 bytes at least: a
			// caller keeps the strings (the sink's inputs), and a body of
			// one-byte parts held 50 times its size.
			buf.Reset()
			_, err = buf.ReadFrom(p)
			content := buf.Bytes()
			if text && !utf8.Valid(content) {
				content = nil
			}
			if !yield(name, string(content)) || err != nil {
				return
			}
		}
	}
}
