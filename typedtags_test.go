package contractguard

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/invopop/jsonschema"
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

// TestTyped_UintptrField: invopop/jsonschema panics on a uintptr
// ("unsupported type uintptr"), which T decodes as an unsigned integer
// (as encoding/json and json v2 do): NewHandler panicked instead of
// returning, whatever the field's tags. Such a field is an integer to the
// schema, its tags applied.
func TestTyped_UintptrField(t *testing.T) {
	type In struct {
		U uintptr `json:"u" jsonschema:"maximum=5"`
	}
	var got []uintptr
	h, err := NewHandler(mustNew(t, Options{}), func(w http.ResponseWriter, r *http.Request, in In) { got = append(got, in.U) })
	require.NoError(t, err)
	require.Equal(t, 200, send(h, "POST", "/", `{"u":3}`).Code)
	eb := rejected(t, send(h, "POST", "/", `{"u":9}`), 400, CodeSchemaInvalid)
	assert.Equal(t, "/u", eb.Details[0].Path)
	eb = rejected(t, send(h, "POST", "/", `{"u":"3"}`), 400, CodeSchemaInvalid)
	assert.Equal(t, "/u", eb.Details[0].Path)
	eb = rejected(t, send(h, "POST", "/", `{"u":-1}`), 400, CodeSchemaInvalid)
	assert.Equal(t, []Detail{{"/u", "is out of range for uintptr"}}, eb.Details)
	assert.Equal(t, []uintptr{3}, got)
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

// TestTyped_RecursiveTypeWithoutRulesHasNoWalker: a recursive T with no
// rule anywhere in it gets no rule walker, which would walk every value
// of T on every request for nothing (the cycle kept its walker alive);
// one with a rule below the cycle keeps it.
func TestTyped_RecursiveTypeWithoutRulesHasNoWalker(t *testing.T) {
	g := mustNew(t, Options{})
	c, err := g.buildTyped(reflect.TypeFor[treeNode]())
	require.NoError(t, err)
	assert.Nil(t, c.rules)
	type ruledTree struct {
		Name string       `json:"name" cg:"cel=self != 'root',msg=not root"`
		Kids []*ruledTree `json:"kids,omitempty"`
	}
	c, err = g.buildTyped(reflect.TypeFor[ruledTree]())
	require.NoError(t, err)
	assert.NotNil(t, c.rules)
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

// euros decodes itself with json v2's UnmarshalJSONFrom, from a JSON
// number of euros or a string of cents.
type euros struct {
	Cents int64 `json:"cents"`
}

func (e *euros) UnmarshalJSONFrom(d *jsontext.Decoder) error {
	v, err := d.ReadValue()
	if err != nil {
		return err
	}
	if v.Kind() == '"' {
		return json.Unmarshal(v, new(string))
	}
	var f float64
	err = json.Unmarshal(v, &f)
	e.Cents = int64(f * 100)
	return err
}

// TestTyped_UnmarshalerFrom: a type with json v2's UnmarshalJSONFrom
// decodes itself, as json v2 decodes it, and its schema is any value, as
// a json.Unmarshaler's. The binder decoded it by its fields, and invopop
// described it as an object of them: every euros the client wrote (12.5)
// was refused, and {"cents":5} passed as 5 cents.
func TestTyped_UnmarshalerFrom(t *testing.T) {
	type In struct {
		Price euros `json:"price"`
	}
	var got In
	h := Handle(mustNew(t, Options{}), func(w http.ResponseWriter, r *http.Request, in In) { got = in })
	w := send(h, "POST", "/", `{"price":12.5}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	assert.Equal(t, int64(1250), got.Price.Cents)
	eb := rejected(t, send(h, "POST", "/", `{"price":{"cents":5}}`), 400, CodeSchemaInvalid)
	require.Len(t, eb.Details, 1)
	assert.Equal(t, "/price", eb.Details[0].Path)
}

type tagList []string

// TestTyped_SchemaTagsInvopopIgnores: invopop/jsonschema drops a
// jsonschema tag keyword it does not know (minLenght), cannot read
// (minimum=abc, maxLength=-1, minimum=1e400), or does not apply to the
// field's type (minLength on an int, minimum on a string, minItems on a
// named slice type it describes by a $ref), and the text after an
// unescaped comma (the 3}$ of pattern=^[a-z]{1,3}$); and whole tags on
// fields it leaves out. Each such T started and checked less than its
// tags say; it is refused at registration, naming the field.
func TestTyped_SchemaTagsInvopopIgnores(t *testing.T) {
	g := mustNew(t, Options{})
	type Typo struct {
		A string `json:"a" jsonschema:"minLenght=5"`
	}
	type Typo2 struct {
		A int `json:"a" jsonschema:"maximun=10"`
	}
	type Case struct {
		A int `json:"a" jsonschema:"Minimum=1"`
	}
	type NotANumber struct {
		A int `json:"a" jsonschema:"minimum=abc"`
	}
	type Negative struct {
		A string `json:"a" jsonschema:"maxLength=-1"`
	}
	type TooLarge struct {
		A float64 `json:"a" jsonschema:"minimum=1e400"`
	}
	type WrongTypeInt struct {
		A int `json:"a" jsonschema:"minimum=1,minLength=5"`
	}
	type WrongTypeString struct {
		A *string `json:"a" jsonschema:"minimum=5"`
	}
	type Comma struct {
		A string `json:"a" jsonschema:"pattern=^[a-z]{1,3}$"`
	}
	type NamedSlice struct {
		A tagList `json:"a" jsonschema:"minItems=1"`
	}
	type OnAny struct {
		A any `json:"a" jsonschema:"minLength=3"`
	}
	type OnMap struct {
		A map[string]string `json:"a" jsonschema:"minLength=2"`
	}
	type OnRaw struct {
		A json.RawMessage `json:"a" jsonschema:"maxLength=30"`
	}
	type ItemsInt struct {
		A []int `json:"a" jsonschema:"pattern=^1$"`
	}
	type EqualsInNumber struct {
		A []string `json:"a" jsonschema:"pattern=^a=b$"`
	}
	type UniqueFalse struct {
		A []string `json:"a" jsonschema:"uniqueItems=false"`
	}
	type Semicolon struct {
		A string `json:"a" jsonschema:"enum=EUR;enum=USD"`
	}
	type SemicolonPattern struct {
		A string `json:"a" jsonschema:"pattern=^[A-Z]+$;maxLength=3"`
	}
	type UniqueBare struct {
		A []string `json:"a" jsonschema:"uniqueItems"`
	}
	type Embedded struct {
		sameNamed `jsonschema:"required"`
	}
	type Unexported struct {
		a int `jsonschema:"minimum=1"`
		B int `json:"b"`
	}
	type Dash struct {
		A int `json:"-" jsonschema:"minimum=1"`
	}
	type Deep struct {
		Items []map[string]*Typo `json:"items"`
	}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{handlerErr[Typo](g), `contractguard.Typo.A: jsonschema tag "minLenght=5" has no effect on a field of JSON type string`},
		{handlerErr[Typo2](g), `contractguard.Typo2.A: jsonschema tag "maximun=10" has no effect on a field of JSON type integer`},
		{handlerErr[Case](g), `contractguard.Case.A: jsonschema tag "Minimum=1" has no effect`},
		{handlerErr[NotANumber](g), `contractguard.NotANumber.A: jsonschema tag "minimum=abc" has no effect`},
		{handlerErr[Negative](g), `contractguard.Negative.A: jsonschema tag "maxLength=-1" has no effect`},
		{handlerErr[TooLarge](g), `contractguard.TooLarge.A: jsonschema tag "minimum=1e400" has no effect`},
		{handlerErr[WrongTypeInt](g), `contractguard.WrongTypeInt.A: jsonschema tag "minLength=5" has no effect on a field of JSON type integer`},
		{handlerErr[WrongTypeString](g), `contractguard.WrongTypeString.A: jsonschema tag "minimum=5" has no effect on a field of JSON type string`},
		{handlerErr[Comma](g), `contractguard.Comma.A: jsonschema tag "3}$" is not key=value (a comma inside a value is written \,)`},
		{handlerErr[NamedSlice](g), `contractguard.NamedSlice.A: jsonschema tag "minItems=1" has no effect: invopop/jsonschema describes contractguard.tagList by a $ref, beside which it keeps no keyword`},
		{handlerErr[OnAny](g), `contractguard.OnAny.A: jsonschema tag "minLength=3" has no effect on a field of any JSON type`},
		{handlerErr[OnMap](g), `contractguard.OnMap.A: jsonschema tag "minLength=2" has no effect on a field of JSON type object`},
		{handlerErr[OnRaw](g), `contractguard.OnRaw.A: jsonschema tag "maxLength=30" has no effect on a field of any JSON type`},
		{handlerErr[ItemsInt](g), `contractguard.ItemsInt.A: jsonschema tag "pattern=^1$" has no effect: on an array invopop/jsonschema puts it on the items, which are no strings`},
		{handlerErr[EqualsInNumber](g), `contractguard.EqualsInNumber.A: jsonschema tag "pattern=^a=b$" has no effect on a field of JSON type array`},
		{handlerErr[UniqueFalse](g), `contractguard.UniqueFalse.A: jsonschema tag "uniqueItems=false": invopop/jsonschema reads any uniqueItems=… as true`},
		{handlerErr[Semicolon](g), `contractguard.Semicolon.A: jsonschema tag "enum=EUR;enum=USD" is one value of enum to invopop/jsonschema: keywords are separated by commas (enum=EUR,enum=USD)`},
		{handlerErr[SemicolonPattern](g), `contractguard.SemicolonPattern.A: jsonschema tag "pattern=^[A-Z]+$;maxLength=3" is one value of pattern to invopop/jsonschema: keywords are separated by commas (pattern=^[A-Z]+$,maxLength=3)`},
		{handlerErr[UniqueBare](g), `contractguard.UniqueBare.A: jsonschema tag "uniqueItems" is not key=value`},
		{handlerErr[Embedded](g), `contractguard.Embedded.sameNamed: jsonschema tag on an embedded struct, which invopop/jsonschema ignores: tag its fields`},
		{handlerErr[Unexported](g), `contractguard.Unexported.a: jsonschema tag on a field that is no member of the body`},
		{handlerErr[Dash](g), `contractguard.Dash.A: jsonschema tag on a field that is no member of the body`},
		{handlerErr[Deep](g), `contractguard.Typo.A: jsonschema tag "minLenght=5" has no effect`},
	} {
		require.Error(t, tt.err, tt.want)
		assert.Contains(t, tt.err.Error(), tt.want)
		assert.NotContains(t, tt.err.Error(), "\n")
	}
}

// TestTyped_SchemaTagsThatTakeEffect: what the check of the tags lets
// through, each keyword where invopop applies it.
func TestTyped_SchemaTagsThatTakeEffect(t *testing.T) {
	type Inner struct {
		N int `json:"n" jsonschema:"minimum=1,maximum=9,multipleOf=1,enum=1,enum=2,default=1,example=2"`
	}
	type In struct {
		_       struct{}    `cg:"cel=true,msg=x"`
		S       string      `json:"s" jsonschema:"title=S,description=a\\, b,minLength=1,maxLength=9,pattern=^[a-z]{1\\,3}$,format=email,enum=a@b.c,readOnly=true"`
		T       string      `json:"t,omitempty" jsonschema:"required,type=string"`
		P       *float64    `json:"p,omitempty" jsonschema:"exclusiveMinimum=0,exclusiveMaximum=1e300,nullable"`
		L       []string    `json:"l,omitempty" jsonschema:"minItems=1,maxItems=3,uniqueItems=true,minLength=2,enum=ab,enum=cd"`
		F       []string    `json:"f,omitempty" jsonschema:"format=uuid"`
		When    time.Time   `json:"when,omitempty" jsonschema:"pattern=Z$"`
		B       bool        `json:"b,omitempty" jsonschema:"default=true"`
		Inner   Inner       `json:"inner,omitempty" jsonschema:"description=inner"`
		Skipped string      `json:"skipped,omitempty" jsonschema:"-"`
		Raw     json.Number `json:"raw,omitempty" jsonschema:"minimum=0"`
		M       map[string]Inner
	}
	require.NoError(t, handlerErr[In](mustNew(t, Options{})))
	require.NoError(t, handlerErr[Transfer](mustNew(t, Options{})))
}

// TestTyped_SchemaTypeGoCannotHold: invopop takes a tag's type=,
// oneof_type= or anyof_type= as written, so type=string on an int field
// made a schema that refused every integer and passed strings that T's
// decode then refused: a route that refused every body sending the
// member, found in production. Refused at registration; null, and
// integer for number, fit.
func TestTyped_SchemaTypeGoCannotHold(t *testing.T) {
	g := mustNew(t, Options{})
	type StringOnInt struct {
		N int `json:"n" jsonschema:"type=string"`
	}
	type IntegerOnString struct {
		S string `json:"s" jsonschema:"oneof_type=integer;null"`
	}
	type ObjectOnSlice struct {
		L []string `json:"l" jsonschema:"anyof_type=array;object"`
	}
	type Misspelt struct {
		S string `json:"s" jsonschema:"type=strnig"`
	}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{handlerErr[StringOnInt](g), `contractguard: contractguard.StringOnInt.N: jsonschema tag "type=string": the schema would take a JSON string, which a field of Go type int (JSON type integer) cannot hold`},
		{handlerErr[IntegerOnString](g), `contractguard: contractguard.IntegerOnString.S: jsonschema tag "oneof_type=integer;null": the schema would take a JSON integer, which a field of Go type string (JSON type string) cannot hold`},
		{handlerErr[ObjectOnSlice](g), `contractguard: contractguard.ObjectOnSlice.L: jsonschema tag "anyof_type=array;object": the schema would take a JSON object, which a field of Go type []string (JSON type array) cannot hold`},
		{handlerErr[Misspelt](g), `contractguard: contractguard.Misspelt.S: jsonschema tag "type=strnig": no JSON type "strnig" (null, boolean, object, array, number, integer, string)`},
	} {
		require.Error(t, tt.err, tt.want)
		assert.Equal(t, tt.want, tt.err.Error())
	}
	type Fits struct {
		N  int             `json:"n" jsonschema:"type=number"`
		F  float64         `json:"f" jsonschema:"type=integer"`
		P  *string         `json:"p" jsonschema:"oneof_type=string;null"`
		A  any             `json:"a" jsonschema:"type=string"`
		R  json.RawMessage `json:"r" jsonschema:"anyof_type=object;array"`
		B  bool            `json:"b" jsonschema:"type=boolean"`
		NN *int            `json:"nn" jsonschema:"anyof_type=integer;null"`
	}
	h, err := NewHandler(g, func(w http.ResponseWriter, r *http.Request, in Fits) {})
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/fits", strings.NewReader(`{"n":2,"f":3,"p":null,"a":"x","r":[1],"b":true,"nn":null}`))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// TestTyped_SchemaDashRefusesTheMember: a jsonschema:"-" field is left
// out of T's schema, which allows no other members, so a body that
// sends it is refused: a member clients must not set (one the server
// fills in), never one T would decode unchecked.
func TestTyped_SchemaDashRefusesTheMember(t *testing.T) {
	type In struct {
		Name string `json:"name"`
		ID   string `json:"id,omitempty" jsonschema:"-"`
	}
	var got In
	h, err := NewHandler(mustNew(t, Options{}), func(w http.ResponseWriter, r *http.Request, in In) { got = in })
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, send(h, "POST", "/", `{"name":"a"}`).Code)
	assert.Equal(t, In{Name: "a"}, got)
	eb := rejected(t, send(h, "POST", "/", `{"name":"b","id":"forged"}`), 400, CodeSchemaInvalid)
	assert.Equal(t, []string{"/id"}, paths(eb.Details), "%v", eb.Details)
	assert.Equal(t, In{Name: "a"}, got, "the handler never ran")
}

// TestTyped_UnknownFormatInATag: a format the validator does not know
// (format=emial) is an annotation to it, and checked nothing; in a tag it
// is a typo, refused at registration.
func TestTyped_UnknownFormatInATag(t *testing.T) {
	g := mustNew(t, Options{})
	type Typo struct {
		Email string `json:"email" jsonschema:"format=emial"`
	}
	type Items struct {
		Emails []string `json:"emails" jsonschema:"format=e-mail"`
	}
	err := handlerErr[Typo](g)
	require.Error(t, err)
	assert.Equal(t, `contractguard: contractguard.Typo.Email: jsonschema tag "format=emial": the validator knows no format "emial"`, err.Error())
	err = handlerErr[Items](g)
	require.Error(t, err)
	assert.Equal(t, `contractguard: contractguard.Items.Emails: jsonschema tag "format=e-mail": the validator knows no format "e-mail"`, err.Error())
	type Known struct {
		A string `json:"a" jsonschema:"format=email"`
		B string `json:"b" jsonschema:"format=uuid"`
		C string `json:"c" jsonschema:"format=date"`
		D string `json:"d" jsonschema:"format=ipv6"`
		E string `json:"e" jsonschema:"format=uri"`
		F string `json:"f" jsonschema:"format=hostname"`
	}
	require.NoError(t, handlerErr[Known](g))
}

// TestTyped_JSONInlineOption: invopop/jsonschema inlines a field tagged
// json:",inline", encoding/json (and so T) does not: the schema asked
// for its members at the top, which T never decodes, and refused the
// member T does decode. Refused at registration.
func TestTyped_JSONInlineOption(t *testing.T) {
	type Meta struct {
		X int `json:"x" jsonschema:"minimum=1"`
	}
	type In struct {
		M Meta `json:",inline"`
	}
	type Named struct {
		Meta `json:"meta,inline"`
	}
	type Embedded struct { // inlined by both
		Meta `json:",inline"`
	}
	g := mustNew(t, Options{})
	for _, err := range []error{handlerErr[In](g), handlerErr[Named](g)} {
		require.Error(t, err)
		assert.Regexp(t, `^contractguard: contractguard\.(In\.M|Named\.Meta): json tag option "inline": invopop/jsonschema would inline the field, which encoding/json decodes as the member "(M|meta)"$`, err.Error())
	}
	require.NoError(t, handlerErr[Embedded](g))
}

// TestTyped_DashCommaWithoutRule: json:"-," is the member "-" to T, as
// to encoding/json, but invopop/jsonschema leaves it out of the schema,
// which then refused every body holding it and required it of none.
// Refused at registration; with a rule on it, the rule's error says so
// (TestTyped_DashCommaField).
func TestTyped_DashCommaWithoutRule(t *testing.T) {
	type DashOnly struct {
		D int `json:"-,"`
		E int `json:"e"`
	}
	err := handlerErr[DashOnly](mustNew(t, Options{}))
	require.Error(t, err)
	assert.Equal(t, `contractguard: contractguard.DashOnly.D: json:"-,": invopop/jsonschema leaves the member "-" out of the schema, which would refuse it: give the field another json name`, err.Error())
}

type tieA struct {
	ID string `jsonschema:"minLength=3"`
}
type tieB struct {
	ID string
}
type tieName string
type tieBase struct {
	Y int `json:"y"`
}

// TestTyped_SchemaMembersTDoesNotDecode: invopop/jsonschema makes members
// of fields encoding/json (and so T) never decodes: a name two embedded
// structs hold at one depth (encoding/json gives it to neither), an
// unexported embedded non-struct, the fields of an unexported embedded
// pointer. The schema required them of every body, checked them by the
// rules of one of the fields, and the handler got zero values. Refused
// at registration.
func TestTyped_SchemaMembersTDoesNotDecode(t *testing.T) {
	type Tie struct {
		tieA
		tieB
		X int `json:"x"`
	}
	type UnexportedName struct {
		tieName
		X int `json:"x"`
	}
	type UnexportedPointer struct {
		*tieBase
		X int `json:"x"`
	}
	g := mustNew(t, Options{})
	for _, tt := range []struct {
		err  error
		want string
	}{
		{handlerErr[Tie](g), `contractguard: contractguard.Tie.tieB.ID: invopop/jsonschema makes it the member "ID", which encoding/json decodes into no field of contractguard.Tie: give it another json name, or json:"-"`},
		{handlerErr[UnexportedName](g), `contractguard: contractguard.UnexportedName.tieName: invopop/jsonschema makes it the member "tieName", which encoding/json decodes into no field of contractguard.UnexportedName: give it another json name, or json:"-"`},
		{handlerErr[UnexportedPointer](g), `contractguard: contractguard.UnexportedPointer.tieBase.Y: invopop/jsonschema makes it the member "y", which encoding/json decodes into no field of contractguard.UnexportedPointer: give it another json name, or json:"-"`},
	} {
		require.Error(t, tt.err, tt.want)
		assert.Equal(t, tt.want, tt.err.Error())
	}
}

// TestTyped_SchemaTagKeywordTwice: invopop keeps the last of a keyword
// given twice, so maximum=5,maximum=10 held 10 (and one of two formats
// or patterns was dropped). A keyword that holds one value, given twice,
// is refused; enum and example gather their values.
func TestTyped_SchemaTagKeywordTwice(t *testing.T) {
	type Twice struct {
		A int `json:"a" jsonschema:"maximum=5,minimum=0,maximum=10"`
	}
	type TwicePattern struct {
		A []string `json:"a" jsonschema:"pattern=^a,pattern=b$"`
	}
	type Gathers struct {
		A string   `json:"a" jsonschema:"enum=x,enum=y,example=x,example=y"`
		B []string `json:"b" jsonschema:"enum=x,enum=y,default=x,default=y"`
	}
	g := mustNew(t, Options{})
	err := handlerErr[Twice](g)
	require.Error(t, err)
	assert.Equal(t, `contractguard: contractguard.Twice.A: jsonschema tag: maximum given twice (maximum=5, maximum=10), of which invopop/jsonschema keeps the last`, err.Error())
	err = handlerErr[TwicePattern](g)
	require.Error(t, err)
	assert.Equal(t, `contractguard: contractguard.TwicePattern.A: jsonschema tag: pattern given twice (pattern=^a, pattern=b$), of which invopop/jsonschema keeps the last`, err.Error())
	require.NoError(t, handlerErr[Gathers](g))
}

// TestTyped_SchemaExtrasMinimum: invopop reads a jsonschema_extras
// minimum as an integer and drops the error, so minimum=1.5 held 0.
func TestTyped_SchemaExtrasMinimum(t *testing.T) {
	type Fraction struct {
		A float64 `json:"a" jsonschema_extras:"minimum=1.5"`
	}
	type Whole struct {
		A float64 `json:"a" jsonschema_extras:"minimum=2,x-note=a"`
	}
	g := mustNew(t, Options{})
	err := handlerErr[Fraction](g)
	require.Error(t, err)
	assert.Equal(t, `contractguard: contractguard.Fraction.A: jsonschema_extras tag "minimum=1.5": invopop/jsonschema reads it as an integer, and 1.5 as 0: write it in the jsonschema tag`, err.Error())
	h, err := NewHandler(g, func(http.ResponseWriter, *http.Request, Whole) {})
	require.NoError(t, err)
	rejected(t, send(h, "POST", "/", `{"a":1}`), 400, CodeSchemaInvalid)
}

type RuledBase struct {
	Role string `json:"role" cg:"cel=self != 'admin',msg=no admin"`
}
type ruledTie struct {
	ID string `cg:"cel=self != 'x',msg=no x"`
}
type plainTie struct {
	ID string
}

// TestTyped_RulesOfShadowedFields: a rule on a field of an embedded
// struct, whose member encoding/json decodes into another field (one
// that shadows it, or none at all for two of one name at one depth),
// ran on a field that is always zero: {"role":"admin"} passed a rule
// that says no admin. Refused at registration; a promoted field that
// gets its member keeps its rule.
func TestTyped_RulesOfShadowedFields(t *testing.T) {
	type Shadow struct {
		RuledBase
		Role string `json:"role"`
	}
	type Tie struct { // with a schema file: a reflected one refuses the tie first
		_ struct{} `cg:"schema=any.json"`
		ruledTie
		plainTie
	}
	type Promoted struct {
		RuledBase
		X int `json:"x"`
	}
	g := mustNew(t, Options{})
	err := handlerErr[Shadow](g)
	require.Error(t, err)
	assert.Equal(t, `contractguard: contractguard.Shadow.RuledBase.Role: its rules never see the member "role", which encoding/json decodes into contractguard.Shadow.Role: put them on that field`, err.Error())
	err = handlerErr[Tie](mustNew(t, Options{SchemaFS: fstest.MapFS{"any.json": {Data: []byte(`{"type":"object"}`)}}}))
	require.Error(t, err)
	assert.Equal(t, `contractguard: contractguard.Tie.ruledTie.ID: its rules never see the member "ID", which encoding/json decodes into no field of contractguard.Tie: put them on a field that gets it`, err.Error())
	h := Handle(g, func(http.ResponseWriter, *http.Request, Promoted) {})
	eb := rejected(t, send(h, "POST", "/", `{"role":"admin","x":1}`), 422, CodeInvariantViolated)
	assert.Equal(t, []Detail{{"/role", "no admin"}}, eb.Details)
}

// roleChecked checks its role by a rule of a blank field.
type roleChecked struct {
	_    struct{} `cg:"cel=data.role != 'admin',msg=no admin"`
	Role string   `json:"role"`
	Team string   `json:"team"`
}

// TestTyped_BlankRulesOfShadowedFields: a blank-field rule of an
// embedded struct (or a field rule's data) that reads a member its
// struct loses to a field of the outer type (or to none) read a field
// that is always zero:
// {"role":"admin"} passed "no admin", the handler got Role "admin".
// Refused at registration, whatever reads it (data.x, has(), data
// whole), as a field rule is (TestTyped_RulesOfShadowedFields); a rule
// that reads only members its struct keeps is not.
func TestTyped_BlankRulesOfShadowedFields(t *testing.T) {
	type Shadow struct {
		roleChecked
		Role string `json:"role"`
	}
	type Deeper struct {
		Shadow
		X int `json:"x"`
	}
	type Whole struct {
		_ struct{} `cg:"cel=has(data.role) || data.team != '',msg=a role or a team"`
		roleChecked
	}
	type WholeShadow struct {
		*Whole
		Role string `json:"role"`
	}
	type FieldRule struct {
		Role string `json:"role" cg:"cel=self != 'admin' || data.team == 'ops',msg=admins are ops"`
		Team string `json:"team"`
	}
	type FieldRuleShadow struct {
		FieldRule
		Team string `json:"team"`
	}
	type Kept struct {
		roleChecked
		Team string `json:"team"` // shadows team, which the rule does not read
	}
	g := mustNew(t, Options{})
	for _, tt := range []struct {
		err  error
		want string
	}{
		{handlerErr[Shadow](g), `contractguard: contractguard.Shadow.roleChecked: the rule of contractguard.roleChecked "no admin" reads the member "role" of its data, which encoding/json decodes into contractguard.Shadow.Role`},
		{handlerErr[Deeper](g), `contractguard: contractguard.Shadow.roleChecked: the rule of contractguard.roleChecked "no admin" reads the member "role"`},
		{handlerErr[FieldRuleShadow](g), `contractguard: contractguard.FieldRuleShadow.FieldRule: the rule of contractguard.FieldRule "admins are ops" reads the member "team" of its data, which encoding/json decodes into contractguard.FieldRuleShadow.Team`},
		{handlerErr[WholeShadow](g), `contractguard: contractguard.WholeShadow.Whole: the rule of contractguard.Whole "a role or a team" reads the member "role" of its data, which encoding/json decodes into contractguard.WholeShadow.Role`},
	} {
		require.Error(t, tt.err, tt.want)
		assert.Contains(t, tt.err.Error(), tt.want)
	}
	ran := 0
	h := Handle(g, func(w http.ResponseWriter, r *http.Request, in Kept) { ran++ })
	eb := rejected(t, send(h, "POST", "/", `{"role":"admin","team":"a"}`), 422, CodeInvariantViolated)
	assert.Equal(t, []Detail{{"", "no admin"}}, eb.Details)
	assert.Equal(t, 200, send(h, "POST", "/", `{"role":"user","team":"a"}`).Code)
	assert.Equal(t, 1, ran)
}

type ruledHidden struct {
	_    struct{} `cg:"cel=data.role != 'root',msg=no root"`
	Role string   `json:"role" cg:"cel=self != 'admin',msg=no admin"`
}

// TestTyped_RulesInUnexportedEmbeddedStructs: encoding/json, and T,
// decode the promoted fields of an unexported embedded struct, but the
// rules on them read them through reflect, which panics on a value got
// through an unexported field: every request crashed the handler.
func TestTyped_RulesInUnexportedEmbeddedStructs(t *testing.T) {
	type In struct {
		_ struct{} `cg:"cel=data.role != 'nobody',msg=no nobody"`
		ruledHidden
		X int `json:"x"`
	}
	var got string
	h := Handle(mustNew(t, Options{}), func(w http.ResponseWriter, r *http.Request, in In) { got = in.Role })
	require.Equal(t, 200, send(h, "POST", "/", `{"role":"user","x":1}`).Code)
	assert.Equal(t, "user", got)
	for role, msg := range map[string]Detail{"admin": {"/role", "no admin"}, "root": {"", "no root"}, "nobody": {"", "no nobody"}} {
		eb := rejected(t, send(h, "POST", "/", `{"role":"`+role+`","x":1}`), 422, CodeInvariantViolated)
		assert.Equal(t, []Detail{msg}, eb.Details)
	}
}

// amountIn decodes itself the way many types do: into an alias of
// itself, to normalise or default what it got afterwards.
type amountIn struct {
	Amount   int64  `json:"amount" jsonschema:"minimum=0"`
	Currency string `json:"currency" jsonschema:"enum=EUR,enum=USD"`
}

func (a *amountIn) UnmarshalJSON(b []byte) error {
	type plain amountIn
	return json.Unmarshal(b, (*plain)(a))
}

// stampedIn embeds time.Time, whose UnmarshalJSON is promoted: T (as
// encoding/json) decodes the whole value as a time, and never fills Name.
type stampedIn struct {
	time.Time
	Name string `json:"name" jsonschema:"minLength=3"`
}

// TestTyped_SchemaTagsInTypesThatDecodeThemselves: a type that decodes
// itself is described as any value (or a string), and nothing inside it
// is looked into: the jsonschema tags of its fields, which held its
// members to them before, checked nothing ({"amount":-5,"currency":"XXX"}
// reached the handler). Refused at registration, naming the field; its
// cg rules still run on the value T got.
func TestTyped_SchemaTagsInTypesThatDecodeThemselves(t *testing.T) {
	type In struct {
		Price amountIn `json:"price"`
	}
	type Embedding struct {
		Price struct {
			amountIn
		} `json:"price"`
	}
	g := mustNew(t, Options{})
	for _, tt := range []struct {
		err  error
		want string
	}{
		{handlerErr[In](g), `contractguard: contractguard.amountIn.Amount: jsonschema tag on a field of contractguard.amountIn, which decodes itself (UnmarshalJSON): the schema takes any value for it and looks into none of its fields: check it in UnmarshalJSON or by a cg rule`},
		{handlerErr[Embedding](g), `contractguard: struct { contractguard.amountIn }.amountIn.Amount: jsonschema tag on a field of struct { contractguard.amountIn }, which decodes itself (UnmarshalJSON)`},
		{handlerErr[stampedIn](g), `contractguard: contractguard.stampedIn.Name: jsonschema tag on a field of contractguard.stampedIn, which decodes itself (UnmarshalJSON)`},
	} {
		require.Error(t, tt.err, tt.want)
		assert.Contains(t, tt.err.Error(), tt.want)
		assert.NotContains(t, tt.err.Error(), "\n")
	}
}

// currencyIn decodes itself from a JSON string.
type currencyIn string

func (c *currencyIn) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*c = currencyIn(s)
	return nil
}

// TestTyped_SchemaTagKeywordsInTheirTag: invopop reads a jsonschema tag
// as a whole (type=, oneof_type= and anyof_type= first, then the
// keywords of the type they leave), but each keyword was judged alone.
// So minLength=3 beside oneof_type=string;null was taken, and dropped by
// invopop: {"s":"a"} passed. And type=string,maxLength=3 on a field of
// any JSON type (json.RawMessage, any, a type that decodes itself), which
// invopop applies and held before, was refused.
func TestTyped_SchemaTagKeywordsInTheirTag(t *testing.T) {
	type OneOf struct {
		S string `json:"s" jsonschema:"minLength=3,oneof_type=string;null"`
	}
	type AnyOf struct {
		S string `json:"s" jsonschema:"anyof_type=string;integer,minLength=3"`
	}
	type Retyped struct {
		S string `json:"s" jsonschema:"type=integer,minLength=3"`
	}
	g := mustNew(t, Options{})
	for _, tt := range []struct {
		err  error
		want string
	}{
		{handlerErr[OneOf](g), `contractguard: contractguard.OneOf.S: jsonschema tag "minLength=3" has no effect beside the other keywords of its tag (type=, oneof_type= or anyof_type=, which invopop/jsonschema reads first)`},
		{handlerErr[AnyOf](g), `contractguard: contractguard.AnyOf.S: jsonschema tag "minLength=3" has no effect beside the other keywords of its tag (type=, oneof_type= or anyof_type=, which invopop/jsonschema reads first)`},
		{handlerErr[Retyped](g), `contractguard: contractguard.Retyped.S: jsonschema tag "minLength=3" has no effect beside the other keywords of its tag (type=, oneof_type= or anyof_type=, which invopop/jsonschema reads first)`},
	} {
		require.Error(t, tt.err, tt.want)
		assert.Equal(t, tt.want, tt.err.Error())
	}

	type Typed struct {
		Raw json.RawMessage `json:"raw" jsonschema:"type=string,maxLength=3"`
		Any any             `json:"any" jsonschema:"minLength=2,type=string"`
		Cur currencyIn      `json:"cur" jsonschema:"type=string,enum=EUR,enum=USD"`
	}
	var got Typed
	h, err := NewHandler(g, func(w http.ResponseWriter, r *http.Request, in Typed) { got = in })
	require.NoError(t, err)
	require.Equal(t, 200, send(h, "POST", "/", `{"raw":"abc","any":"ab","cur":"EUR"}`).Code)
	assert.Equal(t, currencyIn("EUR"), got.Cur)
	eb := rejected(t, send(h, "POST", "/", `{"raw":"abcd","any":"a","cur":"XXX"}`), 400, CodeSchemaInvalid)
	assert.Equal(t, []string{"/any", "/cur", "/raw"}, paths(eb.Details), "%v", eb.Details)
}

// TestTyped_SchemaTagAnnotationsInvopopDrops: a keyword that checks
// nothing (example, default, readOnly, writeOnly: annotations to the
// validator) where invopop drops it, as on a boolean or on a struct it
// describes by a $ref, was refused at registration with the keywords
// that do check: types shared with API documentation, which started
// before, no longer did, for no check lost.
func TestTyped_SchemaTagAnnotationsInvopopDrops(t *testing.T) {
	type Doc struct {
		Active bool                 `json:"active" jsonschema:"example=true,description=on or off"`
		ID     int                  `json:"id,omitempty" jsonschema:"readOnly=true,writeOnly=false"`
		Where  sameNamed            `json:"where" jsonschema:"title=Where,default={}"`
		Many   []sameNamed          `json:"many,omitempty" jsonschema:"example=[]"`
		Extra  map[string]string    `json:"extra,omitempty" jsonschema:"default={}"`
		Any    any                  `json:"any,omitempty" jsonschema:"example=1"`
		ByName map[string]sameNamed `json:"byName,omitempty"`
	}
	g := mustNew(t, Options{})
	h, err := NewHandler(g, func(http.ResponseWriter, *http.Request, Doc) {})
	require.NoError(t, err)
	require.Equal(t, 200, send(h, "POST", "/", `{"active":true,"where":{"city":"Paris"}}`).Code)
	eb := rejected(t, send(h, "POST", "/", `{"active":1,"where":{"city":"P"}}`), 400, CodeSchemaInvalid)
	assert.Equal(t, []string{"/active", "/where/city"}, paths(eb.Details), "%v", eb.Details)
}

// reflections counts how often invopop reflects extendedNode.
var reflections atomic.Int64

type extendedNode struct {
	Name string         `json:"name" jsonschema:"description=the name,minLength=1"`
	Next *extendedNode  `json:"next,omitempty" jsonschema:"description=the next one"`
	Kids []extendedNode `json:"kids,omitempty" jsonschema:"description=its kids,maxItems=9"`
}

func (extendedNode) JSONSchemaExtend(*jsonschema.Schema) { reflections.Add(1) }

// TestTyped_SchemaTagCheckReflectsNoNestedType: each keyword of each
// field's tag was judged by reflecting the field's type with all it
// holds, twice: quadratic in the types of T (a few dozen recursive types
// with a description on each field took seconds at start-up). A type
// invopop describes by a $ref is not reflected for the check, which
// judges the same: T's schema reflects it once.
func TestTyped_SchemaTagCheckReflectsNoNestedType(t *testing.T) {
	type In struct {
		A extendedNode   `json:"a" jsonschema:"description=a"`
		B *extendedNode  `json:"b,omitempty" jsonschema:"title=B"`
		C []extendedNode `json:"c" jsonschema:"minItems=1,maxItems=3"`
	}
	reflections.Store(0)
	h, err := NewHandler(mustNew(t, Options{}), func(http.ResponseWriter, *http.Request, In) {})
	require.NoError(t, err)
	assert.Equal(t, int64(1), reflections.Load())
	eb := rejected(t, send(h, "POST", "/", `{"a":{"name":"","next":{"name":"x","kids":[{}]}},"c":[]}`), 400, CodeSchemaInvalid)
	assert.Equal(t, []string{"/a/name", "/a/next/kids/0/name", "/c"}, paths(eb.Details), "%v", eb.Details)
}

type ruledAddress struct {
	_    struct{} `cg:"cel=data.city != '',msg=city required"`
	City string   `json:"city"`
}
type addressBase struct {
	Addr ruledAddress `json:"addr"`
}
type plainAddress struct {
	Street string `json:"street"`
}

// TestTyped_RulesOfShadowedFieldTypes: the rules of the type of a field
// of an embedded struct, whose member encoding/json decodes into a field
// that shadows it, ran on the shadowed field, always zero: every body was
// refused with "city required" at /addr, which holds no city. Refused at
// registration, as a rule on the field itself is.
func TestTyped_RulesOfShadowedFieldTypes(t *testing.T) {
	type In struct {
		addressBase
		Addr plainAddress `json:"addr"`
	}
	type Deep struct {
		addressBase
		Addr []*plainAddress `json:"addr"`
	}
	g := mustNew(t, Options{})
	err := handlerErr[In](g)
	require.Error(t, err)
	assert.Equal(t, `contractguard: contractguard.In.addressBase.Addr: the rules of contractguard.ruledAddress never see the member "addr", which encoding/json decodes into contractguard.In.Addr: tag the shadowed field json:"-"`, err.Error())
	require.Error(t, handlerErr[Deep](g))
}

// TestTyped_SchemaExtrasTheTagChecksMiss: a jsonschema_extras tag writes
// its keywords into the schema as they are, past the checks of the
// jsonschema tag: an unknown format (format=emial) checked nothing, and
// of a minimum given twice, or a true/false value, invopop keeps the last
// (minimum=5,minimum=1 held 1). Refused at registration.
func TestTyped_SchemaExtrasTheTagChecksMiss(t *testing.T) {
	type Format struct {
		Email string `json:"email" jsonschema_extras:"format=emial"`
	}
	type Twice struct {
		N int `json:"n" jsonschema_extras:"minimum=5,minimum=1"`
	}
	type TwiceBool struct {
		S string `json:"s" jsonschema_extras:"x-contractguard-scan=false,x-contractguard-scan=true"`
	}
	type Fine struct {
		Email string `json:"email" jsonschema_extras:"format=email,x-tag=a,x-tag=b"`
	}
	g := mustNew(t, Options{})
	for _, tt := range []struct {
		err  error
		want string
	}{
		{handlerErr[Format](g), `contractguard: contractguard.Format.Email: jsonschema_extras tag "format=emial": the validator knows no format "emial"`},
		{handlerErr[Twice](g), `contractguard: contractguard.Twice.N: jsonschema_extras tag: minimum given twice (minimum=5, minimum=1), of which invopop/jsonschema keeps the last`},
		{handlerErr[TwiceBool](g), `contractguard: contractguard.TwiceBool.S: jsonschema_extras tag: x-contractguard-scan given twice (x-contractguard-scan=false, x-contractguard-scan=true), of which invopop/jsonschema keeps the last`},
	} {
		require.Error(t, tt.err, tt.want)
		assert.Equal(t, tt.want, tt.err.Error())
	}
	require.NoError(t, handlerErr[Fine](g))
}

// TestTyped_FieldRuleOnAnAbsentPointer: a field rule on a pointer field
// the body leaves out is not run (the field has no value; a struct
// behind a nil pointer is not walked either); present, it is (found by
// review: self was the nil pointer, the evaluation failed, and every body
// without the optional field was refused, 422 at /p).
func TestTyped_FieldRuleOnAnAbsentPointer(t *testing.T) {
	type In struct {
		P *int    `json:"p,omitempty" cg:"cel=self < 10,msg=under 10"`
		S *string `json:"s,omitempty" cg:"cel=self != '',msg=not empty"`
	}
	h := Handle(mustNew(t, Options{}), func(w http.ResponseWriter, r *http.Request, in In) {})
	for _, body := range []string{`{}`, `{"p":9}`, `{"s":"x"}`, `{"p":0,"s":"y"}`} {
		assert.Equal(t, 200, send(h, "POST", "/", body).Code, body)
	}
	e := rejected(t, send(h, "POST", "/", `{"p":10,"s":""}`), 422, CodeInvariantViolated)
	assert.Equal(t, []Detail{{"/p", "under 10"}, {"/s", "not empty"}}, e.Details)
	rejected(t, send(h, "POST", "/", `{"p":null}`), 400, CodeSchemaInvalid)
}

// TestTyped_SelfOfNumberAndRawMessage: a rule on a json.Number or a
// json.RawMessage field is checked with self a string and bytes (and
// data.<field> reads them so), but cel-go adapted self by its contents, a
// number and the JSON value the bytes hold: self != '0' held for 0, and
// size(self) <= 10 for an object of one long member.
func TestTyped_SelfOfNumberAndRawMessage(t *testing.T) {
	type In struct {
		N json.Number     `json:"n" cg:"cel=self != '0',msg=not zero"`
		R json.RawMessage `json:"r" cg:"cel=size(self) <= 10,msg=at most 10 bytes"`
	}
	h := Handle(mustNew(t, Options{}), func(w http.ResponseWriter, r *http.Request, in In) {})
	require.Equal(t, 200, send(h, "POST", "/", `{"n":5,"r":[1,2]}`).Code)
	e := rejected(t, send(h, "POST", "/", `{"n":0,"r":{"a":"a long string of many bytes"}}`), 422, CodeInvariantViolated)
	assert.Equal(t, []Detail{{"/n", "not zero"}, {"/r", "at most 10 bytes"}}, e.Details)
}

// TestTyped_RulesOnNumbersAndRawMessagesInListsAndMaps: cel-go adapts a
// json.Number or json.RawMessage in a list or map by its contents (a
// number, the JSON value it holds), not as the string or bytes the rule
// is checked with: data.ns.all(n, n != '0') held for [0]. Such a rule is
// refused when the handler is built; a json.Number read as a field, or
// through a pointer, is the string it is checked as.
func TestTyped_RulesOnNumbersAndRawMessagesInListsAndMaps(t *testing.T) {
	type Nums struct {
		NS []json.Number `json:"ns"`
	}
	type List struct {
		_  struct{}      `cg:"cel=data.ns.all(n, n != '0'),msg=no zero"`
		NS []json.Number `json:"ns"`
	}
	type Nested struct {
		_  struct{} `cg:"cel=data.inner.ns.exists(n, n == '0'),msg=a zero"`
		In Nums     `json:"inner"`
	}
	type Self struct {
		M map[string]json.RawMessage `json:"m" cg:"cel=self.all(k, size(self[k]) <= 10),msg=small"`
	}
	type Optional struct {
		_  struct{}        `cg:"cel=data.?ns.orValue([]).all(l, l.all(n, n != '0')),msg=no zero"`
		NS [][]json.Number `json:"ns"`
	}
	g := mustNew(t, Options{})
	for _, err := range []error{handlerErr[List](g), handlerErr[Nested](g), handlerErr[Self](g), handlerErr[Optional](g)} {
		require.Error(t, err)
		assert.Contains(t, err.Error(), "holds json.Number or json.RawMessage values in a list or map")
	}
	type Fine struct {
		_  struct{}                `cg:"cel=has(data.ns) && data.p != '0' && data.m.all(k, data.m[k] != '0'),msg=no zero"`
		NS []json.Number           `json:"ns"`
		P  *json.Number            `json:"p"`
		M  map[string]*json.Number `json:"m"`
	}
	h := Handle(g, func(w http.ResponseWriter, r *http.Request, in Fine) {})
	require.Equal(t, 200, send(h, "POST", "/", `{"ns":[0],"p":1,"m":{"a":1}}`).Code)
	rejected(t, send(h, "POST", "/", `{"ns":[],"p":1,"m":{"a":0}}`), 422, CodeInvariantViolated)
	rejected(t, send(h, "POST", "/", `{"ns":[],"p":0,"m":{}}`), 422, CodeInvariantViolated)
}

// TestTyped_RulePathsAtMapKeysThatDecodeThemselves: a rule's failure in
// a map value was reported at the key as the Go key writes itself
// (MarshalText), not at the member the body has: "::FFFF:1.2.3.4" was
// /m/::ffff:1.2.3.4, a member the body does not have.
func TestTyped_RulePathsAtMapKeysThatDecodeThemselves(t *testing.T) {
	type Item struct {
		Q int `json:"q" cg:"cel=self > 0,msg=must be positive"`
	}
	type In struct {
		M map[netip.Addr]Item `json:"m"`
	}
	h := Handle(mustNew(t, Options{}), func(w http.ResponseWriter, r *http.Request, in In) {})
	e := rejected(t, send(h, "POST", "/", `{"m":{"::FFFF:1.2.3.4":{"q":0},"10.0.0.1":{"q":1},"::1":{"q":0}}}`), 422, CodeInvariantViolated)
	assert.Equal(t, []Detail{{"/m/::1/q", "must be positive"}, {"/m/::FFFF:1.2.3.4/q", "must be positive"}}, e.Details)
}

type twoNamed struct {
	M int `json:"m"`
	N int `json:"n"`
}

type twoNamedAtTopOfFile = twoNamed

type twoRuled struct {
	M int `json:"m"`
}

type twoRuledAtTopOfFile = twoRuled

// TestTyped_RulesOnTypesOfOneCELName: CEL names a Go struct type by the
// last element of its package path and its name, and cel-go keeps the
// first type of a name: a rule reading another (of a package of the same
// last element, or declared in a function) read its fields by the first
// one's indexes, so data.b.n read b's m and {"b":{"n":0,"m":5}} passed
// data.b.n > 0. Such a rule is refused when the handler is built.
func TestTyped_RulesOnTypesOfOneCELName(t *testing.T) {
	type twoNamed struct {
		N int `json:"n"`
		M int `json:"m"`
	}
	type Read struct {
		_ struct{}            `cg:"cel=data.b.n > 0,msg=n must be positive"`
		A twoNamedAtTopOfFile `json:"a"`
		B twoNamed            `json:"b"`
	}
	type Self struct {
		A twoNamedAtTopOfFile `json:"a"`
		C twoNamed            `json:"c" cg:"cel=self.n > 0,msg=n must be positive"`
	}
	type twoRuled struct {
		N int `json:"n" cg:"cel=self > 0,msg=n must be positive"`
	}
	type Declared struct {
		A twoRuledAtTopOfFile `json:"a"`
		B []twoRuled          `json:"b"`
	}
	g := mustNew(t, Options{})
	for _, err := range []error{handlerErr[Read](g), handlerErr[Self](g), handlerErr[Declared](g)} {
		require.Error(t, err)
		assert.Regexp(t, `contractguard\.two(Named|Ruled) is the name in CEL of two types`, err.Error())
	}
	type Apart struct { // no rule reads either: nothing to tell apart
		_ struct{}            `cg:"cel=data.x > 0,msg=x must be positive"`
		X int                 `json:"x"`
		A twoNamedAtTopOfFile `json:"a"`
		B twoNamed            `json:"b"`
	}
	h := Handle(g, func(w http.ResponseWriter, r *http.Request, in Apart) {})
	require.Equal(t, 200, send(h, "POST", "/", `{"x":1,"a":{"m":1,"n":1},"b":{"m":1,"n":1}}`).Code)
}

type shadowedBase struct {
	ID int `json:"id"`
}

// TestTyped_NoRulesNoCELTypes: a T whose promoted field's json name a
// shallower field of another Go name takes (encoding/json decodes the
// member into the shallower one) cannot be declared to CEL, which names
// both fields alike; such a T was refused even with no rule at all,
// where nothing needs CEL. It is refused only when it has rules.
func TestTyped_NoRulesNoCELTypes(t *testing.T) {
	type Plain struct {
		shadowedBase
		Ident int `json:"id" jsonschema:"minimum=1"`
	}
	g := mustNew(t, Options{})
	var got int
	h, err := NewHandler(g, func(w http.ResponseWriter, r *http.Request, in Plain) { got = in.Ident })
	require.NoError(t, err)
	require.Equal(t, 200, send(h, "POST", "/", `{"id":7}`).Code)
	assert.Equal(t, 7, got)
	rejected(t, send(h, "POST", "/", `{"id":0}`), 400, CodeSchemaInvalid)
	type Ruled struct {
		shadowedBase
		Ident int `json:"id" cg:"cel=self > 0,msg=must be positive"`
	}
	err = handlerErr[Ruled](g)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "contractguard.Ruled.Ident: rule 1 (self > 0): contractguard.Ruled: invalid field name `id`")
}

// TestTyped_SizeOfNumbersAndRawMessagesInListsAndMaps: a rule that reads
// only the size of a list or map of json.Number or json.RawMessage values
// reads nothing cel-go adapts, and is not refused (found by review: since
// ca14b3d, size(self) <= 2 on a []json.RawMessage, which counted its
// elements right, made NewHandler fail); one that reads an element still is.
func TestTyped_SizeOfNumbersAndRawMessagesInListsAndMaps(t *testing.T) {
	type Sized struct {
		_     struct{}                   `cg:"cel=data.ns.size() <= 3 && size(data.m) >= 1,msg=sizes"`
		Items []json.RawMessage          `json:"items" cg:"cel=size(self) <= 2,msg=at most 2"`
		NS    []json.Number              `json:"ns"`
		M     map[string]json.RawMessage `json:"m"`
	}
	g := mustNew(t, Options{})
	h := Handle(g, func(w http.ResponseWriter, r *http.Request, in Sized) {})
	require.Equal(t, 200, send(h, "POST", "/", `{"items":[{"a":1},"x"],"ns":[1,2],"m":{"k":[]}}`).Code)
	e := rejected(t, send(h, "POST", "/", `{"items":[1,2,3],"ns":[1,2,3,4],"m":{}}`), 422, CodeInvariantViolated)
	assert.Equal(t, []Detail{{"", "sizes"}, {"/items", "at most 2"}}, e.Details)

	type Element struct {
		_  struct{}      `cg:"cel=size(data.ns[0]) <= 3,msg=short"`
		NS []json.Number `json:"ns"`
	}
	type MapValue struct {
		_ struct{}                   `cg:"cel=size(data.m.k) <= 3,msg=short"`
		M map[string]json.RawMessage `json:"m"`
	}
	for _, err := range []error{handlerErr[Element](g), handlerErr[MapValue](g)} {
		require.Error(t, err)
		assert.Contains(t, err.Error(), "holds json.Number or json.RawMessage values in a list or map")
	}
}

// TestTyped_TagErrorsAreOneLine: a registration error that echoes a cg
// tag's value quotes it when it holds a line break, as load errors do
// (found by review: cg:"mode=le\narn" and a rule with a line break were
// two lines).
func TestTyped_TagErrorsAreOneLine(t *testing.T) {
	type Mode struct {
		_ struct{} `cg:"mode=le\narn"`
		A int      `json:"a"`
	}
	type Rule struct {
		_ struct{} `cg:"cel=data.a >\nnope,msg=m"`
		A int      `json:"a"`
	}
	g := mustNew(t, Options{})
	for _, err := range []error{handlerErr[Mode](g), handlerErr[Rule](g)} {
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "\n", "%q", err.Error())
	}
	assert.ErrorContains(t, handlerErr[Mode](g), `mode="le\narn": want enforce or learn`)
}

// loopingExtend's schema, from JSONSchemaExtend, refers to itself for
// the value it checks: {not: {$ref: '#'}} passes every body.
type loopingExtend struct {
	A int `json:"a" jsonschema:"maximum=5"`
}

func (loopingExtend) JSONSchemaExtend(s *jsonschema.Schema) {
	s.Not = &jsonschema.Schema{Ref: "#"}
}

// TestTyped_ReflectedSchemaLoopRefused: a schema reflected from T, which
// T's JSONSchemaExtend may shape, is held to the loop check the contracts
// loader and schema= files are.
func TestTyped_ReflectedSchemaLoopRefused(t *testing.T) {
	g := mustNew(t, Options{})
	_, err := NewHandler(g, func(w http.ResponseWriter, r *http.Request, in loopingExtend) {})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "$ref loop")
}

// selfMap and selfList hold themselves: JSON trees of objects, of arrays.
type (
	selfMap  map[string]selfMap
	selfList []selfList
)

// TestTyped_TypesThatHoldThemselves: heldType and elem followed a type's
// elements until they reached another kind, so registering a T of a type
// that holds itself (map[string]selfMap, []selfList) spun for ever. Such
// a type holds no members of its own: it registers, and decodes as
// encoding/json decodes it.
func TestTyped_TypesThatHoldThemselves(t *testing.T) {
	g := mustNew(t, Options{})
	type In struct {
		M selfMap  `json:"m"`
		L selfList `json:"l"`
	}
	var got In
	made := make(chan http.Handler, 1)
	go func() {
		h, err := NewHandler(g, func(w http.ResponseWriter, r *http.Request, in In) { got = in })
		assert.NoError(t, err)
		made <- h
	}()
	var h http.Handler
	select {
	case h = <-made:
	case <-time.After(10 * time.Second):
		t.Fatal("NewHandler did not return")
	}
	require.NotNil(t, h)
	body := `{"m":{"a":{"b":{}},"c":{}},"l":[[],[[]]]}`
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/self", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var want In
	require.NoError(t, json.Unmarshal([]byte(body), &want))
	assert.Equal(t, want, got)
}

// TestTyped_CGTagTwice: reflect's StructTag.Get reads the first of two
// cg keys in a field's tag, and go vet says nothing of a key given
// twice: the rules of the second never ran ({"amount":500} passed a
// field that says at most 100). Refused at registration, naming the
// field.
func TestTyped_CGTagTwice(t *testing.T) {
	type Field struct {
		Amount float64 `json:"amount" cg:"cel=self > 0,msg=positive" cg:"cel=self <= 100,msg=at most 100"`
	}
	type Blank struct {
		_ struct{} `cg:"cel=data.a > 0,msg=positive" cg:"cel=data.a <= 100,msg=at most 100"`
		A int      `json:"a"`
	}
	type Nested struct {
		Items []Field `json:"items"`
	}
	g := mustNew(t, Options{})
	assert.EqualError(t, handlerErr[Field](g), `contractguard: contractguard.Field.Amount: cg tag given twice in the field's tag, of which Go's reflect reads only the first: write all the pairs in one cg tag (cel=…,msg=…,cel=…,msg=…)`)
	assert.EqualError(t, handlerErr[Blank](g), `contractguard: contractguard.Blank: cg tag given twice in the field's tag, of which Go's reflect reads only the first: write all the pairs in one cg tag (cel=…,msg=…,cel=…,msg=…)`)
	assert.ErrorContains(t, handlerErr[Nested](g), `contractguard.Field.Amount: cg tag given twice`)

	// A tag reflect stops reading before cg: the rule never ran. (Made
	// at run time: go vet refuses such tags in source, but go test does
	// not run that check, so a service's own would compile and pass.)
	field := func(tag string) reflect.StructField {
		return reflect.StructField{Name: "Amount", Type: reflect.TypeFor[float64](), Tag: reflect.StructTag(tag)}
	}
	spaced := reflect.StructOf([]reflect.StructField{field(`json:"amount" cg: "cel=self > 0,msg=positive"`)})
	comma := reflect.StructOf([]reflect.StructField{field(`json:"amount",cg:"cel=self > 0,msg=positive"`)})
	deep := reflect.StructOf([]reflect.StructField{{Name: "Lines", Type: reflect.SliceOf(comma), Tag: `json:"lines"`}})
	mentions := reflect.StructOf([]reflect.StructField{field(`json:"amount" doc:"see cg: rules"`)}) // names cg: in a value
	for _, c := range []struct {
		typ  reflect.Type
		want string
	}{
		{spaced, `cg tag not read: Go's reflect stops reading the field's tag at "cg: \"cel=self > 0,msg=positive\"" (pairs are key:"value", separated by spaces)`},
		{comma, `cg tag not read: Go's reflect reads the key ",cg" (pairs are key:"value", separated by spaces)`},
		{deep, `.Amount: cg tag not read`},
	} {
		_, err := g.typedContract(c.typ)
		assert.ErrorContains(t, err, c.want, c.typ.String())
	}
	_, err := g.typedContract(mentions)
	assert.NoError(t, err)
}

// TestTyped_SchemaTagTwice: invopop/jsonschema reads a field's tag by
// reflect's StructTag.Get, the first of two jsonschema (or
// jsonschema_extras) keys: the keywords of the second were dropped
// without a word ({"n":500} passed maximum=100). Refused at registration,
// as a keyword invopop drops is.
func TestTyped_SchemaTagTwice(t *testing.T) {
	type Schema struct {
		N int `json:"n" jsonschema:"minimum=1" jsonschema:"maximum=100"`
	}
	type Extras struct {
		S string `json:"s" jsonschema_extras:"format=email" jsonschema_extras:"pattern=^[a-z@.]+$"`
	}
	g := mustNew(t, Options{})
	assert.EqualError(t, handlerErr[Schema](g), `contractguard: contractguard.Schema.N: jsonschema tag given twice in the field's tag, of which invopop/jsonschema reads only the first: write all the keywords in one`)
	assert.EqualError(t, handlerErr[Extras](g), `contractguard: contractguard.Extras.S: jsonschema_extras tag given twice in the field's tag, of which invopop/jsonschema reads only the first: write all the keywords in one`)
}

// ruledKey decodes itself from a member name, and has a rule.
type ruledKey struct {
	_ struct{} `cg:"cel=data.v != 'admin',msg=no admin key"`
	V string   `json:"v"`
}

func (k *ruledKey) UnmarshalText(b []byte) error { k.V = string(b); return nil }

// TestTyped_RulesOfMapKeyTypes: the rules of a struct type apply
// wherever it appears, but the walker went into map values only: as a
// map's key type its rules never ran ({"m":{"admin":1}} passed "no admin
// key", which {"k":"admin"} did not). Refused at registration, naming
// the field, rather than dropped without a word.
func TestTyped_RulesOfMapKeyTypes(t *testing.T) {
	type Keys struct {
		M map[ruledKey]int `json:"m"`
	}
	type Deep struct {
		L []*map[ruledKey]string `json:"l"`
	}
	type Value struct {
		K ruledKey `json:"k"`
	}
	g := mustNew(t, Options{})
	assert.EqualError(t, handlerErr[Keys](g), `contractguard: contractguard.Keys.M: the rules of contractguard.ruledKey never run on a map key: check the keys by a rule of contractguard.Keys, or use another key type`)
	assert.ErrorContains(t, handlerErr[Deep](g), `contractguard.Deep.L: the rules of contractguard.ruledKey never run on a map key`)
	assert.ErrorContains(t, handlerErr[map[ruledKey]int](g), `map[contractguard.ruledKey]int: the rules of contractguard.ruledKey never run on a map key`)
	h := Handle(g, func(http.ResponseWriter, *http.Request, Value) {})
	eb := rejected(t, send(h, "POST", "/", `{"k":"admin"}`), 422, CodeInvariantViolated)
	assert.Equal(t, []Detail{{"/k", "no admin key"}}, eb.Details)
}

// badValueIn has tag values invopop writes as they are and the schema
// compiler refuses.
type badValueIn struct {
	M float64 `json:"m" jsonschema:"multipleOf=0"`
}

// TestTyped_SchemaTagValuesTheCompilerRefuses: a keyword value invopop
// writes as it is and draft-07 refuses (multipleOf=0, a pattern that is
// no regex, an enum value twice) was reported by the compiler of the
// whole reflected schema, naming the request type and a pointer into
// it: for a nested type, "contractguard.Out: reflected schema:
// /properties/m/multipleOf", a member Out does not have. The error names
// the field whose tag it is, and the tag.
func TestTyped_SchemaTagValuesTheCompilerRefuses(t *testing.T) {
	type Out struct {
		Items []badValueIn `json:"items"`
	}
	type Pattern struct {
		S *string `json:"s" jsonschema:"pattern=(("`
	}
	type Enum struct {
		E string `json:"e" jsonschema:"enum=a,enum=a"`
	}
	type Extras struct {
		N int `json:"n" jsonschema_extras:"multipleOf=0"`
	}
	g := mustNew(t, Options{})
	assert.EqualError(t, handlerErr[Out](g), `contractguard: contractguard.badValueIn.M: jsonschema tag "multipleOf=0": /multipleOf: invalid schema: must be > 0`)
	assert.ErrorContains(t, handlerErr[Pattern](g), `contractguard: contractguard.Pattern.S: jsonschema tag "pattern=((": /pattern: invalid schema: must be a valid regex`)
	assert.ErrorContains(t, handlerErr[Enum](g), `contractguard: contractguard.Enum.E: jsonschema tag "enum=a,enum=a": /enum: invalid schema: must not repeat items`)
	assert.ErrorContains(t, handlerErr[Extras](g), `contractguard: contractguard.Extras.N: jsonschema_extras tag "multipleOf=0": /multipleOf: invalid schema: must be a number`)
}

// priceText decodes itself from a string such as "12.50 EUR"; its
// field has a rule.
type priceText struct {
	Amount float64 `json:"amount" cg:"cel=self > 0.0,msg=must be positive"`
	Cur    string  `json:"cur"`
}

func (p *priceText) UnmarshalText(b []byte) error {
	a, c, _ := strings.Cut(string(b), " ")
	p.Cur = c
	_, err := fmt.Sscan(a, &p.Amount)
	return err
}

// priceObject decodes itself from an object, into an alias of itself.
type priceObject struct {
	Amount float64 `json:"amount" cg:"cel=self > 0.0,msg=must be positive"`
}

func (p *priceObject) UnmarshalJSON(b []byte) error {
	type plain priceObject
	return json.Unmarshal(b, (*plain)(p))
}

// TestTyped_RulePathsInTypesThatDecodeThemselves: the rules of a type
// that decodes itself run on the value it decoded, but their failures
// were reported at the paths of its fields as members of the body:
// {"price":"-1 EUR"} failed at /price/amount, a pointer into a string
// that resolves to nothing. A field's token is kept where the body has
// that member (a type that decodes an object), else the failure is at
// the value that decoded itself.
func TestTyped_RulePathsInTypesThatDecodeThemselves(t *testing.T) {
	type In struct {
		Price  priceText     `json:"price"`
		List   []priceText   `json:"list"`
		Object priceObject   `json:"object"`
		Objs   []priceObject `json:"objs"`
	}
	h := Handle(mustNew(t, Options{}), func(http.ResponseWriter, *http.Request, In) {})
	eb := rejected(t, send(h, "POST", "/", `{"price":"-1 EUR","list":["2 EUR","-3 USD"],"object":{"amount":-1},"objs":[{"amount":1},{"amount":0}]}`), 422, CodeInvariantViolated)
	assert.Equal(t, []string{"/price", "/list/1", "/object/amount", "/objs/1/amount"}, paths(eb.Details))
}

type plainBase struct {
	X int `json:"x"`
}

// TestTyped_RuleOnAnUnexportedEmbeddedStruct: a field rule on an
// unexported embedded struct was refused with a wrong reason, a question
// about a json:"-" tag the field does not have ("field \"plainBase\" is
// not visible to rules (is it tagged json:\"-\"?)"). It says what is
// wrong and what to do.
func TestTyped_RuleOnAnUnexportedEmbeddedStruct(t *testing.T) {
	type In struct {
		plainBase `cg:"cel=self.x > 0,msg=x must be positive"`
		Y         int `json:"y"`
	}
	err := handlerErr[In](mustNew(t, Options{}))
	assert.EqualError(t, err, `contractguard: contractguard.In.plainBase: cg tag on an unexported embedded field, which rules cannot read as self: put its rules on a blank field of contractguard.In or of contractguard.plainBase`)
}

// ownSchema gives invopop its schema, which looks into none of its
// fields' tags.
type ownSchema struct {
	N int `json:"n" jsonschema:"maximum=5"`
}

func (ownSchema) JSONSchema() *jsonschema.Schema { return &jsonschema.Schema{Type: "object"} }

// aliased is described as another type.
type aliased struct {
	N int `json:"n" jsonschema:"maximum=5"`
}

func (aliased) JSONSchemaAlias() any { return struct{}{} }

// TestTyped_SchemaTagsInTypesThatGiveTheirSchema: invopop describes a
// type with a JSONSchema method by what it returns, and one with
// JSONSchemaAlias as the other type, reading none of its fields' tags:
// maximum=5 on such a field checked nothing ({"c":{"n":100}} reached the
// handler). Refused at registration, as on a type that decodes itself.
func TestTyped_SchemaTagsInTypesThatGiveTheirSchema(t *testing.T) {
	type Own struct {
		C ownSchema `json:"c"`
	}
	type Alias struct {
		A []aliased `json:"a"`
	}
	g := mustNew(t, Options{})
	assert.EqualError(t, handlerErr[Own](g), `contractguard: contractguard.ownSchema.N: jsonschema tag on a field of contractguard.ownSchema, which gives its own schema (JSONSchema): invopop/jsonschema reads none of its fields' tags: put the keyword in JSONSchema, or check it by a cg rule`)
	assert.EqualError(t, handlerErr[Alias](g), `contractguard: contractguard.aliased.N: jsonschema tag on a field of contractguard.aliased, which gives its own schema (JSONSchemaAlias): invopop/jsonschema reads none of its fields' tags: put the keyword in JSONSchemaAlias, or check it by a cg rule`)
	assert.ErrorContains(t, handlerErr[ownSchema](g), `contractguard: contractguard.ownSchema.N: jsonschema tag on a field of contractguard.ownSchema, which gives its own schema (JSONSchema)`)
}

// TestTyped_SchemaTagsBesideASchemaFile: a request type whose schema is
// a cg:"schema=" file is not reflected, so no jsonschema tag of its
// fields is read: maximum=5 on Amount checked nothing, and
// {"amount":100} reached the handler. Refused at registration, as on a
// type that gives its own schema; jsonschema:"-" says nothing to check.
func TestTyped_SchemaTagsBesideASchemaFile(t *testing.T) {
	type Tagged struct {
		_       struct{} `cg:"schema=refund.json"`
		OrderID string   `json:"orderId"`
		Amount  float64  `json:"amount" jsonschema:"maximum=5"`
	}
	type Extras struct {
		_      struct{} `cg:"schema=refund.json"`
		Amount float64  `json:"amount" jsonschema_extras:"x-contractguard-scan=false"`
	}
	type Left struct {
		_       struct{} `cg:"schema=refund.json"`
		OrderID string   `json:"orderId" jsonschema:"-"`
		Amount  float64  `json:"amount"`
	}
	g := mustNew(t, Options{SchemaFS: fstest.MapFS{"refund.json": {Data: []byte(`{"type":"object","properties":{"amount":{"type":"number","maximum":500}}}`)}}})
	assert.EqualError(t, handlerErr[Tagged](g), `contractguard: contractguard.Tagged.Amount: jsonschema tag on a field of contractguard.Tagged, whose schema is the file refund.json (cg:"schema=refund.json"): none of its fields' tags is read: put the keyword in the file, or check it by a cg rule`)
	assert.EqualError(t, handlerErr[Extras](g), `contractguard: contractguard.Extras.Amount: jsonschema_extras tag on a field of contractguard.Extras, whose schema is the file refund.json (cg:"schema=refund.json"): none of its fields' tags is read: put the keyword in the file, or check it by a cg rule`)
	assert.EqualError(t, handlerErr[*Tagged](g), `contractguard: contractguard.Tagged.Amount: jsonschema tag on a field of contractguard.Tagged, whose schema is the file refund.json (cg:"schema=refund.json"): none of its fields' tags is read: put the keyword in the file, or check it by a cg rule`)
	assert.NoError(t, handlerErr[Left](g))
}

// TestTyped_URLFieldIsARegistrationError: invopop describes a url.URL as
// a uri string, and encoding/json decodes it from an object of its
// fields, so no value passed both: a T with one registered, and every
// body that sent it was refused ("must be an object, not a string" for
// "http://x/", "must be a string, not an object" for {"Host":"x"}).
// Refused at registration, naming the field; an embedded url.URL, whose
// fields both read as members, is let through.
func TestTyped_URLFieldIsARegistrationError(t *testing.T) {
	type Field struct {
		U url.URL `json:"u"`
	}
	type Held struct {
		U map[string][]*url.URL `json:"u,omitempty"`
	}
	type Embedded struct {
		url.URL
	}
	g := mustNew(t, Options{})
	const why = `invopop/jsonschema describes url.URL as a uri string, which encoding/json does not decode into it (it reads an object of its fields): no value would pass both: take a string, and url.Parse it`
	assert.EqualError(t, handlerErr[Field](g), `contractguard: contractguard.Field.U: `+why)
	assert.EqualError(t, handlerErr[Held](g), `contractguard: contractguard.Held.U: `+why)
	assert.EqualError(t, handlerErr[*url.URL](g), `contractguard: *url.URL: `+why)
	assert.NoError(t, handlerErr[Embedded](g))
	h := Handle(g, func(http.ResponseWriter, *http.Request, Embedded) {})
	assert.Equal(t, 200, send(h, "POST", "/", `{"Scheme":"http","Opaque":"","User":{},"Host":"x","Path":"/","RawPath":"","OmitHost":false,"ForceQuery":false,"RawQuery":"","Fragment":"","RawFragment":""}`).Code)
}

// TestTyped_TimeFormatOtherThanDateTime: a format tag on a time.Time
// replaces invopop's date-time, and T decodes RFC 3339 date-times only:
// with format=date, "2024-01-02" passed the schema and T refused it,
// "2024-01-02T00:00:00Z" was refused by the schema: every body that sent
// the member was refused. Refused at registration; another keyword is
// let through.
func TestTyped_TimeFormatOtherThanDateTime(t *testing.T) {
	type Date struct {
		D time.Time `json:"d" jsonschema:"format=date"`
	}
	type Dates struct {
		D []*time.Time `json:"d" jsonschema:"format=time"`
	}
	type DateTime struct {
		D time.Time `json:"d" jsonschema:"pattern=Z$"`
	}
	g := mustNew(t, Options{})
	assert.EqualError(t, handlerErr[Date](g), `contractguard: contractguard.Date.D: jsonschema tag "format=date": a time.Time holds an RFC 3339 date-time only (format=date-time): no value would pass both`)
	assert.EqualError(t, handlerErr[Dates](g), `contractguard: contractguard.Dates.D: jsonschema tag "format=time": a time.Time holds an RFC 3339 date-time only (format=date-time): no value would pass both`)
	h := Handle(g, func(http.ResponseWriter, *http.Request, DateTime) {})
	assert.Equal(t, 200, send(h, "POST", "/", `{"d":"2024-01-02T00:00:00Z"}`).Code)
	rejected(t, send(h, "POST", "/", `{"d":"2024-01-02T00:00:00+01:00"}`), 400, CodeSchemaInvalid)
}

// priceList is a slice type that decodes itself from one string
// ("2 EUR;-3 USD"); its elements have rules.
type priceList []priceText

func (l *priceList) UnmarshalText(b []byte) error {
	for _, s := range strings.Split(string(b), ";") {
		var p priceText
		if err := p.UnmarshalText([]byte(s)); err != nil {
			return err
		}
		*l = append(*l, p)
	}
	return nil
}

// priceMap is a map type that decodes itself from one string
// ("a:2 EUR;b:-3 USD").
type priceMap map[string]priceText

func (m *priceMap) UnmarshalText(b []byte) error {
	*m = priceMap{}
	for _, s := range strings.Split(string(b), ";") {
		k, v, _ := strings.Cut(s, ":")
		var p priceText
		if err := p.UnmarshalText([]byte(v)); err != nil {
			return err
		}
		(*m)[k] = p
	}
	return nil
}

// TestTyped_RulePathsInSliceAndMapTypesThatDecodeThemselves: a slice or
// map type that decodes itself (from a string) is opaque as a struct
// type is, but only struct types were marked so: {"list":"2 EUR;-3 USD"}
// failed at /list/1/amount, a pointer into a string. The failure is at
// the value that decoded itself.
func TestTyped_RulePathsInSliceAndMapTypesThatDecodeThemselves(t *testing.T) {
	type In struct {
		List priceList `json:"list"`
		Map  priceMap  `json:"map"`
	}
	h := Handle(mustNew(t, Options{}), func(http.ResponseWriter, *http.Request, In) {})
	eb := rejected(t, send(h, "POST", "/", `{"list":"2 EUR;-3 USD","map":"a:2 EUR;b:-3 USD"}`), 422, CodeInvariantViolated)
	assert.Equal(t, []string{"/list", "/map"}, paths(eb.Details))
}

// TestTyped_SchemaTagValueInAnAnonymousStruct: the property of a field
// of an anonymous struct type holds that struct's fields, so a tag value
// the compiler refuses on one of them was reported as the outer field's
// tag ("In.Anon: jsonschema tag \"minItems=1\":
// /items/properties/y/pattern"), a tag that is fine. The field whose tag
// it is is named, with that tag.
func TestTyped_SchemaTagValueInAnAnonymousStruct(t *testing.T) {
	type In struct {
		Anon []struct {
			Y string `json:"y" jsonschema:"pattern=(("`
		} `json:"anon" jsonschema:"minItems=1"`
	}
	err := handlerErr[In](mustNew(t, Options{}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `}.Y: jsonschema tag "pattern=((": /pattern: invalid schema: must be a valid regex`)
	assert.NotContains(t, err.Error(), "minItems")
}

// TestTyped_TagKeyWithAnEqualsSign: a cg (or jsonschema) key written
// with "=" for its colon, in the pairs' own syntax (cg="cel=…"), is where
// reflect stops reading the tag, as cg: "…" is, but only a key followed by
// a colon was looked for: the rule never ran and registration passed.
// (Made at run time: go vet refuses such tags in source.)
func TestTyped_TagKeyWithAnEqualsSign(t *testing.T) {
	field := func(tag string) reflect.StructField {
		return reflect.StructField{Name: "Amount", Type: reflect.TypeFor[float64](), Tag: reflect.StructTag(tag)}
	}
	g := mustNew(t, Options{})
	for tag, want := range map[string]string{
		`json:"amount" cg="cel=self > 0,msg=positive"`:  `cg tag not read: Go's reflect stops reading the field's tag at "cg=\"cel=self > 0,msg=positive\""`,
		`json:"amount" cg ="cel=self > 0,msg=positive"`: `cg tag not read: Go's reflect stops reading the field's tag at "cg =`,
		`json:"amount" jsonschema="maximum=5"`:          `jsonschema tag not read: invopop/jsonschema stops reading the field's tag at "jsonschema=\"maximum=5\""`,
	} {
		_, err := g.typedContract(reflect.StructOf([]reflect.StructField{field(tag)}))
		assert.ErrorContains(t, err, want, tag)
		// The advice for a key given twice is not this one's.
		assert.NotContains(t, err.Error(), "write all the keywords in one", tag)
	}
}

// ownSchemaDecoding gives invopop its schema and decodes itself.
type ownSchemaDecoding struct {
	N int `json:"n" jsonschema:"maximum=5"`
}

func (ownSchemaDecoding) JSONSchema() *jsonschema.Schema { return &jsonschema.Schema{Type: "object"} }

func (d *ownSchemaDecoding) UnmarshalJSON(b []byte) error {
	type plain ownSchemaDecoding
	return json.Unmarshal(b, (*plain)(d))
}

// TestTyped_SchemaTagsInTypesThatGiveTheirSchemaAndDecodeThemselves: a
// type with a JSONSchema method that also decodes itself was checked as
// a type that decodes itself, which leaves a type that gives its schema
// to invopop and so checked none of its fields' tags: maximum=5 checked
// nothing and {"c":{"n":100}} reached the handler. Refused, as on a type
// that gives its schema alone.
func TestTyped_SchemaTagsInTypesThatGiveTheirSchemaAndDecodeThemselves(t *testing.T) {
	type In struct {
		C ownSchemaDecoding `json:"c"`
	}
	assert.EqualError(t, handlerErr[In](mustNew(t, Options{})), `contractguard: contractguard.ownSchemaDecoding.N: jsonschema tag on a field of contractguard.ownSchemaDecoding, which gives its own schema (JSONSchema): invopop/jsonschema reads none of its fields' tags: put the keyword in JSONSchema, or check it by a cg rule`)
}

// AliasTarget is the type aliasedAsTarget is described as: its tags are
// the ones invopop reads.
type AliasTarget struct {
	S string `json:"s" jsonschema:"minLenght=5"`
}

type aliasedAsTarget struct {
	S string `json:"s"`
}

func (aliasedAsTarget) JSONSchemaAlias() any { return AliasTarget{} }

// TestTyped_SchemaTagsOfAnAliasTarget: invopop describes a type with a
// JSONSchemaAlias method as the type it returns, reading that type's
// tags, but the tag check stopped at the method: a keyword invopop drops
// without a word on the target's fields (minLenght=5) passed
// registration, where on the target as T, or as a field, it is refused.
func TestTyped_SchemaTagsOfAnAliasTarget(t *testing.T) {
	type In struct {
		A aliasedAsTarget `json:"a"`
	}
	refusedAsAliasTarget[In](t)
}

// aliasedAndDescribed has both methods by which invopop takes a type's
// schema from the type: it looks for JSONSchemaAlias first, and describes
// the type as AliasTarget, whose tags it reads.
type aliasedAndDescribed struct {
	S string `json:"s"`
}

func (aliasedAndDescribed) JSONSchemaAlias() any { return AliasTarget{} }

func (aliasedAndDescribed) JSONSchema() *jsonschema.Schema { return &jsonschema.Schema{Type: "object"} }

// TestTyped_SchemaTagsOfAnAliasTargetBesideJSONSchema: the tag check took
// JSONSchema first, where invopop takes JSONSchemaAlias, and so never
// checked the tags of the type invopop describes it as (minLenght=5).
func TestTyped_SchemaTagsOfAnAliasTargetBesideJSONSchema(t *testing.T) {
	type In struct {
		A aliasedAndDescribed `json:"a"`
	}
	refusedAsAliasTarget[In](t)
}

// aliasedAmount decodes itself from an object and is described, by its
// JSONSchemaAlias method, as AliasTarget: a type of no struct kind.
type aliasedAmount int64

func (*aliasedAmount) UnmarshalJSON([]byte) error { return nil }

func (aliasedAmount) JSONSchemaAlias() any { return AliasTarget{} }

// TestTyped_SchemaTagsOfAnAliasTargetOfNoStruct: invopop takes the alias
// of a type of any kind, before all else; the tag check looked for the
// method on struct types only, and the target's minLenght=5 passed.
func TestTyped_SchemaTagsOfAnAliasTargetOfNoStruct(t *testing.T) {
	type In struct {
		A aliasedAmount `json:"a"`
	}
	refusedAsAliasTarget[In](t)
}

// pointerSchemaMoney decodes itself from a string and has a JSONSchema
// method on *T, which invopop does not call (it looks on T).
type pointerSchemaMoney struct {
	Amount   string
	Currency string
}

func (m *pointerSchemaMoney) UnmarshalText(b []byte) error {
	m.Amount, m.Currency, _ = strings.Cut(string(b), " ")
	return nil
}

func (*pointerSchemaMoney) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string"}
}

// TestTyped_SelfDecodingTypeWithAJSONSchemaOnItsPointer: selfDecoding
// left a type with a JSONSchema method on *T to invopop, which looks for
// the method on T alone and so described the struct by its fields, an
// object: every string T decodes ("2 EUR") was refused. It is described
// as what it decodes, as when it has no such method.
func TestTyped_SelfDecodingTypeWithAJSONSchemaOnItsPointer(t *testing.T) {
	type In struct {
		M pointerSchemaMoney `json:"m"`
	}
	var got In
	h := Handle(mustNew(t, Options{}), func(w http.ResponseWriter, r *http.Request, in In) { got = in })
	require.Equal(t, 200, send(h, "POST", "/", `{"m":"2 EUR"}`).Code)
	assert.Equal(t, pointerSchemaMoney{"2", "EUR"}, got.M)
	rejected(t, send(h, "POST", "/", `{"m":{"Amount":"2"}}`), 400, CodeSchemaInvalid)
}

// aliasedList is a named slice type that invopop describes, by its
// JSONSchemaAlias method, as AliasTarget.
type aliasedList []string

func (aliasedList) JSONSchemaAlias() any { return AliasTarget{} }

// TestTyped_SchemaTagsOfASliceTypesAliasTarget: the tag check went
// through a slice type to its elements before looking for the method,
// where invopop takes the slice type's alias: the target's minLenght=5
// passed.
func TestTyped_SchemaTagsOfASliceTypesAliasTarget(t *testing.T) {
	type In struct {
		A aliasedList `json:"a"`
	}
	refusedAsAliasTarget[In](t)
}

// extendedSelfDecoding decodes itself and has a JSONSchemaExtend method on
// T: invopop describes it by its fields (reading their tags), then
// extends that schema.
type extendedSelfDecoding struct {
	S string `json:"s" jsonschema:"minLenght=5"`
}

func (*extendedSelfDecoding) UnmarshalJSON([]byte) error { return nil }

func (extendedSelfDecoding) JSONSchemaExtend(*jsonschema.Schema) {}

// TestTyped_SchemaTagsOfASelfDecodingTypeInvopopDescribes: a type that
// decodes itself and has a JSONSchemaExtend method on T is described by
// invopop from its fields, whose tags it reads, but the tag check stopped
// at any type that decodes itself: minLenght=5 on its field, which
// invopop drops without a word, passed registration. Its fields are
// checked as those of any struct invopop describes.
func TestTyped_SchemaTagsOfASelfDecodingTypeInvopopDescribes(t *testing.T) {
	type In struct {
		A extendedSelfDecoding `json:"a"`
	}
	g := mustNew(t, Options{})
	const want = `contractguard: contractguard.extendedSelfDecoding.S: jsonschema tag "minLenght=5" has no effect on a field of JSON type string: a keyword, or a value, invopop/jsonschema does not take there`
	assert.EqualError(t, handlerErr[In](g), want)
	assert.EqualError(t, handlerErr[extendedSelfDecoding](g), want)
	assert.EqualError(t, handlerErr[*extendedSelfDecoding](g), want)
}

// aliasLoopA and aliasLoopB are each other's JSONSchemaAlias; aliasSelf
// aliases a list of itself.
type aliasLoopA struct{ X int }

func (aliasLoopA) JSONSchemaAlias() any { return new(aliasLoopB) }

type aliasLoopB int

func (aliasLoopB) JSONSchemaAlias() any { return aliasLoopA{} }

type aliasSelf string

func (aliasSelf) JSONSchemaAlias() any { return []aliasSelf{} }

// aliasOfAList aliases a named list of itself, which invopop describes
// by a definition: no loop.
type aliasOfAList struct{ X int }

type aliasedLists []aliasOfAList

func (aliasOfAList) JSONSchemaAlias() any { return aliasedLists{} }

// TestTyped_AliasLoopRefused: a chain of JSONSchemaAlias methods back to
// a type of it made invopop recurse until the stack overflowed, a fatal
// error that ended the program at registration. It is refused, naming
// the chain.
func TestTyped_AliasLoopRefused(t *testing.T) {
	type Two struct {
		A aliasLoopA `json:"a"`
	}
	type Self struct {
		A *aliasSelf `json:"a"`
	}
	type List struct {
		A aliasOfAList `json:"a"`
	}
	g := mustNew(t, Options{})
	assert.EqualError(t, handlerErr[Two](g), "contractguard: contractguard.aliasLoopA: its JSONSchemaAlias leads back to contractguard.aliasLoopA (contractguard.aliasLoopA → contractguard.aliasLoopB → contractguard.aliasLoopA), which invopop/jsonschema would follow for ever: alias another type")
	assert.EqualError(t, handlerErr[Self](g), "contractguard: contractguard.aliasSelf: its JSONSchemaAlias leads back to contractguard.aliasSelf (contractguard.aliasSelf → contractguard.aliasSelf), which invopop/jsonschema would follow for ever: alias another type")
	assert.NoError(t, handlerErr[List](g))
}

// refusedAsAliasTarget asserts that registering In is refused as
// registering AliasTarget itself is: for the tag of AliasTarget's that
// invopop drops, reached through an alias.
func refusedAsAliasTarget[In any](t *testing.T) {
	t.Helper()
	g := mustNew(t, Options{})
	want := handlerErr[AliasTarget](g)
	require.Error(t, want)
	assert.EqualError(t, handlerErr[In](g), want.Error())
}
