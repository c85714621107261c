package contractguard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type LineItem struct {
	_         struct{} `cg:"cel=double(data.quantity) * data.unitPrice <= 5000.0,msg=a line may not exceed 5000"`
	SKU       string   `json:"sku" jsonschema:"minLength=3"`
	Quantity  int      `json:"quantity" jsonschema:"minimum=1" cg:"cel=self <= 100,msg=at most 100 per line"`
	UnitPrice float64  `json:"unitPrice" jsonschema:"minimum=0"`
}

type Limit struct {
	Max float64 `json:"max" cg:"cel=self > 0.0,msg=a limit must be positive"`
}

type Transfer struct {
	_        struct{}         `cg:"cel=data.from != data.to,msg=cannot transfer to the same account"`
	_        struct{}         `cg:"cel=data.amount <= context.user.dailyLimit,msg=amount exceeds your daily limit"`
	From     string           `json:"from" jsonschema:"format=uuid"`
	To       string           `json:"to" jsonschema:"format=uuid"`
	Amount   float64          `json:"amount" jsonschema:"minimum=0.01" cg:"cel=self <= 10000,msg=at most 10000 per transfer"`
	Currency string           `json:"currency" jsonschema:"enum=EUR,enum=USD"`
	Note     string           `json:"note,omitempty" jsonschema:"maxLength=140"`
	Items    []LineItem       `json:"items,omitempty"`
	Limits   map[string]Limit `json:"limits,omitempty"`
}

type Refund struct {
	_       struct{} `cg:"schema=schemas/refund.json"`
	_       struct{} `cg:"cel=data.amount > 0.0,msg=a refund must be positive"`
	OrderID string   `json:"orderId"`
	Amount  float64  `json:"amount"`
}

var schemaFS = fstest.MapFS{
	"schemas/refund.json": {Data: []byte(`{"type":"object","required":["orderId","amount"],"additionalProperties":false,
		"properties":{"orderId":{"type":"string","format":"uuid"},"amount":{"$ref":"money.json"}}}`)},
	"schemas/money.json": {Data: []byte(`{"type":"number","maximum":500}`)},
}

const (
	acctA = "6f1c2a9e-8d3b-4c5a-9e7f-1a2b3c4d5e6f"
	acctB = "0b7e6d5c-4a3b-4c2d-8e1f-0a9b8c7d6e5f"
)

func transfer(mods ...string) string {
	base := `{"from":"` + acctA + `","to":"` + acctB + `","amount":50,"currency":"EUR"`
	for _, m := range mods {
		base += "," + m
	}
	return base + "}"
}

func typedGuard(t testing.TB, o Options) *Guard {
	if o.User == nil {
		o.User = func(r *http.Request) any {
			limit := 20000.0
			if l := r.Header.Get("X-Limit"); l != "" {
				fmt.Sscan(l, &limit)
			}
			return map[string]any{"dailyLimit": limit}
		}
	}
	o.SchemaFS = schemaFS
	return mustNew(t, o)
}

