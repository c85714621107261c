package contractguard

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/route"
)

// The codes of a [Violation], one per kind of rejection.
const (
	// CodeSchemaInvalid: the body fails the contract's JSON Schema (400).
	CodeSchemaInvalid = "SCHEMA_INVALID"
	// CodeMalformedJSON: the body is not acceptable JSON (400).
	CodeMalformedJSON = "MALFORMED_JSON"
	// CodeInvariantViolated: an invariant is false or cannot be evaluated (422).
	CodeInvariantViolated = "INVARIANT_VIOLATED"
	// CodePayloadTooLarge: the body is over Options.MaxBodyBytes (413).
	CodePayloadTooLarge = "PAYLOAD_TOO_LARGE"
	// CodeUnsupportedMediaType: a non-JSON Content-Type on a contract with a schema (415).
	CodeUnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE"
	// CodeVulnerabilityDetected: the vulnerability scan flags a value (403).
	CodeVulnerabilityDetected = "VULNERABILITY_DETECTED"
	// CodeNoContract: Options.RequireContract is on and no contract matches (403).
	CodeNoContract = "NO_CONTRACT"
)

// statusOf is the HTTP status of each code.
var statusOf = map[string]int{
	CodeSchemaInvalid:         http.StatusBadRequest,
	CodeMalformedJSON:         http.StatusBadRequest,
	CodeInvariantViolated:     http.StatusUnprocessableEntity,
	CodePayloadTooLarge:       http.StatusRequestEntityTooLarge,
	CodeUnsupportedMediaType:  http.StatusUnsupportedMediaType,
	CodeVulnerabilityDetected: http.StatusForbidden,
	CodeNoContract:            http.StatusForbidden,
}

// noContract is the violation of a request no contract matched, under
// Options.RequireContract. Its method and path are the client's, clipped
// like any echo of the request, and quoted when they hold what does not
// print (a decoded %0A in the path), so that the message stays one line.
func noContract(method, rawPath string) *Violation {
	return newViolation(CodeNoContract, Detail{Message: "no contract for " + failure.Printable(failure.Clip(method)) + " " + failure.Printable(failure.Clip(route.Clean(nil, rawPath)))})
}

// tooLarge is the violation of a body over limit bytes.
func tooLarge(limit int64) *Violation {
	return newViolation(CodePayloadTooLarge, Detail{Message: fmt.Sprintf("body must be at most %d bytes", limit)})
}

// Violation is a rejected request. It is what [Guard.Check] returns and
// what Options.OnReject receives; the default writer sends it as
//
//	{"error":"CONTRACT_VIOLATION","code":"SCHEMA_INVALID",
//	 "details":[{"path":"/email","message":"must be a valid email address"}]}
//
// with Status as the HTTP status.
type Violation struct {
	Status int    // HTTP status: 400, 403, 413, 415 or 422
	Code   string // one of the Code constants
	// Details are never nil; in path order for schema failures, contract
	// order for invariants. At most 100 are listed (fewer when their paths
	// and messages are long); when the checks found more, a last one, at
	// path "", says "more failures are not listed".
	Details []Detail
}

// Detail is one reason for a rejection.
type Detail struct {
	// Path is a JSON pointer (RFC 6901) into the body, "" for the body as a
	// whole or for a rule about the whole request.
	Path string `json:"path"`
	// Message is short, lower-case, and repeats at most 64 bytes of the
	// rejected value. For an invariant it is the invariant's message.
	Message string `json:"message"`
}

// What a violation lists of the failures found: at most maxDetails
// details, and no more once those listed hold maxDetailBytes of paths and
// messages. A request can fail at every element of its body, each at a
// path that repeats a long member name: listing them all would cost
// memory and an error body many times the request's size. When a check
// found more, a last detail says so (moreNotListed).
const (
	maxDetails     = 100
	maxDetailBytes = 16 << 10
)

// moreNotListed is the last detail of a violation that does not list
// every failure found.
var moreNotListed = Detail{Message: "more failures are not listed"}

// detailList collects the failures of a request's checks, as many as a
// violation lists (failure.Reporter).
type detailList struct {
	details  []Detail
	bytes    int  // of the details' paths and messages
	unlisted bool // a check found a failure the list did not take
}

// Wants reports whether l takes another failure (failure.Reporter), and
// notes one it does not.
func (l *detailList) Wants() bool {
	if l.hasRoom() {
		return true
	}
	l.unlisted = true
	return false
}

// hasRoom reports whether l takes another failure.
func (l *detailList) hasRoom() bool {
	return len(l.details) < maxDetails && l.bytes < maxDetailBytes
}

// Add collects a failure of the schema, of decoding, of the scan or of a
// rule (failure.Reporter).
func (l *detailList) Add(path, message string) {
	l.details = append(l.details, Detail{Path: path, Message: message})
	l.bytes += len(path) + len(message)
}

