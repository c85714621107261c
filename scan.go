package contractguard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/route"
	"github.com/contractguard/contractguard/internal/scan"
)

// scanRequest runs the vulnerability scan for the contracts of cs that
// have not had it on this request: the body with each one's opt-outs
// (a value is skipped only when every contract skips it), the query and
// the path parameters once.
func scanRequest(cs []*contract, in *request) *Violation {
	st := in.state
	in.resetDetails()
	// A contract without opt-outs scans all that the others would: it alone
	// is run, and nothing is scanned after it, on this pass or the next
	// (unless it found something: see below).
	if i := slices.IndexFunc(cs, func(c *contract) bool { return c.skip == nil }); i >= 0 {
		cs = cs[i : i+1]
	}
	scans := 0 // of the body, in this pass
	before := len(st.scanned)
	for _, c := range cs {
		skip := c.skip
		if skip != nil && skip.Off || slices.Contains(st.scanned, skip) || slices.Contains(st.scanned, nil) {
			continue
		}
		first := len(st.scanned) == 0
		if st.scanned == nil {
			st.scanned = st.scannedBuf[:0]
		}
		st.scanned = append(st.scanned, skip)
		var report failure.Reporter = in
		if scans++; scans > 1 {
			report = &rescan{l: &in.detailList} // the body again, with other opt-outs
		}
		if d := st.doc.Load(); d != nil {
			scan.Doc(d, skip, report)
		} else if scans == 1 { // a body the guard does not parse: its opt-outs do not apply, one scan finds all
			k, v := rawFinding(st.plain, in.header)
			if v != nil {
				st.scanned = st.scanned[:before]
				return v
			}
			if k != scan.None && report.Wants() {
				report.Add("", k.Message())
			}
		}
		if first {
			if in.rawQuery != "" {
				scan.Query(in.queryValues(), in)
				if in.queryBad {
					in.scanDroppedPairs()
				}
			}
			in.scanReadings()
		}
	}
	if len(in.details) == 0 {
		return nil
	}
	// A scan that found something covers no contract after it: those of
	// cs refuse the request, unless they learn, and then it goes on to
	// another contract that may enforce (a typed handler's, on its own
	// pass), which must find the same.
	st.scanned = st.scanned[:before]
	// One detail per path, the first reported: a body may hold thousands
	// of findings, and contracts with different opt-outs scan it more than
	// once.
	slices.SortStableFunc(in.details, func(a, b Detail) int { return strings.Compare(a.Path, b.Path) })
	in.details = slices.CompactFunc(in.details, func(a, b Detail) bool { return a.Path == b.Path })
	return newViolation(CodeVulnerabilityDetected, in.listed()...)
}

// scanDroppedPairs scans the query again as readers keep what
// r.URL.Query() drops, a pair with a ';' or a malformed escape: split at
// '&' alone with such escapes kept as sent (Express 4's qs, Fastify; a handler
// reading r.URL.RawQuery), or with the well-formed escapes around a
// malformed one decoded (Node's querystring: Express 5; "%3Cscript%3E%zz"
// is "<script>%zz" to it), and with ';' read as '&' as well
// (http.AllowQuerySemicolons in front of the handler, inside the guard).
// "?file=../../etc/passwd;x=1" is nothing to r.URL.Query(), and a file to
// them. It goes pair by pair: url.ParseQuery, which reads no pair of a
// query of more than 10,000, would not do, and a map of them all would
// cost a request's worth of memory many times over.
// Each reading finds again what r.URL.Query() kept: a finding at a path
// listed already is dropped as it is found (rescan), so that the repeats
// take no places in the list.
func (q *request) scanDroppedPairs() {
	again := &rescan{l: &q.detailList}
	scan.Pairs(route.FastifyPairs(q.rawQuery), again)
	scan.Pairs(route.NodeOnlyPairs(q.rawQuery), again)
	if strings.IndexByte(q.rawQuery, ';') >= 0 {
		scan.Pairs(route.GoPairs(q.rawQuery, "&;"), again)
	}
}

// isForm reports a form body (application/x-www-form-urlencoded), which
// the handler reads decoded: r.ParseForm, Express's urlencoded parser.
func isForm(h http.Header) bool {
	for _, ct := range h["Content-Type"] {
		mt, _, _ := strings.Cut(ct, ";")
		if strings.EqualFold(strings.TrimSpace(mt), "application/x-www-form-urlencoded") {
			return true
		}
	}
	return false
}