// TestTyped_RuleKinds gives each kind of typed rule a passing and a
// failing request, with the exact status, code, path and message.
func TestTyped_RuleKinds(t *testing.T) {
	g := typedGuard(t, Options{})
	var got Transfer
	mux := http.NewServeMux()
	mux.Handle("POST /transfers", Handle(g, func(w http.ResponseWriter, r *http.Request, in Transfer) {
		got = in
		w.WriteHeader(201)
	}))
	mux.Handle("POST /refunds", Handle(g, func(w http.ResponseWriter, r *http.Request, in Refund) { w.WriteHeader(201) }))

	tests := []struct {
		kind, path, pass, fail string
		status                 int
		code                   string
		want                   []Detail
		header                 []string
	}{
		{"schema keyword from a jsonschema tag", "/transfers", transfer(), transfer(`"note":"` + strings.Repeat("x", 141) + `"`),
			400, CodeSchemaInvalid, []Detail{{"/note", "must be at most 140 characters long"}}, nil},
		{"format from a jsonschema tag", "/transfers", transfer(), strings.Replace(transfer(), acctB, "not-a-uuid", 1),
			400, CodeSchemaInvalid, []Detail{{"/to", "must be a valid UUID"}}, nil},
		{"required field without omitempty", "/transfers", transfer(), `{"from":"` + acctA + `","to":"` + acctB + `","amount":5}`,
			400, CodeSchemaInvalid, []Detail{{"/currency", "is required"}}, nil},
		{"no additional properties", "/transfers", transfer(), transfer(`"extra":1`),
			400, CodeSchemaInvalid, []Detail{{"/extra", "is not allowed"}}, nil},
		{"field rule", "/transfers", transfer(), strings.Replace(transfer(), `"amount":50`, `"amount":10000.5`, 1),
			422, CodeInvariantViolated, []Detail{{"/amount", "at most 10000 per transfer"}}, nil},
		{"struct rule", "/transfers", transfer(), strings.Replace(transfer(), acctB, acctA, 1),
			422, CodeInvariantViolated, []Detail{{"", "cannot transfer to the same account"}}, nil},
		{"context.user rule", "/transfers", transfer(), strings.Replace(transfer(), `"amount":50`, `"amount":100.01`, 1),
			422, CodeInvariantViolated, []Detail{{"", "amount exceeds your daily limit"}}, []string{"X-Limit", "100"}},
		{"nested field rule in a slice", "/transfers", transfer(`"items":[{"sku":"ABC","quantity":1,"unitPrice":1}]`),
			transfer(`"items":[{"sku":"ABC","quantity":1,"unitPrice":1},{"sku":"ABC","quantity":2,"unitPrice":1},{"sku":"XYZ","quantity":101,"unitPrice":1}]`),
			422, CodeInvariantViolated, []Detail{{"/items/2/quantity", "at most 100 per line"}}, nil},
		{"nested struct rule in a slice", "/transfers", transfer(`"items":[{"sku":"ABC","quantity":100,"unitPrice":50}]`),
			transfer(`"items":[{"sku":"ABC","quantity":100,"unitPrice":50.5}]`),
			422, CodeInvariantViolated, []Detail{{"/items/0", "a line may not exceed 5000"}}, nil},
		{"nested schema keyword", "/transfers", transfer(`"items":[{"sku":"ABC","quantity":1,"unitPrice":1}]`),
			transfer(`"items":[{"sku":"AB","quantity":0,"unitPrice":1}]`),
			400, CodeSchemaInvalid, []Detail{{"/items/0/quantity", "must be >= 1"}, {"/items/0/sku", "must be at least 3 characters long"}}, nil},
		{"map value rule", "/transfers", transfer(`"limits":{"daily":{"max":10}}`), transfer(`"limits":{"daily":{"max":10},"weekly":{"max":0}}`),
			422, CodeInvariantViolated, []Detail{{"/limits/weekly/max", "a limit must be positive"}}, nil},
		{"schema file via cg:schema=", "/refunds", `{"orderId":"` + acctA + `","amount":20}`, `{"orderId":"x","amount":501,"note":"n"}`,
			400, CodeSchemaInvalid, []Detail{{"/amount", "must be <= 500"}, {"/note", "is not allowed"}, {"/orderId", "must be a valid UUID"}}, nil},
		{"rule with a schema file", "/refunds", `{"orderId":"` + acctA + `","amount":20}`, `{"orderId":"` + acctA + `","amount":-1}`,
			422, CodeInvariantViolated, []Detail{{"", "a refund must be positive"}}, nil},
		{"a value the schema allows but Go cannot hold", "/transfers", transfer(`"items":[{"sku":"ABC","quantity":2,"unitPrice":1}]`),
			transfer(`"items":[{"sku":"ABC","quantity":2.0,"unitPrice":1}]`),
			400, CodeSchemaInvalid, []Detail{{"/items/0/quantity", "must be written without a fraction or exponent for int"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			assert.Equal(t, 201, send(mux, "POST", tt.path, tt.pass, tt.header...).Code, tt.pass)
			eb := rejected(t, send(mux, "POST", tt.path, tt.fail, tt.header...), tt.status, tt.code)
			assert.Equal(t, tt.want, eb.Details)
		})
	}
	send(mux, "POST", "/transfers", transfer(`"items":[{"sku":"ABC","quantity":3,"unitPrice":1.5}]`, `"limits":{"d":{"max":5}}`))
	assert.Equal(t, Transfer{From: acctA, To: acctB, Amount: 50, Currency: "EUR",
		Items: []LineItem{{SKU: "ABC", Quantity: 3, UnitPrice: 1.5}}, Limits: map[string]Limit{"d": {Max: 5}}}, got)
}

// OrderForm and its YAML twin (testdata/typed/orderform.yaml) describe the
// same contract; all their rules are struct-level, so their details agree
// to the path.
type OrderLine struct {
	SKU       string  `json:"sku"`
	Quantity  int     `json:"quantity" jsonschema:"minimum=1"`
	UnitPrice float64 `json:"unitPrice" jsonschema:"minimum=0"`
}

type OrderForm struct {
	_        struct{}    `cg:"cel=data.items.all(i, i.quantity <= 100),msg=at most 100 of one item per order"`
	_        struct{}    `cg:"cel=data.total <= 10000,msg=orders over 10000 need a sales contact"`
	_        struct{}    `cg:"cel=data.coupon == '' || data.total >= 20,msg=a coupon needs an order of at least 20"`
	OrderID  string      `json:"orderId" jsonschema:"format=uuid"`
	Email    string      `json:"email" jsonschema:"format=email"`
	Items    []OrderLine `json:"items" jsonschema:"minItems=1"`
	Currency string      `json:"currency" jsonschema:"enum=EUR,enum=USD,enum=GBP"`
	Total    float64     `json:"total" jsonschema:"minimum=0"`
	PlacedAt time.Time   `json:"placedAt"`
	Coupon   string      `json:"coupon,omitempty"`
	Website  string      `json:"website,omitempty" jsonschema:"format=uri"`
	IP       string      `json:"ip,omitempty" jsonschema:"format=ipv4"`
}

func TestTyped_DifferentialWithYAMLTwin(t *testing.T) {
	file := mustNew(t, Options{ContractsDir: "testdata/typed"})
	typed := mustNew(t, Options{})
	fileH := file.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	typedH := Handle(typed, func(w http.ResponseWriter, r *http.Request, in OrderForm) {})

	valid := map[string]any{
		"orderId": acctA, "email": "ada@example.com", "currency": "EUR", "total": 40.5,
		"placedAt": "2026-11-21T10:15:00Z",
		"items":    []any{map[string]any{"sku": "A", "quantity": 2, "unitPrice": 20.25}},
	}
	with := func(kv ...any) string {
		m := map[string]any{}
		for k, v := range valid {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	item := func(sku string, q, p any) map[string]any {
		return map[string]any{"sku": sku, "quantity": q, "unitPrice": p}
	}
	bodies := []string{
		with(),
		with("coupon", "WINTER", "total", 25),
		with("coupon", "WINTER", "total", 19.99),
		with("total", 10000),
		with("total", 10000.01),
		with("total", -1),
		with("total", "12"),
		with("total", nil),
		with("orderId", "nope"),
		with("orderId", 12),
		with("email", "ada.example.com"),
		with("email", "@example.com"),
		with("currency", "YEN"),
		with("currency", nil),
		with("items", []any{}),
		with("items", []any{item("A", 0, 1)}),
		with("items", []any{item("A", 101, 1)}),
		with("items", []any{item("A", 100, 1), item("B", 101, 1)}),
		with("items", []any{item("A", 1, -0.01)}),
		with("items", []any{map[string]any{"sku": "A", "quantity": 1}}),
		with("items", []any{map[string]any{"sku": "A", "quantity": 1, "unitPrice": 1, "x": 1}}),
		with("items", "none"),
		with("placedAt", "2026-11-21"),
		with("placedAt", "2026-11-21T10:15:00+01:00"),
		with("website", "https://example.com/shop"),
		with("website", "not a uri"),
		with("ip", "10.0.0.1"),
		with("ip", "10.0.0.256"),
		with("extra", true),
		with("total", 10001, "currency", "YEN", "email", "x"),
		with("total", 10001, "items", []any{item("A", 101, 1)}, "coupon", "C"),
		`{}`,
		`[]`,
		`null`,
		``,
		`{"orderId":"` + acctA + `","orderId":"x"}`,
		`{"total":1,"Total":2}`,
	}
	for _, b := range bodies {
		wf := send(fileH, "POST", "/orders", b)
		wt := send(typedH, "POST", "/orders", b)
		require.Equal(t, wf.Code, wt.Code, "%s\nfile:  %s\ntyped: %s", b, wf.Body, wt.Body)
		if wf.Code != 200 {
			var ef, et errorBody
			require.NoError(t, json.Unmarshal(wf.Body.Bytes(), &ef))
			require.NoError(t, json.Unmarshal(wt.Body.Bytes(), &et))
			assert.Equal(t, ef, et, b)
		}
	}
	assert.GreaterOrEqual(t, len(bodies), 30)
}

func TestTyped_RegistrationErrors(t *testing.T) {
	g := mustNew(t, Options{})
	type UnknownField struct {
		_      struct{} `cg:"cel=data.amuont > 0,msg=m"`
		Amount float64  `json:"amount"`
	}
	type TypeError struct {
		Amount float64 `json:"amount" cg:"cel=self > 'x',msg=m"`
	}
	type CelWithoutMsg struct {
		Amount float64 `json:"amount" cg:"cel=self > 0"`
	}
	type BadQuoting struct {
		Amount float64 `json:"amount" cg:"cel='self > 0,msg=m"`
	}
	type SchemaOnField struct {
		Amount float64 `json:"amount" cg:"schema=a.json"`
	}
	type NoSchemaFS struct {
		_ struct{} `cg:"schema=a.json"`
	}
	type Chan struct {
		C chan int `json:"c"`
	}
	tests := []struct {
		err  error
		want string
	}{
		{handlerErr[UnknownField](g), "contractguard: contractguard.UnknownField: rule 1 (data.amuont > 0): 1:5: undefined field 'amuont'"},
		{handlerErr[TypeError](g), "contractguard: contractguard.TypeError.Amount: rule 1 (self > 'x'): 1:6: found no matching overload for '_>_' applied to '(double, string)'"},
		{handlerErr[CelWithoutMsg](g), "contractguard: contractguard.CelWithoutMsg.Amount: cg tag: cel=self > 0 needs a msg= after it"},
		{handlerErr[BadQuoting](g), "contractguard: contractguard.BadQuoting.Amount: cg tag: cel: unterminated quote"},
		{handlerErr[SchemaOnField](g), "contractguard: contractguard.SchemaOnField.Amount: cg tag: schema= belongs on a blank field (_ struct{})"},
		{handlerErr[NoSchemaFS](g), `contractguard: contractguard.NoSchemaFS: cg:"schema=a.json" needs Options.SchemaFS`},
		{handlerErr[Chan](g), "contractguard: contractguard.Chan.C: cannot decode into chan int"},
	}
	for _, tt := range tests {
		require.Error(t, tt.err)
		assert.True(t, strings.HasPrefix(tt.err.Error(), tt.want), "got  %s\nwant %s", tt.err, tt.want)
	}
	assert.PanicsWithError(t, tests[0].err.Error(), func() { Handle(g, func(http.ResponseWriter, *http.Request, UnknownField) {}) })
}

// TestTyped_ShadowedFieldsKeepTheirRules: a member is checked by the
// rules of the field T decodes it into. encoding/json gives a name to the
// shallowest field, where invopop's schema took the last one it met: a
// Role shadowing an embedded struct's Role declared after it lost its
// enum, and {"role":"admin"} reached the handler. Such a type is refused
// at registration, saying what to do; declared the other way round, the
// outer field's rules hold.
func TestTyped_ShadowedFieldsKeepTheirRules(t *testing.T) {
	type base struct {
		Role string `json:"role"`
	}
	type Base struct {
		Role string `json:"role"`
	}
	type shadowLast struct {
		Role string `json:"role" jsonschema:"enum=user"`
		base
	}
	type shadowLastExported struct {
		Role string `json:"role" jsonschema:"enum=user"`
		Base
	}
	type nested struct {
		Who shadowLast `json:"who"`
	}
	type shadowFirst struct {
		Base
		Role string `json:"role" jsonschema:"enum=user"`
	}
	g := mustNew(t, Options{Logger: discard})
	for _, err := range []error{handlerErr[shadowLast](g), handlerErr[shadowLastExported](g), handlerErr[nested](g)} {
		require.Error(t, err)
		assert.Regexp(t, `^contractguard: contractguard\.shadowLast(Exported)?\.Role: its member "role" would be checked by the rules of contractguard\.shadowLast(Exported)?\.[bB]ase\.Role, which it shadows: declare the embedded struct before Role, or give one of them another json name$`, err.Error())
	}
	var got []string
	h := Handle(g, func(w http.ResponseWriter, r *http.Request, in shadowFirst) { got = append(got, in.Role) })
	rejected(t, send(h, "POST", "/x", `{"role":"admin"}`), 400, CodeSchemaInvalid)
	assert.Equal(t, 200, send(h, "POST", "/x", `{"role":"user"}`).Code)
	assert.Equal(t, []string{"user"}, got)

	// What is not refused (a review of the first version refused both): a
	// shadowed field that is a copy of the one shadowing it, whose
	// property is the same whichever invopop takes; and a field whose
	// type decodes itself, whose own fields are no members.
	type Meta struct {
		ID      string `json:"id"`
		Version int    `json:"version"`
	}
	type sameShadow struct {
		ID string `json:"id"`
		Meta
	}
	require.NoError(t, handlerErr[sameShadow](g))
	type order struct {
		Price shadowMoney `json:"price"`
	}
	require.NoError(t, handlerErr[order](g))
	// A struct that embeds itself, on which invopop would recurse for
	// ever: refused, saying so.
	err := handlerErr[shadowSelf](g)
	require.Error(t, err)
	assert.Equal(t, "contractguard: contractguard.shadowSelf.shadowSelf: contractguard.shadowSelf embeds itself, which invopop/jsonschema cannot reflect: give the field a json name", err.Error())
}

// shadowMoney decodes itself; its fields are its own business.
type shadowMoney struct {
	Cents int64 `json:"cents,string"`
}

func (m *shadowMoney) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &m.Cents) }

type shadowSelf struct {
	*shadowSelf
	X int `json:"x"`
}

// TestTyped_FloatsKeepTheirExclusiveBounds: the schema checks a number as
// the decimal written, T holds it rounded; a value over an exclusive
// bound may round onto it (1e-400 > 0 is 0 as a float64; 0.99999999 < 1
// is 1 as a float32). T's floats are held to their exclusive bounds as T
// holds them, at any depth, so the handler never gets a value its schema
// excludes; values that round clear of the bounds pass, and so does a
// member left out (its field's zero value is Go's, not the body's).
func TestTyped_FloatsKeepTheirExclusiveBounds(t *testing.T) {
	type Part struct {
		Weight float32 `json:"weight" jsonschema:"exclusiveMinimum=0"`
	}
	type Payment struct {
		Amount float64  `json:"amount" jsonschema:"exclusiveMinimum=0"`
		Ratio  float32  `json:"ratio" jsonschema:"exclusiveMaximum=1"`
		Tip    *float64 `json:"tip,omitempty" jsonschema:"exclusiveMinimum=0,exclusiveMaximum=100"`
		Parts  []Part   `json:"parts,omitempty"`
		Main   *Part    `json:"main,omitempty"`
		Opt    float64  `json:"opt,omitempty" jsonschema:"exclusiveMinimum=0"` // left out: 0, which no schema saw
	}
	g := mustNew(t, Options{Logger: discard})
	var got []Payment
	h := Handle(g, func(w http.ResponseWriter, r *http.Request, in Payment) { got = append(got, in) })
	for body, want := range map[string][]Detail{
		`{"amount":1e-400,"ratio":0.5}`:                                            {{"/amount", "must be > 0: as a float64 it is 0"}},
		`{"amount":1,"ratio":0.99999999}`:                                          {{"/ratio", "must be < 1: as a float32 it is 1"}},
		`{"amount":1,"ratio":0.5,"tip":99.99999999999999999}`:                      {{"/tip", "must be < 100: as a float64 it is 100"}},
		`{"amount":1,"ratio":0.5,"parts":[{"weight":1},{"weight":1e-50}]}`:         {{"/parts/1/weight", "must be > 0: as a float32 it is 0"}},
		`{"amount":5e-324,"ratio":-1e-50,"main":{"weight":1e-46}}`:                 {{"/main/weight", "must be > 0: as a float32 it is 0"}},
		`{"amount":1e-400,"ratio":0.99999999,"parts":[{"weight":1e-50}],"tip":50}`: {{"/amount", "must be > 0: as a float64 it is 0"}, {"/parts/0/weight", "must be > 0: as a float32 it is 0"}, {"/ratio", "must be < 1: as a float32 it is 1"}},
	} {
		eb := rejected(t, send(h, "POST", "/pay", body), 400, CodeSchemaInvalid)
		assert.Equal(t, want, eb.Details, body)
	}
	assert.Empty(t, got)
	require.Equal(t, 200, send(h, "POST", "/pay", `{"amount":5e-324,"ratio":0.9999999,"tip":1e-300,"parts":[{"weight":1e-45}]}`).Code)
	require.Len(t, got, 1)
	assert.True(t, got[0].Amount > 0 && got[0].Ratio < 1 && *got[0].Tip > 0 && got[0].Parts[0].Weight > 0, "%+v", got[0])
}

// TestTyped_SchemaFileRefLoop: a cg:"schema=" file that applies itself to
// the value it checks is refused when the handler is made, as the loader
// refuses it in a contract: it loaded, and a definition {not: {$ref: to
// itself}} passed every value, so an anyOf beside it let {"a":500} past
// maximum 5.
func TestTyped_SchemaFileRefLoop(t *testing.T) {
	type Loop struct {
		_ struct{} `cg:"schema=loop.json"`
		A int      `json:"a"`
	}
	type Tree struct {
		_ struct{} `cg:"schema=tree.json"`
		A int      `json:"a"`
	}
	g := mustNew(t, Options{Logger: discard, SchemaFS: fstest.MapFS{
		"loop.json": {Data: []byte(`{"definitions": {"l": {"not": {"$ref": "#/definitions/l"}}},
			"anyOf": [{"properties": {"a": {"maximum": 5}}}, {"$ref": "#/definitions/l"}]}`)},
		"tree.json": {Data: []byte(`{"properties": {"a": {"maximum": 5}, "kids": {"items": {"$ref": "#"}}}}`)},
	}})
	err := handlerErr[Loop](g)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `contractguard.Loop: schema=loop.json: /definitions/l: $ref loop`)
	require.NoError(t, handlerErr[Tree](g)) // a schema for the values inside the one it checks is no loop
}

