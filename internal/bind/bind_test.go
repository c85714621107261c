package bind

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
)

type Inner struct {
	Qty   int32   `json:"qty"`
	Price float64 `json:"price"`
}

type Base struct {
	Source string `json:"source"`
	Shadow string `json:"shadow"`
}

type other struct {
	Hidden string `json:"hiddenInner"`
}

type Named struct {
	X int `json:"x"`
}

type Sample struct {
	Base
	*other
	Named     `json:"named"`
	Shadow    string           `json:"shadow"`
	Name      string           `json:"name"`
	Count     int              `json:"count"`
	Small     uint8            `json:"small"`
	Ratio     float32          `json:"ratio"`
	OK        bool             `json:"ok"`
	Ptr       *Inner           `json:"ptr"`
	Items     []Inner          `json:"items"`
	Fixed     [2]int           `json:"fixed"`
	ByName    map[string]Inner `json:"byName"`
	ByID      map[int]string   `json:"byId"`
	Tags      []string         `json:"tags,omitempty"`
	Raw       json.RawMessage  `json:"raw"`
	At        time.Time        `json:"at"`
	Num       json.Number      `json:"num"`
	Bytes     []byte           `json:"bytes"`
	Dur       textDuration     `json:"dur"`
	Skipped   string           `json:"-"`
	NoTag     string
	unexposed string
}

type textDuration struct{ d time.Duration }

func (t *textDuration) UnmarshalText(b []byte) error {
	d, err := time.ParseDuration(string(b))
	t.d = d
	return err
}

func bindJSON(t *testing.T, v any, src string) []string {
	t.Helper()
	tree, err := jsonbody.Parse([]byte(src), 64)
	require.NoError(t, err)
	var errs []string
	Into(reflect.ValueOf(v).Elem(), tree.Root(), failure.ReportFunc(func(p, m string) { errs = append(errs, p+": "+m) }))
	return errs
}

func TestInto(t *testing.T) {
	var s Sample
	errs := bindJSON(t, &s, `{
		"source":"src","shadow":"outer","named":{"x":7},"name":"n","count":-3,"small":255,"ratio":0.5,"ok":true,
		"ptr":{"qty":2,"price":1.5},"items":[{"qty":1,"price":0},{"qty":2,"price":3}],"fixed":[1,2],
		"byName":{"a":{"qty":9,"price":9}},"byId":{"42":"x"},"raw":{"k":[1,2]},"at":"2026-11-21T10:15:00.5+01:00",
		"num":123456789012345678901234567890,"bytes":"aGk=","dur":"1m30s","Skipped":"no","NoTag":"yes",
		"unexposed":"no","extra":1}`)
	require.Empty(t, errs)
	want := Sample{
		Base:   Base{Source: "src"},
		Named:  Named{X: 7},
		Shadow: "outer", Name: "n", Count: -3, Small: 255, Ratio: 0.5, OK: true,
		Ptr:    &Inner{2, 1.5},
		Items:  []Inner{{1, 0}, {2, 3}},
		Fixed:  [2]int{1, 2},
		ByName: map[string]Inner{"a": {9, 9}},
		ByID:   map[int]string{42: "x"},
		Raw:    json.RawMessage(`{"k":[1,2]}`),
		At:     time.Date(2026, 11, 21, 10, 15, 0, 5e8, time.FixedZone("", 3600)),
		Num:    "123456789012345678901234567890",
		Bytes:  []byte("hi"),
		Dur:    textDuration{90 * time.Second},
		NoTag:  "yes",
	}
	assert.True(t, want.At.Equal(s.At))
	s.At, want.At = time.Time{}, time.Time{}
	assert.Equal(t, want, s)
}

func TestInto_ValuesTheTypeCannotHold(t *testing.T) {
	var s Sample
	errs := bindJSON(t, &s, `{"count":1.0,"small":256,"ptr":{"qty":2147483648,"price":1e400},"items":[{"qty":-1.5}],
		"fixed":["x"],"byId":{"x":"y"},"ok":"true","name":5,"at":"yesterday","bytes":"!!","dur":"soon","ratio":1e39,
		"tags":{},"num":"12"}`)
	assert.ElementsMatch(t, []string{
		"/count: must be written without a fraction or exponent for int",
		"/small: is out of range for uint8",
		"/ptr/qty: is out of range for int32",
		"/ptr/price: is out of range for float64",
		"/items/0/qty: must be an integer",
		"/fixed/0: must be a number, not a string",
		"/fixed: must have exactly 2 items for [2]int, not 1",
		"/byId/x: is not a valid key for int",
		"/ok: must be a boolean, not a string",
		"/name: must be a string, not a number",
		"/at: must be a valid date-time (RFC 3339)",
		"/bytes: must be base64",
		`/dur: is invalid: time: invalid duration "soon"`,
		"/ratio: is out of range for float32",
		"/tags: must be an array, not an object",
		"/num: must be a number, not a string",
	}, errs)
}

func TestInto_CaseSensitive(t *testing.T) {
	var s Sample
	require.Empty(t, bindJSON(t, &s, `{"Name":"x","COUNT":5}`))
	assert.Equal(t, "", s.Name)
	assert.Equal(t, 0, s.Count)
}

