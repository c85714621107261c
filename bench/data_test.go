package bench

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain keeps the guards' start-up lines (slog.Default at info) out of
// the benchmark output.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

// The bodies: small (~100 B), the ~1 KB order of the root module's
// testdata, and a ~100 KB order with 1,000 items; each valid, and with
// four violations.
var bodies = map[string][]byte{}

func init() {
	read := func(name string) string {
		b, err := os.ReadFile("../testdata/bodies/" + name)
		if err != nil {
			panic(err)
		}
		return strings.TrimSpace(string(b))
	}
	bodies["small"] = []byte(`{"sku":"BK-001","quantity":2,"unitPrice":19.99,"currency":"EUR","email":"ada@example.com"}`)
	bodies["small-invalid"] = []byte(`{"sku":"BK-001","quantity":0,"unitPrice":-1,"currency":"YEN","email":"ada.example.com"}`)
	bodies["1KB"] = []byte(read("order.json"))
	bodies["1KB-invalid"] = []byte(read("order-invalid.json"))

	large := orderWithItems(read("order.json"), 1000)
	bodies["100KB"] = []byte(large)
	bad := strings.Replace(large, `"orderId":"6f1c2a9e-8d3b-4c5a-9e7f-1a2b3c4d5e6f"`, `"orderId":"6f1c2a9e"`, 1)
	bad = strings.Replace(bad, `"email":"ada@example.com"`, `"email":"ada.example.com"`, 1)
	bad = strings.Replace(bad, `"quantity":5,`, `"quantity":0,`, 1)
	bad = strings.Replace(bad, `"currency":"EUR"`, `"currency":"YEN"`, 1)
	bodies["100KB-invalid"] = []byte(bad)
}