// TestTyped_FloatsOfRecursiveTypes: a recursive type and schema make a
// graph, built once per type and schema: a tree's registration is quick,
// and a float at any depth the body reaches is held (a review found a
// version that walked 2^32 paths, and stopped checking at 32 levels).
func TestTyped_FloatsOfRecursiveTypes(t *testing.T) {
	type List struct {
		_    struct{} `cg:"schema=node.json"`
		V    float64  `json:"v"`
		Next *List    `json:"next,omitempty"`
	}
	type Tree struct {
		_ struct{} `cg:"schema=node.json"`
		V float64  `json:"v"`
		L *Tree    `json:"l,omitempty"`
		R *Tree    `json:"r,omitempty"`
	}
	node := `{"$ref": "#/definitions/node", "definitions": {"node": {"type": "object", "properties": {
		"v": {"type": "number", "exclusiveMinimum": 0}, "next": {"$ref": "#/definitions/node"},
		"l": {"$ref": "#/definitions/node"}, "r": {"$ref": "#/definitions/node"}}}}}`
	g := mustNew(t, Options{Logger: discard, SchemaFS: fstest.MapFS{"node.json": {Data: []byte(node)}}})
	ran := 0
	list := Handle(g, func(w http.ResponseWriter, r *http.Request, in List) { ran++ })
	tree := Handle(g, func(w http.ResponseWriter, r *http.Request, in Tree) { ran++ })
	deep := strings.Repeat(`{"v":1,"next":`, 40) + `{"v":1e-400}` + strings.Repeat(`}`, 40)
	eb := rejected(t, send(list, "POST", "/list", deep), 400, CodeSchemaInvalid)
	assert.Equal(t, []Detail{{strings.Repeat("/next", 40) + "/v", "must be > 0: as a float64 it is 0"}}, eb.Details)
	eb = rejected(t, send(tree, "POST", "/tree", `{"v":1,"l":{"v":2,"r":{"v":1e-400}}}`), 400, CodeSchemaInvalid)
	assert.Equal(t, []Detail{{"/l/r/v", "must be > 0: as a float64 it is 0"}}, eb.Details)
	assert.Zero(t, ran)
	assert.Equal(t, 200, send(tree, "POST", "/tree", `{"v":1,"l":{"v":2,"r":{"v":5e-324}}}`).Code)
}