func TestInto_NullLeavesValues(t *testing.T) {
	s := Sample{Name: "keep", Ptr: &Inner{}, Items: []Inner{{}}}
	require.Empty(t, bindJSON(t, &s, `{"name":null,"ptr":null,"items":null,"count":null}`))
	assert.Equal(t, "keep", s.Name)
	assert.Nil(t, s.Ptr)
	assert.Nil(t, s.Items)
}

func TestInto_AnyGetsTheTree(t *testing.T) {
	var v struct {
		A any `json:"a"`
	}
	require.Empty(t, bindJSON(t, &v, `{"a":{"n":1.50}}`))
	assert.Equal(t, map[string]any{"n": json.Number("1.50")}, v.A)
}

func TestCheck(t *testing.T) {
	assert.NoError(t, Check(reflect.TypeFor[Sample]()))
	type recursive struct {
		Next *recursive `json:"next"`
		Kids []recursive
	}
	assert.NoError(t, Check(reflect.TypeFor[recursive]()))
	for _, typ := range []reflect.Type{
		reflect.TypeFor[struct{ C chan int }](),
		reflect.TypeFor[struct{ F func() }](),
		reflect.TypeFor[struct{ S fmtStringer }](),
		reflect.TypeFor[struct{ M map[[2]int]string }](),
		reflect.TypeFor[struct {
			N int `json:"n,string"`
		}](),
	} {
		assert.Error(t, Check(typ), "%s", typ)
	}
}

type fmtStringer interface{ String() string }

type fuzzed struct {
	Base
	*Emb
	Emb2
	AuditA // a_id and b_id: one Go name, two members
	AuditB
	*other // hiddenInner, tied with AuditC's: neither field's
	AuditC
	Name  string            `json:"name"`
	Count int16             `json:"count"`
	U     uint32            `json:"u"`
	F     float64           `json:"f"`
	B     bool              `json:"b"`
	P     *Inner            `json:"p"`
	L     []Inner           `json:"l"`
	M     map[string]int64  `json:"m"`
	S     []string          `json:"s"`
	Arr   [3]int16          `json:"arr"`
	MI    map[int16]string  `json:"mi"`
	MU    map[uint8]bool    `json:"mu"`
	MT    map[textKey]int   `json:"mt"`
	F32   float32           `json:"f32"`
	PS    *string           `json:"ps"`
	PP    **int8            `json:"pp"`
	U8    uint8             `json:"u8"`
	By    []byte            `json:"by"`
	Tm    time.Time         `json:"tm"`
	OE    string            `json:"oe,omitempty"`
	OZ    int               `json:"oz,omitzero"`
	SP    []*Inner          `json:"sp"`
	R     json.RawMessage   `json:"r"`
	RL    []json.RawMessage `json:"rl"`
	ID    string            `json:"id"`
	NB    []namedByte       `json:"nb"`
	MTm   map[time.Time]int `json:"mtm"`
	PPI   **Inner           `json:"ppi"`
	MP    map[string]*Inner `json:"mp"`
	V     jsontext.Value    `json:"v"`
	Dec   declines          `json:"dec"`
	DecJ  *declinesToJSON   `json:"decj"`
	From  []fromValue       `json:"from"`
}

// Emb and Emb2 are embedded in fuzzed: x is at the same depth in both,
// a name that goes to neither field.
type Emb struct {
	E1 string `json:"e1"`
	X  int    `json:"x"`
}

type Emb2 struct {
	X int `json:"x"`
	Y int `json:"y"`
}

// textKey reads a map key as its text with "!" after it: every name a
// key of its own.
type textKey string

func (k *textKey) UnmarshalText(b []byte) error {
	*k = textKey(string(b) + "!")
	return nil
}

