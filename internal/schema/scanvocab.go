package schema

import (
	"encoding/json"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/contractguard/contractguard/internal/failure"
)

// ScanKeyword is the annotation that takes a value out of the
// vulnerability scan: x-contractguard-scan: false on the schema of a
// property (or of items, or of the whole body) for fields that
// legitimately hold code or markup.
const ScanKeyword = "x-contractguard-scan"

// scanVocab compiles the annotation, so that a typo in its value (a
// string, a number) fails at load like any schema error. It asserts
// nothing about bodies.
var scanVocab = &jsonschema.Vocabulary{
	URL: "urn:contractguard:vocab:scan",
	Compile: func(_ *jsonschema.CompilerContext, obj map[string]any) (jsonschema.SchemaExt, error) {
		v, ok := obj[ScanKeyword]
		if !ok {
			return nil, nil
		}
		on, ok := v.(bool)
		if !ok {
			// As JSON: the string "false" is not the boolean, nor null <nil>.
			b, _ := json.Marshal(v)
			return nil, fmt.Errorf("%s must be true or false, not %s", ScanKeyword, failure.Clip(string(b)))
		}
		return scanAnnotation{on: on}, nil
	},
}

type scanAnnotation struct{ on bool }

func (scanAnnotation) Validate(*jsonschema.ValidatorContext, any) {}