// TestTyped_FloatsOfMembers: the bounds a schema puts on members by
// pattern or on the rest, of a struct or of a map, whatever its keys.
func TestTyped_FloatsOfMembers(t *testing.T) {
	type Members struct {
		_ struct{}           `cg:"schema=members.json"`
		M map[int]float64    `json:"m"`
		P map[string]float64 `json:"p"`
		A float64            `json:"a"`
		B float64            `json:"b"`
	}
	members := `{"type": "object",
		"properties": {
			"m": {"type": "object", "additionalProperties": {"exclusiveMinimum": 0}},
			"p": {"type": "object", "properties": {"n": {"exclusiveMaximum": 1}}, "patternProperties": {"^x": {"exclusiveMinimum": 0}}}},
		"patternProperties": {"^b$": {"exclusiveMaximum": 1}},
		"additionalProperties": {"exclusiveMinimum": 0}}`
	g := mustNew(t, Options{Logger: discard, SchemaFS: fstest.MapFS{"members.json": {Data: []byte(members)}}})
	ran := 0
	h := Handle(g, func(w http.ResponseWriter, r *http.Request, in Members) { ran++ })
	for body, want := range map[string]Detail{
		`{"m":{"1":1e-400}}`:              {"/m/1", "must be > 0: as a float64 it is 0"},
		`{"p":{"x1":1e-400}}`:             {"/p/x1", "must be > 0: as a float64 it is 0"},
		`{"p":{"n":0.99999999999999999}}`: {"/p/n", "must be < 1: as a float64 it is 1"},
		`{"a":1e-400}`:                    {"/a", "must be > 0: as a float64 it is 0"},
		`{"b":0.99999999999999999}`:       {"/b", "must be < 1: as a float64 it is 1"},
	} {
		eb := rejected(t, send(h, "POST", "/m", body), 400, CodeSchemaInvalid)
		assert.Equal(t, []Detail{want}, eb.Details, body)
	}
	assert.Zero(t, ran)
	assert.Equal(t, 200, send(h, "POST", "/m", `{"m":{"1":1},"p":{"y":1e-400,"x":1},"a":1,"b":1e-400}`).Code, "y is no x, and b is bound above only")
}

