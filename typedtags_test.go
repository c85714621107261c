package contractguard

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sameNamed has the name of a type declared inside a test below: two Go
// types, one name.
type sameNamed struct {
	City string `json:"city" jsonschema:"minLength=3"`
}

type genericBox[V any] struct {
	V V `json:"v"`
}

// TestTyped_SameNamedTypesKeepTheirOwnSchemas: invopop names the $defs of
// a schema by the Go type's bare name, so two types of one name (a
// billing.Address and a shipping.Address, or a type declared in a
// function) shared the schema of the first one met: the second was
// checked by rules it does not have, and not by its own.
func TestTyped_SameNamedTypesKeepTheirOwnSchemas(t *testing.T) {
	type sameNamed struct {
		Zip string `json:"zip" jsonschema:"pattern=^[0-9]{5}$"`
	}
	type Order struct {
		Bill sameNamed            `json:"bill"`
		Ship sameNamedAtTopOfFile `json:"ship"`
	}
	ran := 0
	h := Handle(mustNew(t, Options{}), func(w http.ResponseWriter, r *http.Request, in Order) { ran++ })
	require.Equal(t, 200, send(h, "POST", "/", `{"bill":{"zip":"75001"},"ship":{"city":"Paris"}}`).Code)
	eb := rejected(t, send(h, "POST", "/", `{"bill":{"zip":"x"},"ship":{"city":"P"}}`), 400, CodeSchemaInvalid)
	assert.Equal(t, []Detail{{"/bill/zip", "must match the pattern ^[0-9]{5}$"}, {"/ship/city", "must be at least 3 characters long"}}, eb.Details)
	assert.Equal(t, 1, ran)
}

type sameNamedAtTopOfFile = sameNamed

// TestTyped_GenericTypesOfOtherPackages: the name of an instance of a
// generic type holds its argument's package path, whose slashes made the
// $ref invopop writes to it point nowhere: such a T was refused.
func TestTyped_GenericTypesOfOtherPackages(t *testing.T) {
	type In struct {
		Box genericBox[sameNamed] `json:"box"`
	}
	h, err := NewHandler(mustNew(t, Options{}), func(w http.ResponseWriter, r *http.Request, in In) {})
	require.NoError(t, err)
	require.Equal(t, 200, send(h, "POST", "/", `{"box":{"v":{"city":"Paris"}}}`).Code)
	eb := rejected(t, send(h, "POST", "/", `{"box":{"v":{"city":"P"}}}`), 400, CodeSchemaInvalid)
	assert.Equal(t, []Detail{{"/box/v/city", "must be at least 3 characters long"}}, eb.Details)
}

type treeNode struct {
	Name string      `json:"name" jsonschema:"minLength=1"`
	Kids []*treeNode `json:"kids,omitempty"`
	Next *treeNode   `json:"next,omitempty"`
}

// TestTyped_RecursiveRequestType: invopop describes the request type in
// place (ExpandedStruct) and drops its $defs entry, to which the type's
// own fields still referred: a recursive T was refused at start-up. Its
// nested values are held to its schema, and a pointer T's "null" is for
// the whole body only.
func TestTyped_RecursiveRequestType(t *testing.T) {
	g := mustNew(t, Options{})
	h, err := NewHandler(g, func(w http.ResponseWriter, r *http.Request, in treeNode) {})
	require.NoError(t, err)
	require.Equal(t, 200, send(h, "POST", "/", `{"name":"a","kids":[{"name":"b"}]}`).Code)
	eb := rejected(t, send(h, "POST", "/", `{"name":"a","kids":[{"name":""}],"next":{"name":"c","next":{}}}`), 400, CodeSchemaInvalid)
	assert.Equal(t, []Detail{{"/kids/0/name", "must be at least 1 character long"}, {"/next/next/name", "is required"}}, eb.Details)

	p, err := NewHandler(g, func(w http.ResponseWriter, r *http.Request, in *treeNode) {})
	require.NoError(t, err)
	require.Equal(t, 200, send(p, "POST", "/", "").Code)
	eb = rejected(t, send(p, "POST", "/", `{"name":"a","kids":[null],"next":null}`), 400, CodeSchemaInvalid)
	assert.Equal(t, []Detail{{"/kids/0", "must be an object, not null"}, {"/next", "must be an object, not null"}}, eb.Details)
}

// cents decodes itself from a JSON number of euros.
type cents struct{ n int64 }

func (c *cents) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	c.n = int64(f * 100)
	return nil
}

// serial is an array that decodes itself from text.
type serial [4]byte

func (s *serial) UnmarshalText(b []byte) error {
	if len(b) != 4 {
		return errors.New("want 4 characters")
	}
	copy(s[:], b)
	return nil
}

// TestTyped_TypesThatDecodeThemselves: T gives a json.Unmarshaler its
// value's JSON and an encoding.TextUnmarshaler its string, as
// encoding/json does, but invopop described them by their Go structure:
// netip.Addr as an object, an array type as an array. The schema refused
// every value T decodes. They are described as what they decode: any
// value, or a string, which string keywords then constrain.
func TestTyped_TypesThatDecodeThemselves(t *testing.T) {
	type In struct {
		Addr   netip.Addr  `json:"addr"`
		Via    *netip.Addr `json:"via,omitempty"`
		Price  cents       `json:"price"`
		Serial serial      `json:"serial" jsonschema:"pattern=^[A-Z]+$"`
	}
	var got In
	h := Handle(mustNew(t, Options{}), func(w http.ResponseWriter, r *http.Request, in In) { got = in })
	w := send(h, "POST", "/", `{"addr":"192.0.2.1","via":"::1","price":12.5,"serial":"ABCD"}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	assert.Equal(t, netip.MustParseAddr("192.0.2.1"), got.Addr)
	assert.Equal(t, int64(1250), got.Price.n)
	assert.Equal(t, serial{'A', 'B', 'C', 'D'}, got.Serial)
	eb := rejected(t, send(h, "POST", "/", `{"addr":"x","price":"12","serial":"abcd"}`), 400, CodeSchemaInvalid)
	assert.Equal(t, []string{"/serial"}, paths(eb.Details), "the schema first: %v", eb.Details)
	eb = rejected(t, send(h, "POST", "/", `{"addr":1,"price":1,"serial":"ABCD"}`), 400, CodeSchemaInvalid)
	assert.Equal(t, []Detail{{"/addr", "must be a string, not a number"}}, eb.Details)
}