// rawFinding is the class of the first finding in a body the guard does
// not parse, read as a handler may read it: one string, if it is text; a
// form's names and values; a multipart form's fields; JSON, whatever the
// Content-Type says. A form or multipart body past what Go's readers read
// is refused (413) before it is read.
func rawFinding(body []byte, h http.Header) (scan.Class, *Violation) {
	form := isForm(h)
	if form { // refused unread: its bytes as one string are no cheaper to scan
		if v := formTooLarge(body); v != nil {
			return scan.None, v
		}
	}
	k := scan.None
	if utf8.Valid(body) {
		k = scan.Bytes(body)
	}
	if k == scan.None && form { // a form is text, whatever its bytes
		k = formFinding(body)
	}
	if k == scan.None { // a multipart form's fields, as r.FormValue reads them
		var tooLarge bool
		if k, tooLarge = multipartFinding(body, h); tooLarge {
			return scan.None, newViolation(CodePayloadTooLarge, Detail{Message: fmt.Sprintf(
				"multipart body must have at most %d parts and %d header lines", route.MultipartMaxParts, route.MultipartMaxHeaders)})
		}
	}
	if k == scan.None { // JSON to json.NewDecoder, whatever the Content-Type says
		k = jsonFinding(body)
	}
	return k, nil
}

// formTooLarge refuses a form body of more than route.FormMaxPairs
// pairs (413): url.ParseQuery reads none of them (r.ParseForm gives the
// handler no field), Express's urlencoded parser refuses more than 1,000
// (413 too), and reading each of a megabyte of '&' (the three readings of
// formFinding) cost 70 ms, of "a=%41%zz&" 210 ms, against 11 ms for a
// megabyte of JSON.
func formTooLarge(body []byte) *Violation {
	if !route.FormTooLarge(unsafe.String(unsafe.SliceData(body), len(body))) {
		return nil
	}
	return newViolation(CodePayloadTooLarge, Detail{Message: fmt.Sprintf("form body must have at most %d fields", route.FormMaxPairs)})
}

// formFinding is the class of the first finding in the names and values
// of a form body, read as r.ParseForm reads them and, pair by pair, as
// Express's parsers keep what that one drops (see scanDroppedPairs):
// "q=1%27%20or%20%271%27%3D%271" is "1' or '1'='1" to the handler, and
// nothing to a scan of the body's bytes as they are.
func formFinding(body []byte) scan.Class {
	var first firstFinding
	// The body's own bytes, not a copy of them: the scan keeps no part of
	// what it reads (scan.Bytes reads them so too).
	text := unsafe.String(unsafe.SliceData(body), len(body))
	scan.Pairs(route.GoPairs(text, "&"), &first)
	if first.message == "" {
		scan.Pairs(route.FastifyPairs(text), &first)
	}
	if first.message == "" {
		scan.Pairs(route.NodeOnlyPairs(text), &first)
	}
	return scan.ClassOf(first.message)
}

// multipartFinding is the class of the first finding in the fields of a
// multipart body (multipart/form-data; multipart/mixed, which
// r.MultipartReader reads) as the handler reads them (r.FormValue,
// r.MultipartForm): each part's form name, its file name as FileName
// gives it (and as sent, with the folders FileName drops, which other
// hosts keep), and its content, decoded as the multipart reader decodes
// it (quoted-printable), when that is UTF-8 text (a file that is not, an
// image, is no text a class reads, as a body that is not). A scan of the
// body's bytes does not see "1=27 OR =271=27=3D=271", which is
// "1' OR '1'='1" to the handler, nor anything of a form with an image in
// it, whose bytes are not UTF-8.
func multipartFinding(body []byte, h http.Header) (_ scan.Class, tooLarge bool) {
	mt, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" && mt != "multipart/mixed" || params["boundary"] == "" {
		return scan.None, false
	}
	var first firstFinding
	scan.Pairs(route.MultipartText(body, params["boundary"], &tooLarge), &first)
	if first.message != "" {
		return scan.ClassOf(first.message), false
	}
	return scan.None, tooLarge
}