// TestTyped_FloatsKeepTheirExclusiveBoundsFromAFile: the same where a
// schema file puts the bounds, through $ref, allOf and a map's values,
// the tighter of two bounds holding.
func TestTyped_FloatsKeepTheirExclusiveBoundsFromAFile(t *testing.T) {
	type Rates struct {
		_     struct{}           `cg:"schema=rates.json"`
		Rates map[string]float32 `json:"rates"`
		Floor float64            `json:"floor"`
	}
	schemaFile := `{"type": "object", "definitions": {"positive": {"type": "number", "exclusiveMinimum": 0}},
		"properties": {
			"rates": {"type": "object", "additionalProperties": {"$ref": "#/definitions/positive"}},
			"floor": {"allOf": [{"$ref": "#/definitions/positive"}, {"exclusiveMinimum": -1, "exclusiveMaximum": 1e-300}]}}}`
	g := mustNew(t, Options{Logger: discard, SchemaFS: fstest.MapFS{"rates.json": {Data: []byte(schemaFile)}}})
	ran := 0
	h := Handle(g, func(w http.ResponseWriter, r *http.Request, in Rates) { ran++ })
	eb := rejected(t, send(h, "POST", "/rates", `{"rates":{"a":1,"b":1e-60},"floor":1e-320}`), 400, CodeSchemaInvalid)
	assert.Equal(t, []Detail{{"/rates/b", "must be > 0: as a float32 it is 0"}}, eb.Details)
	eb = rejected(t, send(h, "POST", "/rates", `{"rates":{},"floor":1e-400}`), 400, CodeSchemaInvalid)
	assert.Equal(t, []Detail{{"/floor", "must be > 0: as a float64 it is 0"}}, eb.Details)
	assert.Equal(t, 0, ran)
	require.Equal(t, 200, send(h, "POST", "/rates", `{"rates":{"a":1e-45},"floor":1e-320}`).Code)
}

