package contractguard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTag(t *testing.T) {
	tests := []struct {
		tag  string
		want parsedTag
	}{
		{"cel=data.from != data.to,msg=cannot transfer to the same account",
			parsedTag{rules: []tagRule{{"data.from != data.to", "cannot transfer to the same account"}}}},
		{"cel=data.items.all(i, i.qty > 0),msg=each line needs a quantity, at least one",
			parsedTag{rules: []tagRule{{"data.items.all(i, i.qty > 0)", "each line needs a quantity, at least one"}}}},
		{"schema=schemas/transfer.json", parsedTag{schema: "schemas/transfer.json"}},
		{"cel='self.contains('',msg='')',msg='can''t have that'",
			parsedTag{rules: []tagRule{{"self.contains(',msg=')", "can't have that"}}}},
		{"cel=self > 0,msg=positive,cel=self < 10,msg=small",
			parsedTag{rules: []tagRule{{"self > 0", "positive"}, {"self < 10", "small"}}}},
		{"schema=a.json,cel=data.a == 1,msg=m",
			parsedTag{schema: "a.json", rules: []tagRule{{"data.a == 1", "m"}}}},
		{"cel=a,b==c,msg=x=y,z", parsedTag{rules: []tagRule{{"a,b==c", "x=y,z"}}}},
		{"cel=[1,Cel==2].size() > 0,msg=m", parsedTag{rules: []tagRule{{"[1,Cel==2].size() > 0", "m"}}}}, // == is no key's =
	}
	for _, tt := range tests {
		t.Run(tt.tag, func(t *testing.T) {
			got, err := parseTag(tt.tag)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseTag_Errors(t *testing.T) {
	for tag, msg := range map[string]string{
		"":                  "empty tag",
		"expr=x,msg=y":      `unknown key "expr"`,
		"cel=x,message=y":   "needs a msg",
		"cel=x":             "needs a msg",
		"msg=y":             "without a cel",
		"cel=,msg=y":        "cel: empty value",
		"cel=x,msg=":        "msg: empty value",
		"cel=x,msg=  ":      "msg: empty value",
		"cel='x,msg=y":      "unterminated quote",
		"cel='x'y,msg=z":    "text after the closing quote",
		"schema=a,schema=b": "schema given twice",
		"cel=x,msg=y,cel=z": "needs a msg",
		"celx=1":            "unknown key",
		"cel=x,msg=y,":      "msg=y,", // a trailing comma is part of the value: no error
		// A space around a key: " cel" was reported as the unknown key "cel".
		" cel=x,msg=y": `key " cel": a key is written with no space around it (cel=)`,
		"cel =x,msg=y": `key "cel ": a key is written with no space around it (cel=)`,
		// A pair after a comma and a space ran on in the value before it:
		// the schema file, or learning mode, dropped into a message.
		"cel=x,msg=bad, schema=t.json": `msg=bad, schema=t.json: "schema=" after a comma and a space is part of the value (a key starts right after its comma): write ",schema=", or quote the value`,
		"cel=x,msg=bad,\tmode=learn":   `"mode=" after a comma and a space`,
		"cel=x > 0, msg=y":             `cel=x > 0, msg=y: "msg=" after a comma and a space`,
		// A key in another letter case after a comma ran on in the value
		// before it, as a spaced one did, where at the start of a tag it
		// is refused as unknown: the schema file not read, learning mode
		// not on, a message that ends in ",Schema=t.json".
		"cel=x,msg=bad,Schema=t.json": `msg=bad,Schema=t.json: "Schema=" after a comma is no key (keys are lower case): write ",schema=", or quote the value`,
		"cel=x,msg=bad,MODE=learn":    `"MODE=" after a comma is no key`,
		"cel=x,MSG=y":                 `cel=x,MSG=y: "MSG=" after a comma is no key`,
		"cel=x,msg=y, Cel=z":          `"Cel=" after a comma is no key`,
	} {
		_, err := parseTag(tag)
		if tag == "cel=x,msg=y," {
			assert.NoError(t, err)
			continue
		}
		require.Error(t, err, tag)
		assert.Contains(t, err.Error(), msg, tag)
	}
}

func FuzzParseTag(f *testing.F) {
	for _, s := range []string{
		"cel=data.from != data.to,msg=cannot transfer to the same account",
		"cel='a'',b',msg='c'", "schema=x.json", "cel=x", "msg=,cel=", "cel=a,msg=b,cel=c,msg=d", "''", "cel='", "mode=learn",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tag string) {
		p, err := parseTag(tag)
		if err != nil {
			return
		}
		for _, r := range p.rules {
			if r.expr == "" || r.msg == "" {
				t.Fatalf("%q: empty rule part %+v", tag, r)
			}
		}
		if len(p.rules) == 0 && p.schema == "" && p.mode == "" {
			t.Fatalf("%q: parsed to nothing", tag)
		}
	})
}