// jsonFinding is the class of the first finding in the names and
// strings of a body the guard does not parse, read as JSON the way
// json.NewDecoder(r.Body) in a handler reads it, which does not look at
// the Content-Type: "{\"q\":\"1\\u0027 OR …\"}" sent as text/plain is
// "1' OR …" to that handler, and nothing to a scan of the bytes. Its
// escapes are decoded, a repeated name and invalid UTF-8 are allowed (as
// encoding/json allows them), and it is read up to where it stops being
// JSON (json.Decoder.Decode reads the first value and leaves the rest). A
// body that does not start as an object, an array or a string holds no
// string and is not read.
func jsonFinding(body []byte) scan.Class {
	// A UTF-8 byte order mark first is dropped, as Python's json.loads of
	// the body's bytes (Flask's get_json(force=True), whatever the
	// Content-Type), Express's and Fastify's JSON parsers drop one:
	// "\uFEFF{…}" is JSON to them.
	text := bytes.TrimLeft(bytes.TrimPrefix(body, []byte("\uFEFF")), " \t\r\n")
	if len(text) == 0 || text[0] != '{' && text[0] != '[' && text[0] != '"' || bytes.IndexByte(text, '"') < 0 {
		return scan.None // no string, no name: nothing to find, and a token walk of [0,0,…] costs
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	// The containers the next token is in: whether each is an object whose
	// next string is a name, and whether it is the value of a name
	// "constructor" (which then must not hold "prototype").
	type open struct{ object, name, constructor bool }
	var stack []open
	constructor := false // the last token was the name "constructor"
	for {
		tok, err := dec.Token()
		if err != nil {
			return scan.None // the end, or no more JSON
		}
		var top *open
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		after := constructor
		constructor = false
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if len(stack) == maxJSONNesting {
					return scan.None // deeper than json.Decoder.Decode reads: no handler gets it
				}
				stack = append(stack, open{object: t == '{', name: t == '{', constructor: after && t == '{'})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if top != nil && top.object && top.name {
				if top.constructor && t == "prototype" {
					return scan.PrototypePollution
				}
				if c := scan.Key(t); c != scan.None {
					return c
				}
				top.name, constructor = false, t == "constructor"
				continue
			}
			if c := scan.String(t); c != scan.None {
				return c
			}
		}
		// A value ended: what holds it, if an object, has a name next.
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].name = true
		}
	}
}

// maxJSONNesting is encoding/json's limit on nesting, past which Decode
// fails (Decoder.Token has none: a body of [[[… grew its stack with it).
const maxJSONNesting = 10000

// firstFinding is a failure.Reporter that takes the first finding only.
type firstFinding struct{ message string }

func (f *firstFinding) Wants() bool { return f.message == "" }

func (f *firstFinding) Add(_, message string) {
	if f.message == "" {
		f.message = message
	}
}

// scanReadings scans the path parameters: the router's, or the pattern's
// without building Params' map; those of every reading of the path that
// matched (request.views), and the query of one that reads it from the
// path. The readings find again what another found (a parameter of one
// name; the request's query string, which a reading with a query of its
// own reads after that): a finding at a path listed already is dropped as
// it is found (rescan), so that the repeats take no places in the list.
func (q *request) scanReadings() {
	if len(q.views) == 0 {
		for name, v := range q.EachParam {
			scan.Param(name, v, q)
		}
		return
	}
	again := &rescan{l: &q.detailList}
	for i := range q.views {
		q.useView(i)
		for name, v := range q.EachParam {
			scan.Param(name, v, again)
		}
		if q.ownQuery {
			scan.Query(q.viewQueryValues(), again)
		}
	}
	q.useView(0)
}

// rescan reports the findings of a body scanned again in one pass, with
// the opt-outs of another contract, or of a query read again as readers
// that keep what url.ParseQuery drops read it, into l: what the first
// scan found there is found again, and took places in the list (and, on a full
// list, said that more failures were not listed) for nothing. A finding
// at a path listed already is dropped; to tell, a full list still looks
// at up to maxDetails findings before it notes one it does not take.
type rescan struct {
	l      *detailList
	probes int // findings looked at while the list was full
}

func (r *rescan) Wants() bool {
	switch {
	case r.l.hasRoom():
		return true
	case r.probes < maxDetails:
		r.probes++
		return true
	}
	r.l.unlisted = true
	return false
}

func (r *rescan) Add(path, message string) {
	for _, d := range r.l.details {
		if d.Path == path {
			return
		}
	}
	if !r.l.hasRoom() {
		r.l.unlisted = true
		return
	}
	r.l.Add(path, message)
}