// TestTyped_FloatsOfTupleItems: an array's elements take their schemas
// by position where the schema says so (draft-07's items array, the rest
// under additionalItems; 2020-12's prefixItems, the rest under items).
// The check read a draft-07 items array as no schema (1e-400 reached the
// handler as 0 under exclusiveMinimum 0) and 2020-12's items as the
// schema of every element, the prefix included (-5 refused where the
// schema takes any number).
func TestTyped_FloatsOfTupleItems(t *testing.T) {
	type Tuples struct {
		_ struct{}   `cg:"schema=tuples.json"`
		P []float64  `json:"p"`
		Q [2]float32 `json:"q"`
		R []float64  `json:"r"`
	}
	schemaFile := `{"type": "object", "properties": {
		"p": {"type": "array", "items": [{"exclusiveMinimum": 0}, {"exclusiveMaximum": 1}]},
		"q": {"type": "array", "items": [{"type": "number"}], "additionalItems": {"exclusiveMinimum": 0}},
		"r": {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "r.json", "type": "array",
			"prefixItems": [{"type": "number"}, {"exclusiveMaximum": 1}], "items": {"exclusiveMinimum": 0}}}}`
	g := mustNew(t, Options{Logger: discard, SchemaFS: fstest.MapFS{"tuples.json": {Data: []byte(schemaFile)}}})
	var got []Tuples
	h := Handle(g, func(w http.ResponseWriter, r *http.Request, in Tuples) { got = append(got, in) })
	for body, want := range map[string][]Detail{
		`{"p":[1e-400,0.99999999999999999]}`: {{"/p/0", "must be > 0: as a float64 it is 0"}, {"/p/1", "must be < 1: as a float64 it is 1"}},
		`{"q":[-1,1e-50]}`:                   {{"/q/1", "must be > 0: as a float32 it is 0"}},
		`{"r":[-5,0.99999999999999999,1]}`:   {{"/r/1", "must be < 1: as a float64 it is 1"}},
		`{"r":[-5,-5,1e-400]}`:               {{"/r/2", "must be > 0: as a float64 it is 0"}},
	} {
		eb := rejected(t, send(h, "POST", "/t", body), 400, CodeSchemaInvalid)
		assert.Equal(t, want, eb.Details, body)
	}
	assert.Empty(t, got)
	require.Equal(t, 200, send(h, "POST", "/t", `{"p":[1e-300,0.5,1e-400],"q":[1e-50,1e-45],"r":[-5,-5,1e-300]}`).Code)
	require.Len(t, got, 1)
	assert.Equal(t, []float64{-5, -5, 1e-300}, got[0].R)
}

// TestTyped_PointerRequestTypeTakesTypeTags: a pointer request type
// (Handle[*T]) reads the blank fields of T that speak of the whole
// contract, cg:"schema=…" and cg:"mode=…", as Handle[T] does. They were
// looked for on the pointer only, and then refused on T itself: "schema=
// belongs on the request type, not on T", of the request type's own
// struct.
func TestTyped_PointerRequestTypeTakesTypeTags(t *testing.T) {
	type Refund struct {
		_      struct{} `cg:"schema=refund.json"`
		Amount float64  `json:"amount" cg:"cel=self <= 100,msg=at most 100"`
	}
	refund := `{"type": "object", "required": ["amount"], "properties": {"amount": {"type": "number", "exclusiveMinimum": 0}}}`
	g := mustNew(t, Options{Logger: discard, SchemaFS: fstest.MapFS{"refund.json": {Data: []byte(refund)}}})
	var got []*Refund
	h, err := NewHandler(g, func(w http.ResponseWriter, r *http.Request, in *Refund) { got = append(got, in) })
	require.NoError(t, err)
	eb := rejected(t, send(h, "POST", "/refunds", `{"amount":-1}`), 400, CodeSchemaInvalid)
	assert.Equal(t, "/amount", eb.Details[0].Path, "the file's schema")
	eb = rejected(t, send(h, "POST", "/refunds", `{"amount":1e-400}`), 400, CodeSchemaInvalid)
	assert.Equal(t, []Detail{{"/amount", "must be > 0: as a float64 it is 0"}}, eb.Details)
	eb = rejected(t, send(h, "POST", "/refunds", `{"amount":500}`), 422, CodeInvariantViolated)
	assert.Equal(t, []Detail{{"/amount", "at most 100"}}, eb.Details)
	require.Equal(t, 200, send(h, "POST", "/refunds", `{"amount":5}`).Code)
	require.Len(t, got, 1)
	assert.Equal(t, 5.0, got[0].Amount)

	type Line struct {
		_   struct{} `cg:"mode=learn"`
		SKU string   `json:"sku" jsonschema:"minLength=3"`
	}
	lg, rec := learnGuard(t)
	var lines []*Line
	lh, err := NewHandler(lg, func(w http.ResponseWriter, r *http.Request, in *Line) { lines = append(lines, in) })
	require.NoError(t, err)
	assert.Equal(t, 200, send(lh, "POST", "/lines", `{"sku":"A"}`).Code, "learning: passed, and reported")
	require.Len(t, lines, 1)
	assert.Equal(t, "A", lines[0].SKU)
	require.Len(t, rec.observed, 1)
	assert.Equal(t, []Detail{{"/sku", rec.observed[0].Violation.Details[0].Message}}, rec.observed[0].Violation.Details)
}

// TestTyped_PointerRequestTypeEmptyBodyRunsRequestRules: a pointer
// request type given an empty body holds nil, which no rule about the
// body's values can check; but a rule of its blank fields that reads
// nothing of the body (context.user, request.params) is about the
// request, and runs. It was skipped with the rest: an empty DELETE
// passed cg:"cel=context.user.role == 'admin'" for a guest, whom {}
// did not get past.
func TestTyped_PointerRequestTypeEmptyBodyRunsRequestRules(t *testing.T) {
	type Del struct {
		_      struct{} `cg:"cel=context.user.role == 'admin',msg=admins only"`
		_      struct{} `cg:"cel=data.reason != 'spite',msg=no spite"`
		Reason string   `json:"reason,omitempty" cg:"cel=self != 'none',msg=say why"`
	}
	g := mustNew(t, Options{Logger: discard, User: func(r *http.Request) any { return map[string]any{"role": r.Header.Get("X-Role")} }})
	var got []*Del
	h := Handle(g, func(w http.ResponseWriter, r *http.Request, in *Del) { got = append(got, in) })
	for _, body := range []string{"", "{}", `{"reason":"x"}`} {
		eb := rejected(t, send(h, "DELETE", "/accounts/1", body, "X-Role", "guest"), 422, CodeInvariantViolated)
		assert.Equal(t, []Detail{{"", "admins only"}}, eb.Details, body)
	}
	assert.Empty(t, got)
	require.Equal(t, 200, send(h, "DELETE", "/accounts/1", "", "X-Role", "admin").Code, "the rules about the body have no value to check")
	require.Equal(t, 200, send(h, "DELETE", "/accounts/1", `{"reason":"x"}`, "X-Role", "admin").Code)
	eb := rejected(t, send(h, "DELETE", "/accounts/1", `{"reason":"spite"}`, "X-Role", "admin"), 422, CodeInvariantViolated)
	assert.Equal(t, []Detail{{"", "no spite"}}, eb.Details)
	require.Len(t, got, 2)
	assert.Nil(t, got[0])
	assert.Equal(t, "x", got[1].Reason)
}

