package contractguard

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"slices"
	"strings"
	"unicode"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
)

// readBody reads the body of a request: Check's as given, or the whole of
// r.Body, at most limit bytes, and decodes it as its Content-Encoding
// says: raw is the body as it came (what the handler gets), plain what
// the contracts check (raw itself, unless it was encoded). With a body too
// large, or one whose reader failed part way, it returns the part it read
// as raw, for learning mode to give back, and no plain; with one that does
// not decode, what decoded.
func readBody(in *input, limit int64) (raw, plain []byte, v *Violation) {
	if raw, v = readRaw(in, limit); v != nil {
		return raw, nil, v
	}
	if len(raw) == 0 {
		return raw, raw, nil
	}
	plain, v = decodeBody(in.header, raw, limit)
	return raw, plain, v
}

// readRaw reads the body as it came, at most limit bytes; with a
// violation, what it read before it stopped.
func readRaw(in *input, limit int64) ([]byte, *Violation) {
	if in.r == nil {
		if int64(len(in.body)) > limit {
			return nil, tooLarge(limit)
		}
		return in.body, nil
	}
	r := in.r
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if r.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	// Read at most limit+1 bytes: one more than allowed proves the body too
	// large without reading the rest.
	most := int(min(overLimit(limit), math.MaxInt))
	// Room for the body its Content-Length announces (+1: EOF is seen
	// without growing), up to maxPrealloc: past that the buffer grows with
	// what arrives, so that a header alone does not allocate what the
	// client never sends.
	size := 512
	if r.ContentLength > 0 {
		size = int(min(r.ContentLength, maxPrealloc)) + 1
	}
	buf := make([]byte, 0, min(size, most))
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(cap(buf), most-len(buf)))
		}
		n, err := r.Body.Read(buf[len(buf):min(cap(buf), most)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return buf, tooLarge(limit)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			// What was read goes back with the violation: a request that
			// passes anyway (learning) reaches the handler with these bytes,
			// then the error, as it came.
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return buf, tooLarge(mbe.Limit)
			}
			return buf, newViolation(CodeMalformedJSON, Detail{Message: "the request body could not be read"})
		}
	}
}

// maxPrealloc is the most of a body's announced length readRaw allocates
// before the bytes arrive. At the default limit (1 MiB) a client that
// announced a large body and sent nothing held a mebibyte per
// connection; past this the buffer doubles as bytes arrive, so that what
// a connection holds is at most twice what it sent, plus this.
const maxPrealloc = 64 << 10

// mediaType reads a request's Content-Type once. isJSON says whether the
// body is read as JSON on a contract without a schema: no Content-Type, or
// a JSON one. bad is why a contract with a schema refuses it (415): ""
// for no Content-Type, application/json or application/*+json in utf-8.
func mediaType(h http.Header) (isJSON bool, bad string) {
	vals := h["Content-Type"]
	if len(vals) == 0 || len(vals) == 1 && vals[0] == "application/json" {
		return true, ""
	}
	mt, params, err := mime.ParseMediaType(vals[0])
	isJSON = err == nil && isJSONType(mt)
	switch {
	case len(vals) > 1:
		bad = "more than one Content-Type header"
	case !isJSON:
		bad = "Content-Type must be application/json"
	default:
		// A charset in RFC 2231's form (charset*=utf-8''utf-8, charset*0=…)
		// is refused whatever it says: mime reads it over a plain charset=
		// beside it, which Express and Spring read instead (and decode the
		// body as: "charset=utf-7; charset*=utf-8''utf-8" is utf-8 here,
		// UTF-7 to express.json()).
		if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") || rfc2231Charset(vals[0]) {
			bad = "charset must be utf-8"
		}
	}
	return isJSON, bad
}

// rfc2231Charset reports whether a Content-Type has a charset parameter
// in RFC 2231's form: "charset*", in any letter case, after a ';' and
// the spaces mime skips (Unicode's too); not a parameter whose name only
// ends in charset (x-charset*=…, which is x-charset to mime).
func rfc2231Charset(ct string) bool {
	const name = "charset"
	for i := 0; i < len(ct); i++ {
		j := strings.IndexByte(ct[i:], '*')
		if j < 0 {
			return false
		}
		i += j
		if i >= len(name) && strings.EqualFold(ct[i-len(name):i], name) &&
			strings.HasSuffix(strings.TrimRightFunc(ct[:i-len(name)], unicode.IsSpace), ";") {
			return true
		}
	}
	return false
}

// namesJSON reports whether a request's (first) Content-Type names a JSON
// media type before its parameters, whether or not mime reads them:
// Express and Fastify parse "application/json; foo" as JSON, and
// Express reads its charset.
func namesJSON(h http.Header) bool {
	vals := h["Content-Type"]
	if len(vals) == 0 {
		return false
	}
	mt, _, _ := strings.Cut(vals[0], ";")
	return isJSONType(strings.ToLower(strings.TrimSpace(mt)))
}

func isJSONType(mt string) bool {
	return mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}

