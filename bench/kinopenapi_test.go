package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// BenchmarkKinOpenAPI is kin-openapi: its router finds the operation,
// openapi3filter.ValidateRequest checks the body against the operation's
// schema, then the application decodes the body for the three rules.
func BenchmarkKinOpenAPI(b *testing.B) {
	openapi3.DefineStringFormat("uuid", openapi3.FormatOfStringForUUIDOfRFC4122)
	openapi3.DefineStringFormat("email", `^[^@\s]+@[^@\s]+\.[^@\s]+$`)
	openapi3.DefineStringFormatCallback("uri", func(s string) error { _, err := url.ParseRequestURI(s); return err })
	openapi3.DefineIPv4Format()
	openapi3.DefineIPv6Format()
	doc, err := openapi3.NewLoader().LoadFromFile("testdata/openapi.yaml")
	if err != nil {
		b.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		b.Fatal(err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		b.Fatal(err)
	}
	opts := &openapi3filter.Options{MultiError: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
	forBodies(b, func(b *testing.B, size, validity string, body []byte) {
		ctx := context.Background()
		for b.Loop() {
			r := httptest.NewRequest("POST", "http://localhost"+path(size), bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			route, params, err := router.FindRoute(r)
			if err != nil {
				b.Fatal(err)
			}
			why := openapi3filter.ValidateRequest(ctx, &openapi3filter.RequestValidationInput{
				Request: r, PathParams: params, Route: route, Options: opts,
			})
			if why == nil {
				if size == "small" {
					var l Line
					if why = json.Unmarshal(body, &l); why == nil {
						why = lineRules(&l)
					}
				} else {
					var o Order
					if why = json.Unmarshal(body, &o); why == nil {
						why = orderRules(&o)
					}
				}
			}
			verdict(b, validity, why != nil, why)
		}
	})
}