func handlerErr[T any](g *Guard) error {
	_, err := NewHandler(g, func(http.ResponseWriter, *http.Request, T) {})
	return err
}

func TestTyped_JSONNumberFieldIsANumber(t *testing.T) {
	type In struct {
		N json.Number `json:"n"`
	}
	var got In
	h := Handle(mustNew(t, Options{}), func(w http.ResponseWriter, r *http.Request, in In) { got = in })
	assert.Equal(t, 200, send(h, "POST", "/", `{"n":123456789012345678901234567890.5}`).Code)
	assert.Equal(t, json.Number("123456789012345678901234567890.5"), got.N)
	eb := rejected(t, send(h, "POST", "/", `{"n":"12"}`), 400, CodeSchemaInvalid)
	assert.Equal(t, []Detail{{"/n", "must be a number, not a string"}}, eb.Details)
}

// TestTyped_SelfOfAnAnyFieldIsItsValue: a field of type any holds a
// number as a json.Number, which a rule reads as the number it is, as
// data.<field> reads it. self turned it into its string, as for a field
// of type json.Number: cg:"cel=self != 0" passed {"v":0} (a string is not
// 0), which data.v != 0 refused, and self <= 100 refused every number.
func TestTyped_SelfOfAnAnyFieldIsItsValue(t *testing.T) {
	type NotZero struct {
		V any `json:"v" cg:"cel=self != 0,msg=must not be zero"`
	}
	type AtMost struct {
		V any `json:"v" cg:"cel=self <= 100,msg=at most 100"`
	}
	g := mustNew(t, Options{})
	nz := Handle(g, func(http.ResponseWriter, *http.Request, NotZero) {})
	eb := rejected(t, send(nz, "POST", "/", `{"v":0}`), 422, CodeInvariantViolated)
	assert.Equal(t, []Detail{{"/v", "must not be zero"}}, eb.Details)
	assert.Equal(t, 200, send(nz, "POST", "/", `{"v":1}`).Code)
	assert.Equal(t, 200, send(nz, "POST", "/", `{"v":"0"}`).Code)
	am := Handle(g, func(http.ResponseWriter, *http.Request, AtMost) {})
	assert.Equal(t, 200, send(am, "POST", "/", `{"v":50}`).Code)
	eb = rejected(t, send(am, "POST", "/", `{"v":500}`), 422, CodeInvariantViolated)
	assert.Equal(t, []Detail{{"/v", "at most 100"}}, eb.Details)
}

// TestTyped_SelfOfAPointerIsItsValue: a rule on a pointer field is
// checked with the element's type as self (a timestamp for *time.Time, a
// duration for *time.Duration, a list for *[]int), as data.<field> reads
// it; self was the pointer, which cel-go adapted by its element's kind: a
// struct it does not know, an int, and no value at all for a pointer to
// a slice, map or array or to another pointer. The rule failed to
// evaluate and every body that sent the field was refused (2021 was not
// after 2020, 10ns not under 1µs, [1] not all non-zero).
func TestTyped_SelfOfAPointerIsItsValue(t *testing.T) {
	type In struct {
		T *time.Time      `json:"t,omitempty" cg:"cel=self > timestamp('2020-01-01T00:00:00Z'),msg=too old"`
		D *time.Duration  `json:"d,omitempty" cg:"cel=self < duration('1us'),msg=too long"`
		L *[]int          `json:"l,omitempty" cg:"cel=self.all(x, x != 0),msg=no zero item"`
		M *map[string]int `json:"m,omitempty" cg:"cel=self.all(k, self[k] != 0),msg=no zero value"`
		A *[2]int         `json:"a,omitempty" cg:"cel=self.all(x, x != 0),msg=no zero element"`
		P **int           `json:"p,omitempty" cg:"cel=self != 0,msg=not zero"`
		N *json.Number    `json:"n,omitempty" cg:"cel=self != '0',msg=not the text 0"`
		S *roleChecked    `json:"s,omitempty" cg:"cel=self.team != '',msg=a team"`
	}
	h := Handle(mustNew(t, Options{}), func(http.ResponseWriter, *http.Request, In) {})
	assert.Equal(t, 200, send(h, "POST", "/", `{"t":"2021-01-01T00:00:00Z","d":10,"l":[1],"m":{"a":1},"a":[1,2],"p":1,"n":1,"s":{"role":"x","team":"y"}}`).Code)
	eb := rejected(t, send(h, "POST", "/", `{"t":"2019-01-01T00:00:00Z","d":1000,"l":[1,0],"m":{"a":0},"a":[1,0],"p":0,"n":0,"s":{"role":"x","team":""}}`), 422, CodeInvariantViolated)
	assert.Equal(t, []Detail{{"/t", "too old"}, {"/d", "too long"}, {"/l", "no zero item"}, {"/m", "no zero value"}, {"/a", "no zero element"}, {"/p", "not zero"}, {"/n", "not the text 0"}, {"/s", "a team"}}, eb.Details)
	assert.Equal(t, 200, send(h, "POST", "/", `{}`).Code)
}

// The binder and the rule walker name fields with one function
// (bind.FieldName): json:"-," is the member "-" to both, as to
// encoding/json. invopop/jsonschema leaves such a field out of the schema,
// so a rule on it is refused at registration, naming the field.
func TestTyped_DashCommaField(t *testing.T) {
	type Dash struct {
		D int `json:"-," cg:"cel=self > 0,msg=dash must be positive"`
	}
	_, err := NewHandler(mustNew(t, Options{}), func(http.ResponseWriter, *http.Request, Dash) {})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `Dash.D: rule 1 (self > 0): field "-" is not visible to rules`)
}