// FuzzBindVsJSONv2 holds the binder to the library's reading: whenever
// both the strict reader and go-json-experiment/json (case-sensitive, as
// the binder) accept a body, they must produce the same value, and where
// one of them rejects a value the other must too.
func FuzzBindVsJSONv2(f *testing.F) {
	for _, s := range []string{
		`{"name":"a","count":3,"u":4,"f":1.5,"b":true,"p":{"qty":1,"price":2},"l":[{"qty":1}],"m":{"a":1},"s":["x"],"arr":[1,2,3],"source":"s"}`,
		`{"count":1.0}`, `{"count":40000}`, `{"count":-32768}`, `{"u":-1}`, `{"u":-0}`, `{"u":4294967296}`, `{"f":-0.0}`, `{"f":0.30000000000000004}`, `{"Name":"x"}`, `{"p":null,"l":null}`, `{"arr":[1,2,3,4]}`, `{"f":1e400}`,
		`{"mi":{"0":"a","-0":"b"}}`, `{"mi":{"+1":"a"}}`, `{"mi":{"01":"a"}}`, `{"mi":{"-1":"a","32768":"b"}}`, `{"mu":{"-0":true}}`,
		`{"mu":{"255":true,"256":false}}`, `{"mt":{"a":1,"b":2}}`, `{"f32":1e39}`, `{"f32":3.4028235e38}`, `{"f32":1.0000001}`,
		`{"ps":null,"pp":7}`, `{"pp":null}`, `{"u8":255}`, `{"by":"aGk="}`, `{"by":"aGk"}`, `{"by":"aGk=\n"}`, `{"by":"aG\r\nk="}`, `{"tm":"2026-01-02T03:04:05Z"}`,
		`{"tm":"2026-01-02t03:04:05z"}`,
		`{"tm":"2026-01-02T3:04:05Z"}`, `{"tm":"2026-01-02T03:04:05,5Z"}`, `{"tm":"2026-01-02T03:04:05+24:00"}`, `{"tm":"2026-01-02T03:04:05-00:60"}`,
		`{"tm":"2026-01-02T03:04:05.123456789+23:59"}`, `{"oe":"","oz":0}`, `{"sp":[null,{"qty":1}]}`, `{"e1":"x","x":1,"y":2}`, `{"e1":null}`,
		`{"r":{"b": 1, "a":["<&>", "\u00e9", 1.50e1 ]}}`, `{"r":null}`, `{"rl":[ "x" ,{ },[ ] , 1e1 ,true,null]}`,
		`{"a_id":"x","b_id":"y","id":"z","hiddenInner":"h"}`, `{"ID":"x"}`, `{"nb":[0,255]}`, `{"nb":"aGk="}`, `{"nb":[256]}`,
		`{"mtm":{"2026-01-02T03:04:05Z":1,"2026-01-02T03:04:05+00:00":2}}`, `{"mtm":{"2026-01-02T3:04:05Z":1}}`,
		`{"ppi":{"qty":1},"mp":{"a":null,"b":{"price":-0}}}`, `{"ppi":null}`, `{"v":[ 1 , "A" ]}`, `{"v":null}`,
		`{"dec":{"a":7},"decj":{"x": [1]},"from":[1,"a",null,{}]}`, `{"dec":null,"decj":null}`, `{"dec":{"a":1.5}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tree, err := jsonbody.Parse(data, 32)
		if err != nil {
			return
		}
		var ours, theirs fuzzed
		var errs []string
		okOurs := Into(reflect.ValueOf(&ours).Elem(), tree.Root(), failure.ReportFunc(func(p, m string) { errs = append(errs, p+": "+m) }))
		errTheirs := jsonv2.Unmarshal(data, &theirs)
		if okOurs != (errTheirs == nil) {
			t.Fatalf("%s: binder ok=%v %v; json v2: %v", data, okOurs, errs, errTheirs)
		}
		if okOurs && !reflect.DeepEqual(ours, theirs) {
			t.Fatalf("%s:\nbinder %+v\njson v2 %+v", data, ours, theirs)
		}
	})
}

// TestInto_ArrayOfItsLength: a Go array takes an array of its length
// only, as json v2 does; the binder dropped the extra items and
// zero-filled the missing ones, as encoding/json does, so a schema file
// that let [1,2,3] through gave a [2]int handler [1 2] (found by
// review).
func TestInto_ArrayOfItsLength(t *testing.T) {
	type In struct {
		A [2]int `json:"a"`
	}
	for body, want := range map[string][]string{
		`{"a":[1,2,3]}`: {"/a: must have exactly 2 items for [2]int, not 3"},
		`{"a":[1]}`:     {"/a: must have exactly 2 items for [2]int, not 1"},
		`{"a":[]}`:      {"/a: must have exactly 2 items for [2]int, not 0"},
		`{"a":[1,2]}`:   nil,
		`{"a":null}`:    nil,
	} {
		var in In
		assert.Equal(t, want, bindJSON(t, &in, body), body)
		var v2 In
		assert.Equal(t, want == nil, jsonv2.Unmarshal([]byte(body), &v2) == nil, "json v2 agrees on %s", body)
	}
}

// TestInto_MapKeysAsJSONv2: an integer key is read from a name that is
// an integer as JSON writes it, and two names of one key are refused,
// as json v2 does. strconv took "+1" and "01" for 1, and a second name
// of a key ("0" then "-0") replaced the first's value: the schema checked
// two members, the handler's map held one.
func TestInto_MapKeysAsJSONv2(t *testing.T) {
	type In struct {
		I map[int]string     `json:"i"`
		U map[uint]string    `json:"u"`
		T map[textKey]string `json:"t"`
	}
	for body, want := range map[string][]string{
		`{"i":{"0":"a","-0":"b"}}`:                   {"/i/-0: is the same int key as an earlier member"},
		`{"i":{"1":"a","01":"b","+1":"c"}}`:          {"/i/01: is not a valid key for int", "/i/+1: is not a valid key for int"},
		`{"u":{"-0":"a","-1":"b"}}`:                  {"/u/-0: is not a valid key for uint", "/u/-1: is not a valid key for uint"},
		`{"i":{" 1":"a","1 ":"b","":"c"}}`:           {"/i/ 1: is not a valid key for int", "/i/1 : is not a valid key for int", "/i/: is not a valid key for int"},
		`{"i":{"-1":"a","0":"b","10":"c"}}`:          nil,
		`{"u":{"0":"a","18446744073709551615":"b"}}`: nil,
	} {
		var in In
		assert.Equal(t, want, bindJSON(t, &in, body), body)
		if want == nil {
			require.NoError(t, jsonv2.Unmarshal([]byte(body), new(In)), body)
		} else {
			require.Error(t, jsonv2.Unmarshal([]byte(body), new(In)), body)
		}
	}
	type dup struct {
		T map[textKey]string `json:"t"`
	}
	var in dup
	require.Empty(t, bindJSON(t, &in, `{"t":{"a":"1","b":"2"}}`))
	assert.Equal(t, map[textKey]string{"a!": "1", "b!": "2"}, in.T)
}

// TestInto_UnmarshalerGetsTheBodyText: a type's UnmarshalJSON gets its
// value's text as the body has it, as json v2 hands it over. It got the
// generic value marshalled again: members sorted by name, <, > and &
// escaped, escapes resolved, so that an order-keeping map lost its order
// and a json.RawMessage passed on, or a signature checked over it, was
// another text than the client's.
func TestInto_UnmarshalerGetsTheBodyText(t *testing.T) {
	type In struct {
		R  json.RawMessage   `json:"r"`
		L  []json.RawMessage `json:"l"`
		RP *json.RawMessage  `json:"rp"`
	}
	body := `{"r":{"z": 1, "a":["<&>", "\u00e9\n", 1.50e1 ]}, "l":[ "x\"y" , {} ,[ 1 ], null ,-0.0 ], "rp" :true }`
	var ours, theirs In
	require.Empty(t, bindJSON(t, &ours, body))
	require.NoError(t, jsonv2.Unmarshal([]byte(body), &theirs))
	assert.Equal(t, `{"z": 1, "a":["<&>", "\u00e9\n", 1.50e1 ]}`, string(ours.R))
	assert.Equal(t, []string{`"x\"y"`, `{}`, `[ 1 ]`, `null`, `-0.0`}, []string{string(ours.L[0]), string(ours.L[1]), string(ours.L[2]), string(ours.L[3]), string(ours.L[4])})
	assert.Equal(t, theirs, ours)

	// The text is a copy: a method that writes to it does not change the
	// body the handler reads.
	src := []byte(`{"s":"abc"}`)
	tree, err := jsonbody.Parse(src, 8)
	require.NoError(t, err)
	var w struct {
		S scribbler `json:"s"`
	}
	require.True(t, Into(reflect.ValueOf(&w).Elem(), tree.Root(), failure.ReportFunc(func(p, m string) { t.Error(p, m) })))
	assert.Equal(t, `{"s":"abc"}`, string(src))
}

// scribbler writes over the text it is given.
type scribbler struct{}

func (*scribbler) UnmarshalJSON(b []byte) error {
	for i := range b {
		b[i] = 'x'
	}
	return nil
}

// TestInto_TimeIsRFC3339: a time.Time takes an RFC 3339 date-time only,
// as json v2 reads it. time.Parse also takes a one-digit hour, a comma
// before the fraction and offsets of 24 hours or 60 minutes
// (go.dev/issue/54580), which the binder bound: a body whose schema does
// not check the format gave the handler a time no RFC 3339 text says.
func TestInto_TimeIsRFC3339(t *testing.T) {
	type In struct {
		T time.Time `json:"t"`
	}
	for s, ok := range map[string]bool{
		"2026-01-02T3:04:05Z": false, "2026-01-02T03:04:05,5Z": false, "2026-01-02T03:04:05+24:00": false,
		"2026-01-02T03:04:05-00:60": false, "2026-01-02T03:04:05.5Z": true, "2026-01-02T03:04:05+23:59": true,
		"2026-01-02T03:04:05-00:00": true, "2026-01-02T03:04:05.123456789Z": true,
	} {
		body := `{"t":"` + s + `"}`
		var ours, theirs In
		errs := bindJSON(t, &ours, body)
		errTheirs := jsonv2.Unmarshal([]byte(body), &theirs)
		if ok {
			assert.Empty(t, errs, s)
			require.NoError(t, errTheirs, s)
			assert.True(t, ours.T.Equal(theirs.T), s)
		} else {
			assert.Equal(t, []string{"/t: must be a valid date-time (RFC 3339)"}, errs, s)
			require.Error(t, errTheirs, s)
		}
	}
}

// TestInto_UnmarshalerFrom: a type with json v2's UnmarshalJSONFrom
// decodes itself from a decoder over its value, in preference to
// UnmarshalJSON, as json v2 has it, and must read that value whole. The
// binder decoded such a type by its fields: the handler got another
// value than json v2 makes of the body.
func TestInto_UnmarshalerFrom(t *testing.T) {
	type In struct {
		F  fromValue  `json:"f"`
		B  fromBoth   `json:"b"`
		P  *fromValue `json:"p"`
		L  []fromValue
		N  fromNone `json:"n"`
		Hf fromHalf `json:"h"`
	}
	body := `{"f":{"got":"x"},"b":[1, 2],"p":null,"L":["a",{}]}`
	var ours, theirs In
	require.Empty(t, bindJSON(t, &ours, body))
	require.NoError(t, jsonv2.Unmarshal([]byte(body), &theirs))
	assert.Equal(t, In{F: fromValue{`from {"got":"x"}`}, B: fromBoth{`from [1, 2]`}, L: []fromValue{{`from "a"`}, {`from {}`}}}, ours)
	assert.Equal(t, theirs, ours)
	assert.True(t, Opaque(reflect.TypeFor[fromValue]()))
	assert.True(t, TakesJSON(reflect.TypeFor[fromValue]()))

	for _, body := range []string{`{"n":1}`, `{"h":[1,2]}`} {
		var ours In
		assert.Len(t, bindJSON(t, &ours, body), 1, body)
		require.Error(t, jsonv2.Unmarshal([]byte(body), new(In)), body)
	}
}

// fromValue records the value its UnmarshalJSONFrom reads.
type fromValue struct {
	Got string `json:"got"`
}

func (f *fromValue) UnmarshalJSONFrom(d *jsontext.Decoder) error {
	v, err := d.ReadValue()
	f.Got = "from " + string(v)
	return err
}

// fromBoth has both methods: json v2 calls UnmarshalJSONFrom.
type fromBoth struct{ Got string }

func (f *fromBoth) UnmarshalJSONFrom(d *jsontext.Decoder) error {
	v, err := d.ReadValue()
	f.Got = "from " + string(v)
	return err
}

func (f *fromBoth) UnmarshalJSON(b []byte) error {
	f.Got = "json " + string(b)
	return nil
}

// fromNone reads nothing; fromHalf reads one token of its value.
type fromNone struct{}

func (*fromNone) UnmarshalJSONFrom(*jsontext.Decoder) error { return nil }

type fromHalf struct{}

func (*fromHalf) UnmarshalJSONFrom(d *jsontext.Decoder) error {
	_, err := d.ReadToken()
	return err
}

// sameKey reads every map key as one.
type sameKey string

func (k *sameKey) UnmarshalText([]byte) error { *k = "k"; return nil }

func TestInto_TextKeysReadAlikeAreRefused(t *testing.T) {
	var in struct {
		M map[sameKey]int `json:"m"`
	}
	body := `{"m":{"a":1,"b":2}}`
	assert.Equal(t, []string{"/m/b: is the same bind.sameKey key as an earlier member"}, bindJSON(t, &in, body))
	require.Error(t, jsonv2.Unmarshal([]byte(body), &in))
}

type hiddenName string
type hiddenCount int

// TestInto_UnexportedEmbeddedNonStructs: encoding/json ignores an
// embedded field of an unexported non-struct type, tagged with a name or
// not; the binder decoded the tagged one, setting a field got through an
// unexported one: every body with the member panicked.
func TestInto_UnexportedEmbeddedNonStructs(t *testing.T) {
	type In struct {
		hiddenName   `json:"name"`
		*hiddenCount `json:"count"`
		X            int `json:"x"`
	}
	require.NoError(t, Check(reflect.TypeFor[In]()))
	var ours, theirs In
	body := `{"name":"a","count":3,"x":1}`
	require.NotPanics(t, func() { assert.Empty(t, bindJSON(t, &ours, body)) })
	require.NoError(t, json.Unmarshal([]byte(body), &theirs))
	assert.Equal(t, theirs, ours)
	assert.Equal(t, In{X: 1}, ours)
}

// TestCheck_UnexportedEmbeddedPointerWithAName: encoding/json decodes the
// member of an unexported embedded pointer to a struct given a json name
// by allocating the pointer, which reflect does not allow through an
// unexported field: it panics, and so did the binder, on every body with
// the member. Refused by Check, once.
func TestCheck_UnexportedEmbeddedPointerWithAName(t *testing.T) {
	type In struct {
		*Inner `json:"inner"`
	}
	type hidden struct {
		*other `json:"other"`
		X      int `json:"x"`
	}
	require.NoError(t, Check(reflect.TypeFor[In]()))
	err := Check(reflect.TypeFor[hidden]())
	require.Error(t, err)
	assert.Equal(t, `bind.hidden.other: an unexported embedded pointer given a json name, which encoding/json cannot allocate: export its type, or embed the struct itself`, err.Error())
}

// TestInto_Base64AsJSONv2: a []byte is standard base64 with nothing
// else in it, as json v2 reads it. base64's DecodeString skips "\r" and
// "\n", so the binder bound "aGk=\n" as json v2 refuses it: a body whose
// schema checked the string's length or pattern gave the handler bytes
// of another text.
func TestInto_Base64AsJSONv2(t *testing.T) {
	type In struct {
		B []byte `json:"b"`
	}
	for _, s := range []string{`aGk=\n`, `aG\r\nk=`, `\naGk=`, `aGk=\r`} {
		body := `{"b":"` + s + `"}`
		var in In
		assert.Equal(t, []string{"/b: must be base64"}, bindJSON(t, &in, body), body)
		require.Error(t, jsonv2.Unmarshal([]byte(body), new(In)), body)
	}
	var in In
	require.Empty(t, bindJSON(t, &in, `{"b":"aGk="}`))
	assert.Equal(t, []byte("hi"), in.B)
}

// namedByte is a byte type of its own: a []namedByte is an array of
// numbers to json v2, not base64.
type namedByte byte

// TestInto_NamedByteSliceIsAnArray: json v2 reads a slice of a named
// byte type as it reads any slice, from an array of numbers; only a
// slice of byte itself is base64. The binder read every slice of a
// uint8 kind as base64: it refused the array json v2 and the reflected
// schema (an array of integers) take, and bound a string json v2 refuses.
func TestInto_NamedByteSliceIsAnArray(t *testing.T) {
	type In struct {
		B []namedByte `json:"b"`
	}
	body := `{"b":[1,255]}`
	var ours, theirs In
	require.Empty(t, bindJSON(t, &ours, body))
	require.NoError(t, jsonv2.Unmarshal([]byte(body), &theirs))
	assert.Equal(t, In{B: []namedByte{1, 255}}, ours)
	assert.Equal(t, theirs, ours)

	body = `{"b":"aGk="}`
	assert.Equal(t, []string{"/b: must be an array, not a string"}, bindJSON(t, new(In), body))
	require.Error(t, jsonv2.Unmarshal([]byte(body), new(In)))
	assert.Equal(t, []string{"/b/0: is out of range for uint8"}, bindJSON(t, new(In), `{"b":[256]}`))
}

// AuditA and AuditB are embedded side by side: their fields share a Go
// name, not a json name.
type AuditA struct {
	ID string `json:"a_id"`
}

type AuditB struct {
	ID string `json:"b_id"`
}

// TestInto_EmbeddedFieldsByJSONName: a promoted field is the member of
// its json name, whatever Go's selector rules say of its Go name, as
// json v2 (and encoding/json) read it. The binder listed fields with
// reflect.VisibleFields, which hides a promoted field behind a
// shallower field of the same Go name and drops two of one Go name at
// one depth: {"a_id":"x"} was skipped, the handler got "" where the
// schema (a cg:"schema=" file's) had checked "x".
func TestInto_EmbeddedFieldsByJSONName(t *testing.T) {
	type Both struct {
		AuditA
		AuditB
	}
	type Shadowed struct {
		AuditA
		ID string `json:"id"`
	}
	type Ignored struct {
		AuditA
		ID string `json:"-"`
	}
	check := func(v any, body string, want any) {
		t.Helper()
		assert.Empty(t, bindJSON(t, v, body), body)
		theirs := reflect.New(reflect.TypeOf(v).Elem())
		require.NoError(t, jsonv2.Unmarshal([]byte(body), theirs.Interface()), body)
		assert.Equal(t, theirs.Interface(), v, body)
		assert.Equal(t, want, v, body)
	}
	check(new(Both), `{"a_id":"x","b_id":"y"}`, &Both{AuditA{"x"}, AuditB{"y"}})
	check(new(Shadowed), `{"a_id":"x","id":"y"}`, &Shadowed{AuditA{"x"}, "y"})
	check(new(Ignored), `{"a_id":"x","ID":"y"}`, &Ignored{AuditA: AuditA{"x"}})

	// A field below an unexported embedded pointer takes part in
	// choosing the field of its name: "n" is in two fields at one
	// depth, and so in neither.
	type tie struct {
		*other
		AuditC
	}
	check(new(tie), `{"hiddenInner":"h"}`, &tie{})
}

// TestInto_BelowAnUnexportedEmbeddedPointer: a member whose field is
// below an unexported embedded pointer is refused, as encoding/json and
// json v2 refuse it (neither can allocate the pointer); the binder
// skipped it, and the handler lost a value the schema had checked
// (found by review).
func TestInto_BelowAnUnexportedEmbeddedPointer(t *testing.T) {
	var s Sample
	assert.Equal(t, []string{"/hiddenInner: cannot be set: its field is below an unexported embedded pointer, which no JSON decoder can allocate"},
		bindJSON(t, &s, `{"hiddenInner":"h","name":"n"}`))
	require.Error(t, jsonv2.Unmarshal([]byte(`{"hiddenInner":"h"}`), new(Sample)))
	assert.Empty(t, bindJSON(t, &s, `{"name":"n"}`), "the type binds without the member")
}

// AuditC has the member hiddenInner, as other has.
type AuditC struct {
	C string `json:"hiddenInner"`
}

// jsonKey decodes itself from JSON, as a map key too: json v2 hands it
// the quoted name.
type jsonKey string

func (k *jsonKey) UnmarshalJSON(b []byte) error { *k = jsonKey(b); return nil }

// fromKey decodes itself from a decoder.
type fromKey int

func (k *fromKey) UnmarshalJSONFrom(d *jsontext.Decoder) error {
	_, err := d.ReadValue()
	*k = 1
	return err
}

// TestInto_MapKeysThatDecodeThemselves: json v2 reads a map key of a
// type with UnmarshalJSON or UnmarshalJSONFrom by that method, from the
// name as a JSON string, and a time.Time key as RFC 3339, as a time.Time
// value. The binder converted the name to a string-kind key and parsed
// it as an integer for an int kind, the method never called ({"a":1}
// gave the key "a" where json v2 gives `"a"`), and read a time key by
// time.Parse, which takes "2026-01-02T3:04:05Z" (go.dev/issue/54580).
// A key type with such a method is refused (the binder has the name,
// not its text); a time key is held to RFC 3339 as a time value is.
func TestInto_MapKeysThatDecodeThemselves(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[struct{ M map[jsonKey]int }](),
		reflect.TypeFor[struct{ M map[fromKey]int }](),
	} {
		err := Check(typ)
		require.Error(t, err, "%s", typ)
		assert.Contains(t, err.Error(), "a map key that decodes itself from JSON (UnmarshalJSON or UnmarshalJSONFrom) is not supported")
	}
	type In struct {
		M map[time.Time]int `json:"m"`
	}
	for key, ok := range map[string]bool{
		"2026-01-02T3:04:05Z": false, "2026-01-02T03:04:05,5Z": false, "2026-01-02T03:04:05+24:00": false,
		"2026-01-02T03:04:05Z": true, "2026-01-02T03:04:05.5+23:59": true,
	} {
		body := `{"m":{"` + key + `":1}}`
		var ours, theirs In
		errs := bindJSON(t, &ours, body)
		errTheirs := jsonv2.Unmarshal([]byte(body), &theirs)
		if ok {
			assert.Empty(t, errs, key)
			require.NoError(t, errTheirs, key)
			require.Len(t, ours.M, 1, key)
			for k := range ours.M {
				for k2 := range theirs.M {
					assert.True(t, k.Equal(k2), key)
				}
			}
		} else {
			assert.Equal(t, []string{"/m/" + key + ": is not a valid key for time.Time"}, errs, key)
			require.Error(t, errTheirs, key)
		}
	}
}

// TestCheck_TagsJSONv2ReadsOtherwise: json tags json v2 reads otherwise
// than the binder are refused by Check, as "string" is. The binder took
// the text before the first comma for the name and ignored the options:
// json v2 matched {"X":1} to `json:"x,case:ignore"`, promoted the fields
// of a field tagged ",embed", refused every object of a type with a
// "format:" option, and read `json:"'x'"` as the member "x"; the binder
// left those fields zero, or bound what json v2 refuses.
func TestCheck_TagsJSONv2ReadsOtherwise(t *testing.T) {
	type Ignore struct {
		X int `json:"x,case:ignore"`
	}
	type Embed struct {
		I Inner `json:",embed"`
	}
	type Format struct {
		B []byte `json:"b,format:hex"`
	}
	type Quoted struct {
		X int `json:"'x'"`
	}
	for _, tt := range []struct {
		typ       reflect.Type
		body, msg string
	}{
		{reflect.TypeFor[Ignore](), `{"X":1}`, `bind.Ignore.X: the json tag option "case:ignore" is not supported`},
		{reflect.TypeFor[Embed](), `{"qty":1}`, `bind.Embed.I: the json tag option "embed" is not supported`},
		{reflect.TypeFor[Format](), `{"b":"6869"}`, `bind.Format.B: the json tag option "format:hex" is not supported`},
		{reflect.TypeFor[Quoted](), `{"x":1}`, `bind.Quoted.X: the json name "'x'", quoted or with a quote or backslash in it, is not supported`},
	} {
		err := Check(tt.typ)
		require.Error(t, err, "%s", tt.typ)
		assert.Equal(t, tt.msg, err.Error())
		// What json v2 makes of the body is not the type's zero value.
		v := reflect.New(tt.typ)
		if jsonv2.Unmarshal([]byte(tt.body), v.Interface()) == nil {
			assert.False(t, v.Elem().IsZero(), "%s", tt.typ)
		}
	}
	type Fine struct {
		X     int `json:"x,case:strict,omitzero,omitempty"`
		Inner `json:",embed"`
	}
	require.NoError(t, Check(reflect.TypeFor[Fine]()))
}

// declines returns errors.ErrUnsupported from UnmarshalJSONFrom, having
// read nothing: json v2 reads it by its fields instead.
type declines struct {
	A int `json:"a"`
}

func (*declines) UnmarshalJSONFrom(*jsontext.Decoder) error { return errors.ErrUnsupported }

// declinesToJSON declines to UnmarshalJSON.
type declinesToJSON struct{ Got string }

func (*declinesToJSON) UnmarshalJSONFrom(*jsontext.Decoder) error { return errors.ErrUnsupported }

func (d *declinesToJSON) UnmarshalJSON(b []byte) error {
	d.Got = "json " + string(b)
	return nil
}

// declinesLate reads a token, then returns errors.ErrUnsupported.
type declinesLate struct{}

func (*declinesLate) UnmarshalJSONFrom(d *jsontext.Decoder) error {
	if _, err := d.ReadToken(); err != nil {
		return err
	}
	return errors.ErrUnsupported
}

// TestInto_UnmarshalerFromDeclines: a type whose UnmarshalJSONFrom
// returns errors.ErrUnsupported having read nothing is read as json v2
// reads it then: by its UnmarshalJSON, else by its Go structure. The
// binder refused every such value ("is invalid: unsupported
// operation"), though json v2 binds it; having read, the method still
// fails it.
func TestInto_UnmarshalerFromDeclines(t *testing.T) {
	type In struct {
		D  declines       `json:"d"`
		DP *declines      `json:"dp"`
		J  declinesToJSON `json:"j"`
		L  declinesLate   `json:"l"`
	}
	body := `{"d":{"a":1},"dp":{"a":2},"j":[1, 2]}`
	var ours, theirs In
	require.Empty(t, bindJSON(t, &ours, body))
	require.NoError(t, jsonv2.Unmarshal([]byte(body), &theirs))
	assert.Equal(t, In{D: declines{1}, DP: &declines{2}, J: declinesToJSON{"json [1, 2]"}}, ours)
	assert.Equal(t, theirs, ours)

	assert.Equal(t, []string{"/d/a: must be a number, not a string"}, bindJSON(t, new(In), `{"d":{"a":"x"}}`))
	require.Error(t, jsonv2.Unmarshal([]byte(`{"d":{"a":"x"}}`), new(In)))
	assert.Len(t, bindJSON(t, new(In), `{"l":{}}`), 1)
	require.Error(t, jsonv2.Unmarshal([]byte(`{"l":{}}`), new(In)))
}

// TestInto_IntErrorsOnlyWhenReported: a number the schema takes as an
// integer ("1e999") that an int cannot hold is explained by reading it as
// a big.Rat (10^999); the binder did that for every element of a long
// array, past the details the reporter takes (a 1 MiB body: 0.4 s).
func TestInto_IntErrorsOnlyWhenReported(t *testing.T) {
	body := "[" + strings.Repeat("1e999,", 999) + "1e999]"
	tree, err := jsonbody.Parse([]byte(body), 64)
	require.NoError(t, err)
	var ints []int
	var uints []uint
	allocs := testing.AllocsPerRun(5, func() {
		assert.False(t, Into(reflect.ValueOf(&ints).Elem(), tree.Root(), failure.Discard))
		assert.False(t, Into(reflect.ValueOf(&uints).Elem(), tree.Root(), failure.Discard))
	})
	// strconv's error (a NumError, its copy of the literal) per element,
	// not the big.Rat's (11 more)
	assert.Less(t, allocs, 2.5*2000)
	assert.Equal(t, []string{"/0: must be written without a fraction or exponent for int"}, bindJSON(t, new([]int), "[1e999]"))
}

// declinesTree declines its UnmarshalJSONFrom at every level of a tree.
type declinesTree struct {
	K []declinesTree `json:"k"`
}

func (*declinesTree) UnmarshalJSONFrom(*jsontext.Decoder) error { return errors.ErrUnsupported }

// TestInto_UnmarshalerFromCostsNoCopyPerValue: each value of a type with
// UnmarshalJSONFrom got a new decoder over a copy of its text: hundreds
// of bytes for an element "{}" of a []T (130 times the body, encoding/json
// 12), and for a recursive type that declines, a copy of each subtree at
// every level (the body times its depth). One decoder now reads them all.
func TestInto_UnmarshalerFromCostsNoCopyPerValue(t *testing.T) {
	flat, err := jsonbody.Parse([]byte("["+strings.Repeat("{},", 999)+"{}]"), 64)
	require.NoError(t, err)
	deep := strings.Repeat(`{"k":[`, 31) + strings.Repeat(`]}`, 31) // 63 levels in an array
	tree, err := jsonbody.Parse([]byte("["+strings.Repeat(deep+",", 99)+deep+"]"), 64)
	require.NoError(t, err)
	tree.Root().Index(0).Raw() // the spans of the body's values, once per body
	var ds []declines
	var ts []declinesTree
	assert.Less(t, testing.AllocsPerRun(5, func() {
		require.True(t, Into(reflect.ValueOf(&ds).Elem(), flat.Root(), failure.Discard))
	}), 20.0)
	assert.Len(t, ds, 1000)
	// A method that reads: the decoder's buffer for what it read.
	var ks []keepsValue
	assert.Less(t, testing.AllocsPerRun(5, func() {
		require.True(t, Into(reflect.ValueOf(&ks).Elem(), flat.Root(), failure.Discard))
	}), 1000.0+20)
	// Each level's slice of one (its array and reflect's header, 31 levels
	// a tree), not a decoder and a copy of the subtree besides.
	assert.Less(t, testing.AllocsPerRun(5, func() {
		require.True(t, Into(reflect.ValueOf(&ts).Elem(), tree.Root(), failure.Discard))
	}), 2*31*100.0+20)
	var theirs []declinesTree
	require.NoError(t, jsonv2.Unmarshal([]byte("["+deep+"]"), &theirs))
	assert.Equal(t, theirs, ts[:1])
}

// selfPointer points to itself; selfPointers through another pointer.
type (
	selfPointer  *selfPointer
	selfPointerA *selfPointerB
	selfPointerB *selfPointerA
)

// TestCheck_PointerToItself: a pointer type that leads through pointers
// back to itself holds no value: decoding anything but null into it
// allocated one pointer after another until the stack overflowed (a
// fatal error, not a panic). Refused when the plan is built.
func TestCheck_PointerToItself(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[selfPointer](), reflect.TypeFor[*selfPointer](), reflect.TypeFor[selfPointerA](),
		reflect.TypeFor[struct {
			P selfPointerB `json:"p"`
		}](),
	} {
		assert.ErrorContains(t, Check(typ), "points, through pointers, to itself", typ.String())
	}
	require.NoError(t, Check(reflect.TypeFor[**int]()))
}

// keepsValue keeps the jsontext.Value ReadValue returns, uncopied (valid
// by the letter only until the decoder reads again).
type keepsValue struct{ V jsontext.Value }

func (k *keepsValue) UnmarshalJSONFrom(d *jsontext.Decoder) error {
	v, err := d.ReadValue()
	k.V = v
	return err
}

// TestInto_UnmarshalerFromKeepsWhatItRead: a decoder shared by a body's
// values must not hand one value's buffer to the next: a method that
// keeps what it read would see it turn into another value's text, one
// the schema checked at another path. (jsontext itself marks a value it
// handed out with '#' once it reads on, its check for such methods; json
// v2 over a []byte hands out the caller's bytes, which stay.)
func TestInto_UnmarshalerFromKeepsWhatItRead(t *testing.T) {
	var ours []keepsValue
	require.Empty(t, bindJSON(t, &ours, `[111, 222, 333]`))
	require.Len(t, ours, 3)
	for i, want := range []string{"111", "222", "333"} {
		assert.Equal(t, want[1:], string(ours[i].V[1:]), i)
	}
}
