package learn

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/schema"
	"github.com/contractguard/contractguard/internal/yamljson"
)

// FuzzObserve: random bodies (several per input, split at NUL bytes) never
// make the learner panic, and the schema it learns from them accepts every
// one of them, by the guard's own validator (fast path and library), at
// thresholds low enough that every inference fires; the export reads back
// and merges without changing the contract.
func FuzzObserve(f *testing.F) {
	for _, seed := range []string{
		`{"a":1,"b":"x"}`,
		"{\"a\":1.5,\"b\":null}\x00{\"a\":-1,\"c\":[1,\"x\",{}]}",
		"\"ada@example.com\"\x00\"bob@example.com\"",
		"{\"12345\":{\"n\":1}}\x00{\"ada@example.com\":{\"n\":2}}",
		"[\"3e4666bf-d5e5-4aa7-b8ce-cefe41c7568a\"]\x00[]",
		`{"password":"x","s":"open","t":"2026-01-02T03:04:05Z","d":"2026-01-02","i":"::1"}`,
		`{"x":{"y":{"z":{"w":[[[[1]]]]}}}}`,
		`{"n":1e400,"m":-0,"o":0.0001e4,"p":12345678901234567890123}`,
		"{\"\\u0000\":\"\\u2028\",\"a~/b\":\"\\ud83d\\ude00\"}",
		"{\"null\":\"yes\",\"123\":\"# x\",\"a: b\":\"- c\",\"\\n\\\"q\":\"\\u0085\\u007f\",\" sp \":\"{x}\"}",
		`null`, ``,
	} {
		f.Add([]byte(seed))
	}
	lim := Limits{SampleRate: 1, EnumMinSamples: 1, StableSamples: 1, Depth: 6, Properties: 8, EnumValues: 4}
	f.Fuzz(func(t *testing.T, data []byte) {
		l := New(lim)
		var docs []*jsonbody.Doc
		for i, part := range bytes.Split(data, []byte{0}) {
			if i == 8 {
				break
			}
			doc := jsonbody.NullDoc()
			if len(part) > 0 {
				var err error
				if doc, err = jsonbody.Parse(part, 64); err != nil {
					continue
				}
			}
			docs = append(docs, doc)
			for range revealAt { // so that enums are revealed
				l.Observe("POST", "", "/fuzz", doc.Root(), epoch)
			}
		}
		if len(docs) == 0 {
			return
		}
		o := l.Export()
		cs := o.Contracts()
		if len(cs) != 1 {
			t.Fatalf("%d contracts from one route", len(cs))
		}
		c := cs[0]
		if c.Schema != nil {
			s, err := schema.NewCompiler(nil, nil).Compile("learned.json", c.Schema)
			if err != nil {
				t.Fatalf("the learned schema does not compile: %v\n%s", err, jsonText(c.Schema))
			}
			for _, doc := range docs {
				var problems []string
				rep := failure.ReportFunc(func(path, msg string) { problems = append(problems, path+": "+msg) })
				if !s.Validate(doc, rep) || !s.Reference(doc.Any(), rep) {
					t.Fatalf("the learned schema rejects a body it was learned from: %v\nbody %s\nschema %s", problems, jsonText(doc.Any()), jsonText(c.Schema))
				}
			}
		}
		// The file written reads back, by the loader's YAML reader, as the
		// contract: nothing a body sent escapes its scalar or the header.
		file := render(c)
		parts, err := yamljson.Parse(file)
		if err != nil || len(parts) != 1 {
			t.Fatalf("the contract file does not parse: %v\n%s", err, file)
		}
		got, err := yamljson.Value(parts[0].Body)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"endpoint": c.Endpoint, "method": c.Method}
		if c.Schema != nil {
			want["schema"] = c.Schema
		}
		if jsonText(got) != jsonText(want) {
			t.Fatalf("the contract file reads back otherwise:\n%s\n%s\n%s", jsonText(got), jsonText(want), file)
		}

		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		var back Observations
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("the export does not read back: %v\n%s", err, b)
		}
		if got := Merge(&back, New(lim).Export()).Contracts(); fmt.Sprint(got) != fmt.Sprint(cs) {
			t.Fatalf("through JSON and Merge the contract changed:\n%v\n%v", got, cs)
		}
	})
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// FuzzObserveMergedRoutes: bodies observed on twelve routes of one shape,
// which merge into one contract (/accounts/{accountId}), under caps the
// bodies reach: the merged schema accepts every body of every route. (A
// route's cap or Properties dropped members another route kept, and the
// merged schema held only the other routes' types: fc21b08, which
// FuzzObserve, on one route, could not find.)
func FuzzObserveMergedRoutes(f *testing.F) {
	for _, seed := range []string{
		"{\"o\":{\"q0p0\":\"s\",\"q0p1\":\"s\",\"q0p2\":\"s\",\"q0p3\":\"s\",\"q0p4\":\"s\",\"q0p5\":\"s\"}}\x00{\"o\":{\"q0p0\":1,\"q0p1\":1,\"q0p2\":1,\"q0p3\":1,\"q0p4\":1,\"q0p5\":1}}",
		"{\"a\":\"x\",\"123456\":1}\x00{\"b\":\"x\",\"c\":\"y\",\"d\":\"z\",\"e\":\"w\"}",
		`{"m3":1}` + "\x00" + `{"m3":"x","100001":1,"100002":1,"100003":1,"100004":1,"100005":1}`,
	} {
		f.Add([]byte(seed))
	}
	names := []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "niaj"}
	lim := Limits{SampleRate: 1, EnumMinSamples: 1, StableSamples: 1, Depth: 6, Properties: 4, EnumValues: 4, Routes: 16, MaxBytes: 16 << 10}
	f.Fuzz(func(t *testing.T, data []byte) {
		var docs []*jsonbody.Doc
		for i, part := range bytes.Split(data, []byte{0}) {
			if i == 8 {
				break
			}
			if doc, err := jsonbody.Parse(part, 64); err == nil {
				docs = append(docs, doc)
			}
		}
		if len(docs) == 0 {
			return
		}
		l := New(lim)
		seen := map[string][]*jsonbody.Doc{}
		for k, name := range names {
			for j := range docs {
				doc := docs[(k+j)%len(docs)]
				path := "/accounts/" + name
				seen[path] = append(seen[path], doc)
				l.Observe("PATCH", "", path, doc.Root(), epoch)
			}
		}
		for _, c := range l.Export().Contracts() {
			if c.Schema == nil {
				continue
			}
			s, err := schema.NewCompiler(nil, nil).Compile("learned.json", c.Schema)
			if err != nil {
				t.Fatalf("the learned schema does not compile: %v\n%s", err, jsonText(c.Schema))
			}
			for path, ds := range seen {
				if c.Endpoint != path && !strings.Contains(c.Endpoint, "{") {
					continue
				}
				for _, doc := range ds {
					var problems []string
					rep := failure.ReportFunc(func(p, msg string) { problems = append(problems, p+": "+msg) })
					if !s.Validate(doc, rep) {
						t.Fatalf("%s: the learned schema of %s rejects a body it was learned from: %v\nbody %s\nschema %s",
							path, c.Endpoint, problems, jsonText(doc.Any()), jsonText(c.Schema))
					}
				}
			}
		}
	})
}
