package contractguard

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/contractguard/contractguard/internal/jsonbody"
)

// readBody reads the body of a request: Check's as given, or the whole of
// r.Body, at most limit bytes. With a body too large it returns the part
// it read, for learning mode to give back.
func readBody(in *input, limit int64) ([]byte, *Violation) {
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
	most := int(limit) + 1
	size := 512
	if r.ContentLength > 0 {
		size = int(r.ContentLength) + 1 // +1: EOF is seen without growing
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
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, tooLarge(mbe.Limit)
			}
			return nil, newViolation(CodeMalformedJSON, Detail{Message: "the request body could not be read"})
		}
	}
}

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
		if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
			bad = "charset must be utf-8"
		}
	}
	return isJSON, bad
}

func isJSONType(mt string) bool {
	return mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}

// parseFor parses the body for cs, unless an earlier pass did: always when
// it is empty or JSON, or when any of cs has a schema; a body that is not
// JSON on contracts without one is left as bytes.
func (st *state) parseFor(cs []*contract, isJSON bool, maxDepth int) *Violation {
	if st.doc != nil || len(st.raw) > 0 && !isJSON && !anySchema(cs) {
		return nil
	}
	return st.parse(maxDepth)
}

// parse reads the body as JSON, once; an empty body is null.
func (st *state) parse(maxDepth int) *Violation {
	if st.doc != nil {
		return nil
	}
	if len(st.raw) == 0 {
		st.doc = jsonbody.NullDoc()
		return nil
	}
	d, err := jsonbody.Parse(st.raw, maxDepth)
	if err != nil {
		return malformed(err)
	}
	st.doc = d
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