// decodeBody decodes raw as the Content-Encoding of h says: gzip (or
// x-gzip; every member, as a handler's gzip reader reads them) and
// deflate (zlib, as RFC 9110 defines it), one layer, at most limit bytes
// once decoded; reading stops there, so a decompression bomb costs no
// more than limit. identity, or no Content-Encoding, is raw itself.
// Anything else is 415: the guard cannot check what it cannot read.
//
// With a violation, plain is what decoded before it (at most limit+1
// bytes), for sink protection on a learning contract's early pass.
//
// A body that is not wholly its encoding is refused: bytes after the
// compressed stream, or deflate without zlib's wrapper (which some
// clients send, and Node and others refuse), or zlib that is raw deflate
// too (rawDeflateToo), or JSON as it is (jsonAsItIs). What the guard
// checks must be all that a host can read: a host that decodes
// otherwise, or not at all, would read other bytes than those checked
// (raw deflate of stored blocks can be JSON itself, and say something
// else decoded).
func decodeBody(h http.Header, raw []byte, limit int64) ([]byte, *Violation) {
	vals := h["Content-Encoding"]
	if len(vals) == 0 {
		return raw, nil
	}
	enc := strings.ToLower(strings.TrimSpace(strings.Join(vals, ",")))
	src := bytes.NewReader(raw)
	var r io.Reader
	switch enc {
	case "", "identity":
		return raw, nil
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(src)
		if err != nil {
			return nil, undecodable(enc)
		}
		r = zr
	case "deflate":
		zr, err := zlib.NewReader(src)
		if err != nil || rawDeflateToo(raw, limit) || jsonAsItIs(raw) {
			return nil, undecodable(enc)
		}
		r = zr
	default:
		return nil, newViolation(CodeUnsupportedMediaType, Detail{Message: "Content-Encoding " + failure.Printable(failure.Clip(enc)) + " is not decoded: send the body as it is, or gzip or deflate it"})
	}
	plain, err := io.ReadAll(io.LimitReader(r, overLimit(limit)))
	switch {
	case int64(len(plain)) > limit:
		return plain, newViolation(CodePayloadTooLarge, Detail{Message: fmt.Sprintf("body must be at most %d bytes once decoded", limit)})
	case err != nil || src.Len() > 0: // zlib stops at its checksum; gzip reads on into another member
		return plain, undecodable(enc)
	}
	return plain, nil
}

// rawDeflateToo reports whether a zlib body is also a raw DEFLATE
// stream, which a host that decodes deflate without zlib's wrapper
// (flate.NewReader, a common Go idiom) reads as another document. Read
// so, zlib's first byte (CM 8) heads a stored block (BFINAL 0, BTYPE 00),
// its length the next two bytes and their complement the two after: when
// those do not match, the raw reading fails before it yields a byte. When
// they do (a body made to be both, or one zlib body in 65,536 by chance),
// the raw reading is tried, at most limit bytes: a body made to be both
// reads to its end, or yields a JSON value before it fails (a host that
// decodes with json.NewDecoder stops at the value's end and never sees
// the error); one that is so by chance fails on what follows the stored
// block (compressed data is no DEFLATE stream from there), having yielded
// no JSON value, and is not refused.
func rawDeflateToo(raw []byte, limit int64) bool {
	if len(raw) < 5 || uint16(raw[1])|uint16(raw[2])<<8 != ^(uint16(raw[3])|uint16(raw[4])<<8) {
		return false
	}
	fr := flate.NewReader(bytes.NewReader(raw))
	if _, err := io.Copy(io.Discard, io.LimitReader(fr, overLimit(limit))); err == nil {
		return true
	}
	dec := json.NewDecoder(io.LimitReader(flate.NewReader(bytes.NewReader(raw)), overLimit(limit)))
	return dec.Decode(new(json.RawMessage)) == nil
}

// jsonAsItIs reports whether a body's bytes, not decoded, start a JSON
// value that json.NewDecoder reads: zlib whose header is '8' (CMF 0x38, a
// 2 KiB window) and a byte that ends a number (FLG 0x11, 'O', 0x8D,
// 0xCB) is the number 8 to a handler that does not decode
// Content-Encoding and decodes with json.NewDecoder, which stops at the
// value's end and never sees the rest.
func jsonAsItIs(raw []byte) bool {
	return json.NewDecoder(bytes.NewReader(raw)).Decode(new(json.RawMessage)) == nil
}

// overLimit is limit+1, the bytes that prove a body over limit, but for
// the largest limit, which no body is over: limit+1 would wrap to a
// negative count (a panicking make, a reader that reads nothing).
func overLimit(limit int64) int64 {
	if limit == math.MaxInt64 {
		return limit
	}
	return limit + 1
}

func undecodable(enc string) *Violation {
	return newViolation(CodeMalformedJSON, Detail{Message: "the " + enc + " body could not be decoded"})
}

// parseFor parses the body for cs, unless an earlier pass did: always when
// it is empty or JSON, or when any of cs reads it; a body that is not
// JSON on contracts that do not read it is left as bytes.
func (st *state) parseFor(cs []*contract, isJSON bool, maxDepth int, into *jsonbody.Small) *Violation {
	if st.parsed() != nil || len(st.plain) > 0 && !isJSON && !anyReadsBody(cs) {
		return nil
	}
	return st.parse(maxDepth, into)
}

// parse reads the body as JSON, once; an empty body is null. A small
// body's doc goes into into, when there is one (nil: its own memory).
func (st *state) parse(maxDepth int, into *jsonbody.Small) *Violation {
	if st.parsed() != nil {
		return nil
	}
	if len(st.plain) == 0 {
		st.doc.Store(jsonbody.NullDoc())
		return nil
	}
	d, err := jsonbody.ParseInto(st.plain, maxDepth, into)
	if err != nil {
		return malformed(err)
	}
	st.doc.Store(d)
	return nil
}

// malformed is the violation of a body jsonbody.Parse refused.
func malformed(err error) *Violation {
	var pe *jsonbody.Error
	if errors.As(err, &pe) {
		return newViolation(CodeMalformedJSON, Detail{Path: pe.Path, Message: pe.Message})
	}
	return newViolation(CodeMalformedJSON, Detail{Message: "invalid JSON"})
}