type auditA struct {
	ID string `json:"a_id" jsonschema:"minLength=1"`
}

type auditB struct {
	ID string `json:"b_id"`
}

// TestTyped_EmbeddedFieldsByJSONName: fields promoted from embedded
// structs are members by their json names, as json v2 decodes them,
// though Go's selector rules hide them by their Go names (two IDs at one
// depth, or below a field ID). The binder followed Go's rules: such a
// type was refused at registration, as if invopop's members "a_id" and
// "b_id" went to no field, and with a cg:"schema=" file the handler got
// "" where the schema had checked the body's value.
func TestTyped_EmbeddedFieldsByJSONName(t *testing.T) {
	type In struct {
		auditA
		auditB
		ID string `json:"id"`
	}
	var got In
	h, err := NewHandler(mustNew(t, Options{}), func(w http.ResponseWriter, r *http.Request, in In) { got = in })
	require.NoError(t, err)
	assert.Equal(t, 200, send(h, "POST", "/", `{"a_id":"x","b_id":"y","id":"z"}`).Code)
	assert.Equal(t, In{auditA{"x"}, auditB{"y"}, "z"}, got)
	eb := rejected(t, send(h, "POST", "/", `{"a_id":"","b_id":"y","id":"z"}`), 400, CodeSchemaInvalid)
	assert.Equal(t, "/a_id", eb.Details[0].Path)
}

type selectorInner struct {
	Name int `json:"x"`
}

type selectorLower struct {
	X int `json:"x"`
}

type selectorMid struct{ selectorLower }

// selectorShadow: the member "x" is decoded into selectorInner.Name (the
// shallowest field of that json name), which Go's selector rules hide
// behind the field Name ("h"); they leave selectorMid.selectorLower.X
// visible, which is "x" to cel-go.
type selectorShadow struct {
	Name int `json:"h"`
	selectorInner
	selectorMid
}

// TestTyped_RulesReadTheFieldOfTheMember: data.<json name> is the field
// the member is decoded into. cel-go finds fields by Go's selector rules,
// encoding/json by json names: data.x read selectorMid.selectorLower.X,
// never filled, so data.x <= 100 held for {"x":1000} and the handler got
// 1000. Such a rule (a has() or a read through a nested struct too) is
// refused at registration, naming both fields; a rule reading a member
// both find alike still builds.
func TestTyped_RulesReadTheFieldOfTheMember(t *testing.T) {
	type Flat struct {
		_ struct{} `cg:"cel=data.x <= 100,msg=x at most 100"`
		selectorShadow
	}
	type Has struct {
		_ struct{} `cg:"cel=!has(data.x),msg=no x"`
		selectorShadow
	}
	type Nested struct {
		_     struct{}       `cg:"cel=data.inner.x <= 100,msg=x at most 100"`
		Inner selectorShadow `json:"inner"`
	}
	type Fine struct {
		_ struct{} `cg:"cel=data.h <= 100,msg=h at most 100"`
		selectorShadow
	}
	g := mustNew(t, Options{Logger: discard})
	for _, err := range []error{handlerErr[Flat](g), handlerErr[Has](g), handlerErr[Nested](g)} {
		require.Error(t, err)
		assert.Regexp(t, `"x" of contractguard\.(Flat|Has|selectorShadow) is the field (selectorShadow\.)?selectorMid\.selectorLower\.X to rules \(by Go's selector rules\), but encoding/json decodes the member into (selectorShadow\.)?selectorInner\.Name`, err.Error())
	}
	ran := 0
	h := Handle(g, func(w http.ResponseWriter, r *http.Request, in Fine) { ran++ })
	rejected(t, send(h, "POST", "/", `{"h":1000,"x":1}`), 422, CodeInvariantViolated)
	assert.Equal(t, 200, send(h, "POST", "/", `{"h":1,"x":1000}`).Code)
	assert.Equal(t, 1, ran)
}

// TestTyped_ListOfItselfIsARegistrationError: a field whose type holds
// itself with no struct between (type Tree []Tree) has no CEL type, and
// cel-go's native types recursed on it without end: registering a
// handler whose type has any rule ran out of stack, a fatal error that
// took the process down. It is a registration error; without rules, or
// with the elements a struct, the type is fine.
func TestTyped_ListOfItselfIsARegistrationError(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(16 << 20)) // the old code fails fast
	g := mustNew(t, Options{})
	type Tree []Tree
	type Forest map[string][]Forest
	type WithRule struct {
		_    struct{} `cg:"cel=size(data.kids) < 3,msg=m"`
		Kids Tree     `json:"kids"`
	}
	type Nested struct {
		In struct {
			Woods Forest `json:"woods"`
		} `json:"in"`
		N int `json:"n" cg:"cel=self > 0,msg=m"`
	}
	type NoRule struct {
		Kids Tree `json:"kids"`
	}
	type Node struct {
		Kids []Node `json:"kids"`
	}
	type Fine struct {
		_    struct{} `cg:"cel=size(data.root.kids) < 3,msg=m"`
		Root Node     `json:"root"`
	}
	err := handlerErr[WithRule](g)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "WithRule.Kids: contractguard.Tree holds itself with no struct between")
	err = handlerErr[Nested](g)
	require.Error(t, err)
	assert.Contains(t, err.Error(), ".Woods: contractguard.Forest holds itself with no struct between")
	require.NoError(t, handlerErr[NoRule](g))
	require.NoError(t, handlerErr[Fine](g))
	h := Handle(g, func(http.ResponseWriter, *http.Request, Fine) {})
	assert.Equal(t, http.StatusOK, send(h, "POST", "/x", `{"root":{"kids":[{"kids":[]}]}}`).Code)
	assert.Equal(t, http.StatusUnprocessableEntity, send(h, "POST", "/x", `{"root":{"kids":[{"kids":[]},{"kids":[]},{"kids":[]}]}}`).Code)
}