// orderWithItems is the order with n generated items (~100 bytes each) in
// place of its own, and a total the rules accept.
func orderWithItems(order string, n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"sku":"BK-%06d","title":"Product title of catalogue item %06d","quantity":%d,"unitPrice":%d.99}`, i, i, i%9+1, i%50)
	}
	own := strings.Split(strings.Split(order, `"items":`)[1], `,"currency"`)[0]
	large := strings.Replace(order, own, "["+strings.Join(items, ",")+"]", 1)
	return strings.Replace(large, `"total":123.23`, `"total":9999.5`, 1)
}

// sizes are the body sizes every pipeline is measured on.
var sizes = []string{"small", "1KB", "100KB"}

func path(size string) string {
	if size == "small" {
		return "/lines"
	}
	return "/orders"
}

// The request as Go types, for the pipelines that decode into a struct.

type Address struct {
	Street   string `json:"street" validate:"required,max=100"`
	City     string `json:"city" validate:"required,max=100"`
	Postcode string `json:"postcode,omitempty" validate:"max=20"`
	Country  string `json:"country" validate:"required,oneof=GB FR DE NL US" enum:"GB,FR,DE,NL,US"`
	IP6      string `json:"ip6,omitempty" validate:"omitempty,ipv6" format:"ipv6"`
}

type Customer struct {
	Email   string   `json:"email" validate:"required,email" format:"email"`
	Name    string   `json:"name" validate:"required,max=100" maxLength:"100"`
	Address *Address `json:"address,omitempty"`
}

type Item struct {
	SKU       string  `json:"sku" validate:"required,max=32" maxLength:"32"`
	Title     string  `json:"title,omitempty" validate:"max=200" maxLength:"200"`
	Quantity  int     `json:"quantity" validate:"required,min=1" minimum:"1" jsonschema:"minimum=1"`
	UnitPrice float64 `json:"unitPrice" validate:"min=0" minimum:"0" jsonschema:"minimum=0"`
}

type Order struct {
	_            struct{}  `cg:"cel=data.items.all(i, i.quantity <= 100),msg=at most 100 of one item per order"`
	_            struct{}  `cg:"cel=data.total <= 10000,msg=orders over 10000 need a sales contact"`
	_            struct{}  `cg:"cel=data.couponCode == '' || data.total >= 20,msg=a coupon needs an order of at least 20"`
	OrderID      string    `json:"orderId" validate:"required,uuid" format:"uuid" jsonschema:"format=uuid"`
	Customer     Customer  `json:"customer" validate:"required"`
	Items        []Item    `json:"items" validate:"required,min=1,max=10000,dive" minItems:"1" maxItems:"10000" jsonschema:"minItems=1,maxItems=10000"`
	Currency     string    `json:"currency" validate:"required,oneof=EUR USD GBP" enum:"EUR,USD,GBP" jsonschema:"enum=EUR,enum=USD,enum=GBP"`
	Total        float64   `json:"total" validate:"min=0,max=1000000" minimum:"0" maximum:"1000000" jsonschema:"minimum=0,maximum=1000000"`
	PlacedAt     time.Time `json:"placedAt" validate:"required"`
	DeliveryDate string    `json:"deliveryDate,omitempty" validate:"omitempty,datetime=2006-01-02" format:"date" jsonschema:"format=date"`
	Channel      string    `json:"channel,omitempty" validate:"omitempty,oneof=web mobile store" enum:"web,mobile,store" jsonschema:"enum=web,enum=mobile,enum=store"`
	CallbackURL  string    `json:"callbackUrl,omitempty" validate:"omitempty,uri" format:"uri" jsonschema:"format=uri"`
	ClientIP     string    `json:"clientIp,omitempty" validate:"omitempty,ipv4" format:"ipv4" jsonschema:"format=ipv4"`
	Notes        string    `json:"notes,omitempty" validate:"max=500" maxLength:"500" jsonschema:"maxLength=500"`
	CouponCode   string    `json:"couponCode,omitempty" validate:"max=32" maxLength:"32" jsonschema:"maxLength=32"`
}

type Line struct {
	_         struct{} `cg:"cel=data.quantity <= 100,msg=at most 100 of one item"`
	_         struct{} `cg:"cel=double(data.quantity) * data.unitPrice <= 10000.0,msg=a line over 10000 needs a sales contact"`
	_         struct{} `cg:"cel=data.currency != 'USD' || data.unitPrice >= 1.0,msg=USD lines start at 1"`
	SKU       string   `json:"sku" validate:"required,max=32" maxLength:"32"`
	Quantity  int      `json:"quantity" validate:"required,min=1" minimum:"1" jsonschema:"minimum=1"`
	UnitPrice float64  `json:"unitPrice" validate:"min=0" minimum:"0" jsonschema:"minimum=0"`
	Currency  string   `json:"currency" validate:"required,oneof=EUR USD GBP" enum:"EUR,USD,GBP" jsonschema:"enum=EUR,enum=USD,enum=GBP"`
	Email     string   `json:"email" validate:"required,email" format:"email" jsonschema:"format=email"`
}

var errRule = errors.New("rule violated")

// The three rules of each contract, in Go, for the peers that have no
// rule language.
func orderRules(o *Order) error {
	for _, i := range o.Items {
		if i.Quantity > 100 {
			return errRule
		}
	}
	if o.Total > 10000 || o.CouponCode != "" && o.Total < 20 {
		return errRule
	}
	return nil
}

func lineRules(l *Line) error {
	if l.Quantity > 100 || float64(l.Quantity)*l.UnitPrice > 10000 || l.Currency == "USD" && l.UnitPrice < 1 {
		return errRule
	}
	return nil
}

// mapRules are the same rules over a decoded map, for the peers that
// validate maps.
func mapRules(size string, m map[string]any) error {
	num := func(v any) float64 {
		switch n := v.(type) {
		case float64:
			return n
		case interface{ Float64() (float64, error) }:
			f, _ := n.Float64()
			return f
		}
		return 0
	}
	if size == "small" {
		q, p := num(m["quantity"]), num(m["unitPrice"])
		if q > 100 || q*p > 10000 || m["currency"] == "USD" && p < 1 {
			return errRule
		}
		return nil
	}
	for _, it := range m["items"].([]any) {
		if num(it.(map[string]any)["quantity"]) > 100 {
			return errRule
		}
	}
	total := num(m["total"])
	if _, ok := m["couponCode"]; total > 10000 || ok && total < 20 {
		return errRule
	}
	return nil
}

// TestBodies holds the bodies to what the tables say of them: their sizes,
// and four violations in each invalid one, as the guard counts them. (The
// benchmarks check every pipeline's verdict on every body as they run; CI
// runs each once with -benchtime 1x.)
func TestBodies(t *testing.T) {
	g := newGuard(t)
	for size, want := range map[string][2]int{"small": {80, 120}, "1KB": {800, 1200}, "100KB": {90_000, 120_000}} {
		body := bodies[size]
		if len(body) < want[0] || len(body) > want[1] {
			t.Errorf("%s body: %d bytes, want %d to %d", size, len(body), want[0], want[1])
		}
		if v := g.Check("POST", path(size), body); v != nil {
			t.Errorf("%s body rejected: %v", size, v)
		}
		v := g.Check("POST", path(size), bodies[size+"-invalid"])
		if v == nil || len(v.Details) != 4 {
			t.Errorf("%s-invalid body: want 4 violations, got %v", size, v)
		}
	}
}