// failures are the details of v that are failures: all of them but a
// last moreNotListed, which is a note (the learning report and the scan's
// metrics count failures).
func (v *Violation) failures() []Detail {
	if n := len(v.Details); n > 0 && v.Details[n-1] == moreNotListed {
		return v.Details[:n-1]
	}
	return v.Details
}

// listed is the details a violation lists: those taken, then, when a
// check found more, moreNotListed.
func (l *detailList) listed() []Detail {
	if l.unlisted {
		l.details = append(l.details, moreNotListed)
		l.unlisted = false
	}
	return l.details
}

// resetDetails empties l for the next checks, keeping its array.
func (l *detailList) resetDetails() {
	l.details, l.bytes, l.unlisted = l.details[:0], 0, false
}

func newViolation(code string, details ...Detail) *Violation {
	if details == nil {
		details = []Detail{}
	}
	return &Violation{Status: statusOf[code], Code: code, Details: details}
}

// Error implements error: "contractguard: SCHEMA_INVALID: /email: must be
// a valid email address; /age: is required". A path that holds a
// character that does not print (a client's member or query name with a
// line break) is quoted, so that the error stays one line in a log.
func (v *Violation) Error() string {
	var b strings.Builder
	b.WriteString("contractguard: ")
	b.WriteString(v.Code)
	for i, d := range v.Details {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		if d.Path != "" {
			b.WriteString(failure.Printable(d.Path))
			b.WriteString(": ")
		}
		b.WriteString(d.Message)
	}
	return b.String()
}

// MarshalJSON writes the error body of the specification, details always
// an array. Messages are not HTML-escaped ("must be >= 18"): the body is
// served as application/json with X-Content-Type-Options: nosniff.
func (v *Violation) MarshalJSON() ([]byte, error) {
	return v.appendJSON(make([]byte, 0, v.sizeJSON())), nil
}

// sizeJSON is about the length of v's body: room enough for most.
func (v *Violation) sizeJSON() int { return 96 + 64*len(v.Details) }

// appendJSON appends the body of section 6 of the spec. Strings are quoted
// by jsontext (invalid UTF-8 becomes U+FFFD, as encoding/json does; only
// what JSON requires is escaped, so <, > and & stay as they are).
func (v *Violation) appendJSON(b []byte) []byte {
	b = append(b, `{"error":"CONTRACT_VIOLATION","code":`...)
	b = appendQuote(b, v.Code)
	b = append(b, `,"details":[`...)
	for i, d := range v.Details {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"path":`...)
		b = appendQuote(b, d.Path)
		b = append(b, `,"message":`...)
		b = appendQuote(b, d.Message)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// appendQuote appends s quoted as jsontext.AppendQuote does: a string of
// printable ASCII without a quote or a backslash (most of an error body's
// paths and messages) as it is, between quotes; any other by jsontext,
// the reference (FuzzQuoteVsJSONText). jsontext checks each string rune
// by rune: a seventh of what a refused ~100 B body cost through
// Middleware.
func appendQuote(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			b, _ = jsontext.AppendQuote(b, s)
			return b
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// writeViolation is the default Options.OnReject.
func writeViolation(w http.ResponseWriter, _ *http.Request, v *Violation) {
	b := v.appendJSON(make([]byte, 0, v.sizeJSON()+1)) // +1: the newline
	// Both headers' values in one array (as Header.Set would store them,
	// under their canonical names, each a slice of its own length and
	// capacity): one allocation, not two, on every rejection.
	vals := [...]string{"application/json", "nosniff"}
	h := w.Header()
	h["Content-Type"], h["X-Content-Type-Options"] = vals[0:1:1], vals[1:2:2]
	// A length an outer middleware set is not this body's (http.Error
	// drops it too): net/http would cut the body there, or fail it.
	delete(h, "Content-Length")
	w.WriteHeader(v.Status)
	w.Write(append(b, '\n'))
}

// LoadError is a problem with a contract, found by [New]: a file that does
// not parse, a contract that breaks the format, a schema or an expression
// that does not compile, two contracts for one route. New returns every
// problem it finds, joined with errors.Join; use errors.As to get the first,
// or range over the Unwrap() []error of the joined error to get them all.
type LoadError struct {
	File     string // the contract file as named in Options.ContractsDir, or "Options.Contracts[i]"
	Line     int    // 1-based; 0 when unknown
	Contract string // "METHOD /endpoint" when known
	Err      error  // what is wrong
}

// Error is "file:line: METHOD /endpoint: message", one line: a file name
// or contract with a character that would not print as itself (a line
// break in a quoted endpoint) is quoted.
func (e *LoadError) Error() string {
	var b bytes.Buffer
	b.WriteString(failure.Printable(e.File))
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Contract != "" {
		b.WriteString(": ")
		b.WriteString(failure.Printable(e.Contract))
	}
	b.WriteString(": ")
	b.WriteString(failure.Printable(e.Err.Error())) // an OS error names a folder as given: a line break in it
	return b.String()
}

// Unwrap returns the underlying error.
func (e *LoadError) Unwrap() error { return e.Err }
