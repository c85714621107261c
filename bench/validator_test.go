package bench

import (
	"encoding/json"
	"testing"

	"github.com/go-playground/validator/v10"
)

// BenchmarkValidator is encoding/json into the request type, then
// go-playground/validator's struct tags, then the three rules.
func BenchmarkValidator(b *testing.B) {
	validate := validator.New(validator.WithRequiredStructEnabled())
	forBodies(b, func(b *testing.B, size, validity string, body []byte) {
		for b.Loop() {
			var rejected bool
			var why error
			if size == "small" {
				var l Line
				if why = json.Unmarshal(body, &l); why == nil {
					if why = validate.Struct(&l); why == nil {
						why = lineRules(&l)
					}
				}
			} else {
				var o Order
				if why = json.Unmarshal(body, &o); why == nil {
					if why = validate.Struct(&o); why == nil {
						why = orderRules(&o)
					}
				}
			}
			rejected = why != nil
			verdict(b, validity, rejected, why)
		}
	})
}
