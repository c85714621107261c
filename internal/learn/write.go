package learn

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/contractguard/contractguard/internal/failure"
	paths "github.com/contractguard/contractguard/internal/route"
	"github.com/contractguard/contractguard/internal/yamljson"
)

// How WriteContracts treats the contracts already in the folder:
//
//   - A learned route with no contract there is written to a new file,
//     METHOD_segments.yaml (parameters by name), ending in a checksum line.
//   - A file that WriteContracts wrote, still matching its checksum (no
//     one edited it), is rewritten with what was learned now.
//   - A route that already has a contract someone wrote or edited (any file
//     without a matching checksum) is never overwritten: when the learned
//     schema differs, it is written beside, as NAME.yaml.learned, which the
//     guard does not load, for review. With Force, a file WriteContracts
//     wrote and someone edited is overwritten; a file it never wrote, never.
//
// Nothing is deleted: contracts of routes not seen in this traffic are
// listed in the summary and left alone.

// checksumPrefix starts the last line of a written file's header; the
// SHA-256 after it covers everything below that line.
const checksumPrefix = "# contractguard-learned sha256:"

// WriteOptions sets how WriteContracts treats existing files.
type WriteOptions struct {
	// Force overwrites files WriteContracts wrote that were edited since.
	Force bool
}

// ChangeKind is what WriteContracts did for one contract.
type ChangeKind int

// The kinds of Change.
const (
	Added     ChangeKind = iota // a new contract file
	Updated                     // a file of WriteContracts rewritten
	Unchanged                   // what was learned is what is there
	Review                      // differs from a contract someone wrote: written beside as .learned
	NotSeen                     // a contract in the folder whose route the traffic did not show
)

func (k ChangeKind) String() string {
	return [...]string{"new", "updated", "unchanged", "review", "not seen"}[k]
}

// Change is one line of a Summary.
type Change struct {
	Kind     ChangeKind
	Method   string
	Endpoint string
	File     string   // the file written, or the existing contract's
	Existing string   // for Review: the contract it differs from
	Details  []string // how the schema changed: "+ /nickname", "/age: type integer → number"
}

// Summary is what WriteContracts did, contract by contract.
type Summary struct {
	Changes []Change
}

// Count is the number of changes of a kind.
func (s Summary) Count(k ChangeKind) int {
	n := 0
	for _, c := range s.Changes {
		if c.Kind == k {
			n++
		}
	}
	return n
}

// String is the summary for a person: one line per contract, with its
// details indented below, then the totals. What an export or a file name
// says is written as comments are (commentSafe): an endpoint of an export
// from anywhere, or a file of the folder, cannot end a line or send a
// terminal its control sequences.
func (s Summary) String() string {
	var b strings.Builder
	for _, c := range s.Changes {
		fmt.Fprintf(&b, "%-9s %s", c.Kind, commentSafe(c.Method+" "+c.Endpoint))
		switch c.Kind {
		case Review:
			fmt.Fprintf(&b, ": differs from %s, written to %s for review", commentSafe(c.Existing), commentSafe(c.File))
		default:
			fmt.Fprintf(&b, ": %s", commentSafe(c.File))
		}
		b.WriteByte('\n')
		for _, d := range c.Details {
			fmt.Fprintf(&b, "            %s\n", commentSafe(d))
		}
	}
	fmt.Fprintf(&b, "%d new, %d updated, %d unchanged, %d to review, %d not seen\n",
		s.Count(Added), s.Count(Updated), s.Count(Unchanged), s.Count(Review), s.Count(NotSeen))
	return b.String()
}

// existing is a contract found in the folder.
type existing struct {
	file   string // path
	method string
	end    string
	schema any
	ours   bool // in a file WriteContracts wrote, unedited
	edited bool // in a file WriteContracts wrote, edited since
	seen   bool
}

// WriteContracts writes one YAML contract per learned route into dir
// (made if missing), each with a header that says what was learned and
// why, and returns what it did. See the rules above for the contracts
// already there. An error is returned for a folder that cannot be read or
// written; contract files that do not parse are named in it too, since
// their routes cannot be told.
func WriteContracts(dir string, ls []Learned, opt WriteOptions) (Summary, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Summary{}, err
	}
	have, files, err := readExisting(dir)
	if err != nil {
		return Summary{}, err
	}
	var sum Summary
	used, reviews := map[string]bool{}, map[string]bool{}
	for _, l := range ls {
		content := render(l)
		key, err := shapeKey(l.Method, l.Endpoint)
		if err != nil {
			return sum, fmt.Errorf("learned %s %s: %w", l.Method, l.Endpoint, err)
		}
		c := Change{Method: l.Method, Endpoint: l.Endpoint}
		ex := have[key]
		if ex == nil {
			name := fileName(l.Method, l.Endpoint, key, files, used)
			c.Kind, c.File = Added, filepath.Join(dir, name)
			if err := writeFile(c.File, content); err != nil {
				return sum, err
			}
			sum.Changes = append(sum.Changes, c)
			continue
		}
		ex.seen = true
		c.Details = diffSchemas(ex.schema, schemaValue(l.Schema))
		if ex.end != l.Endpoint {
			c.Details = append([]string{"endpoint " + ex.end + " → " + l.Endpoint}, c.Details...)
		}
		switch {
		case ex.ours || ex.edited && opt.Force:
			// Rewritten even when the contract is the same, for the header's
			// counts; reported as updated only when the contract changed.
			c.File, c.Kind = ex.file, Updated
			if len(c.Details) == 0 {
				c.Kind = Unchanged
			}
			if ex.edited {
				c.Details = append([]string{"overwrote edits (force)"}, c.Details...)
			}
			if old, _ := os.ReadFile(ex.file); !bytes.Equal(old, content) {
				if err := writeFile(c.File, content); err != nil {
					return sum, err
				}
			}
		case len(c.Details) == 0:
			c.Kind, c.File = Unchanged, ex.file
		default:
			c.Kind, c.Existing = Review, ex.file
			c.File = reviewName(ex.file, key, reviews)
			if err := writeFile(c.File, content); err != nil {
				return sum, err
			}
		}
		sum.Changes = append(sum.Changes, c)
	}
	for _, k := range slices.Sorted(maps.Keys(have)) {
		if ex := have[k]; !ex.seen {
			sum.Changes = append(sum.Changes, Change{Kind: NotSeen, Method: ex.method, Endpoint: ex.end, File: ex.file})
		}
	}
	return sum, nil
}

// reviewName is the file a learned contract is written to for review,
// beside the contract file it differs from: NAME.yaml.learned, or with a
// hash of its shape when another learned contract took that name in this
// run (a file may hold several contracts).
func reviewName(file, key string, taken map[string]bool) string {
	base := strings.TrimSuffix(file, filepath.Ext(file))
	name := base + ".yaml.learned"
	if taken[strings.ToLower(name)] { // lower case: see fileName
		sum := sha256.Sum256([]byte(key))
		name = base + "-" + hex.EncodeToString(sum[:4]) + ".yaml.learned"
	}
	taken[strings.ToLower(name)] = true
	return name
}

// render is a contract's file: the header, the checksum line, the contract.
func render(l Learned) []byte {
	var h []byte
	line := func(format string, args ...any) {
		h = append(h, "# "...)
		h = append(h, commentSafe(fmt.Sprintf(format, args...))...)
		h = append(h, '\n')
	}
	line("Learned by contractguard from %d samples of %s %s,", l.Samples, l.Method, l.Endpoint)
	line("first seen %s, last seen %s.", stamp(l.First), stamp(l.Last))
	line("A draft: review it before you enforce it (docs/learning-mode.md).")
	h = append(h, "#\n"...)
	line("What was inferred, and why:")
	for _, n := range l.Notes {
		line("  - %s", n)
	}
	h = append(h, "#\n"...)
	body := appendContract(nil, l)
	sum := sha256.Sum256(body)
	h = append(h, checksumPrefix...)
	h = append(h, hex.EncodeToString(sum[:])...)
	h = append(h, " (remove this line if you edit the contract)\n"...)
	return append(h, body...)
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}

// written tells a file WriteContracts wrote from others: ours is a file
// with a checksum line that matches what follows it, and only comments
// above it; edited, one whose checksum no longer matches, or with more
// than comments above it (the checksum does not cover the header, so a
// key or a contract added at the top would be lost at the next rewrite).
func written(data []byte) (ours, edited bool) {
	i := bytes.Index(data, []byte("\n"+checksumPrefix))
	if i < 0 {
		return false, false
	}
	if !onlyComments(data[:i]) {
		return false, true
	}
	rest := data[i+1+len(checksumPrefix):]
	end := bytes.IndexByte(rest, '\n')
	if end < 0 || end < 64 {
		return false, true
	}
	want := string(rest[:64])
	sum := sha256.Sum256(rest[end+1:])
	if hex.EncodeToString(sum[:]) == want {
		return true, false
	}
	return false, true
}

// onlyComments reports YAML text of comment lines and blank lines only.
func onlyComments(text []byte) bool {
	for line := range bytes.Lines(text) {
		if line = bytes.TrimSpace(line); len(line) > 0 && line[0] != '#' {
			return false
		}
	}
	return true
}

// readExisting reads the contracts already in dir, by method and shape,
// and the names of its files.
func readExisting(dir string) (map[string]*existing, map[string]bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	have := map[string]*existing{}
	files := map[string]bool{}
	var problems []error
	for _, e := range entries {
		files[strings.ToLower(e.Name())] = true // see fileName
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if e.IsDir() || ext != ".yaml" && ext != ".yml" && ext != ".json" {
			continue
		}
		if strings.HasPrefix(e.Name(), ".") {
			// Hidden, as the guard's loader leaves it: an editor's lock
			// file (Emacs's .#a.yaml, a link to nowhere while a.yaml is
			// edited) or a hidden copy is no contract of the folder.
			continue
		}
		file := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, nil, failure.PrintablePath(err)
		}
		ours, edited := written(data)
		// Each problem is one line, FILE:LINE: message (the column too
		// where the reader gives one), as the guard's loader names them.
		at := func(line int, err error) error {
			var ye *yamljson.Error
			if errors.As(err, &ye) && ye.Line > 0 {
				return fmt.Errorf("%s:%w", failure.Printable(file), ye)
			}
			return fmt.Errorf("%s:%d: %w", failure.Printable(file), line, err)
		}
		docs, err := yamljson.Parse(data)
		if err != nil {
			problems = append(problems, at(1, err))
			continue
		}
		for _, d := range docs {
			v, err := yamljson.Value(d.Body)
			if err != nil {
				problems = append(problems, at(d.Line, err))
				continue
			}
			list, ok := v.([]any)
			if !ok {
				list = []any{v}
			}
			for _, item := range list {
				m, _ := item.(map[string]any)
				method, _ := m["method"].(string)
				end, _ := m["endpoint"].(string)
				key, err := shapeKey(method, end)
				if err != nil {
					problems = append(problems, at(d.Line, fmt.Errorf("%q %q: %w", method, end, err)))
					continue
				}
				if have[key] == nil {
					have[key] = &existing{file: file, method: strings.ToUpper(method), end: end, schema: m["schema"], ours: ours, edited: edited}
				}
			}
		}
	}
	if len(problems) > 0 {
		// One line each: what is wrong, then each problem.
		head := fmt.Errorf("contracts already in %s cannot be read, so learned ones could clash with them", failure.Printable(dir))
		return nil, nil, errors.Join(append([]error{head}, problems...)...)
	}
	return have, files, nil
}

// shapeKey is a contract's method and endpoint shape: two contracts of one
// key conflict.
func shapeKey(method, endpoint string) (string, error) {
	if method == "" {
		return "", errors.New("no method")
	}
	p, err := paths.ParsePattern(endpoint)
	if err != nil {
		return "", err
	}
	return strings.ToUpper(method) + " " + p.Shape(), nil
}

// fileName is the file of a new contract: method and segments joined by
// _, each reduced to letters, digits, - and . ("POST /users/{userId}" is
// post_users_userId.yaml), with a hash of the shape when that name is
// taken, and a number after it when that is taken too. files and used hold
// names in lower case: on a case-insensitive file system (macOS, Windows)
// POST /API/Users would otherwise replace post_api_users.yaml, which a
// person may have written.
func fileName(method, endpoint, key string, files, used map[string]bool) string {
	taken := func(name string) bool {
		name = strings.ToLower(name)
		return files[name] || used[name]
	}
	// A method is any token: | and * in it are refused in a name by Windows.
	b := appendReduced(nil, strings.ToLower(method))
	for _, seg := range strings.Split(endpoint, "/") {
		if seg == "" {
			continue
		}
		b = append(b, '_')
		b = appendReduced(b, seg[:min(len(seg), 40)])
	}
	if endpoint == "/" {
		b = append(b, "_root"...)
	}
	// Not hidden: a guard does not load a file whose name starts with a
	// dot, nor does readExisting read it (a method "." or ".X").
	b = bytes.TrimLeft(b, ".")
	if len(b) > maxFileBase {
		b = b[:maxFileBase] // names sharing the cut part get the hash below
	}
	name := string(b) + ".yaml"
	if taken(name) {
		sum := sha256.Sum256([]byte(key))
		base := string(b) + "-" + hex.EncodeToString(sum[:4])
		name = base + ".yaml"
		for n := 2; taken(name); n++ {
			name = base + "-" + strconv.Itoa(n) + ".yaml"
		}
	}
	used[strings.ToLower(name)] = true
	return name
}

// appendReduced appends the letters, digits, - and . of s.
func appendReduced(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; alnum(c) || c == '-' || c == '.' {
			b = append(b, c)
		}
	}
	return b
}

// maxFileBase is the longest a file name is before its hash, number and
// .yaml: file systems refuse names over 255 bytes, and a learned endpoint
// (up to maxTemplate bytes, after a method of up to 32) named segment by
// segment would be longer.
const maxFileBase = 200

// writeFile writes a file whole or not at all.
func writeFile(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), ".learned-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// schemaValue is a learned schema as a JSON value, as a contract file
// would give it (nil stays nil).
func schemaValue(s map[string]any) any {
	if s == nil {
		return nil
	}
	return s
}

// diffSchemas says how a schema changed, for the reviewer: members added
// (+) and removed (-), and keywords that differ, at JSON pointers. At most
// maxDetails lines.
func diffSchemas(old, new any) []string {
	var out []string
	diffAt(old, new, "", &out)
	if len(out) > maxDetails {
		out = append(out[:maxDetails], fmt.Sprintf("… and %d more", len(out)-maxDetails))
	}
	return out
}

const maxDetails = 20

func diffAt(old, new any, ptr string, out *[]string) {
	at := ptr
	if at == "" {
		at = "body"
	}
	om, ok1 := old.(map[string]any)
	nm, ok2 := new.(map[string]any)
	if !ok1 || !ok2 {
		if !sameJSON(old, new) {
			*out = append(*out, fmt.Sprintf("%s: schema %s → %s", at, brief(old), brief(new)))
		}
		return
	}
	for _, k := range []string{"type", "format", "enum", "minimum", "additionalProperties"} {
		if k == "additionalProperties" {
			if _, isMap := nm[k].(map[string]any); isMap {
				if _, wasMap := om[k].(map[string]any); wasMap {
					diffAt(om[k], nm[k], ptr+"/*", out)
					continue
				}
			}
		}
		if !sameJSON(om[k], nm[k]) {
			*out = append(*out, fmt.Sprintf("%s: %s %s → %s", at, k, brief(om[k]), brief(nm[k])))
		}
	}
	oldReq, newReq := stringSet(om["required"]), stringSet(nm["required"])
	for _, n := range slices.Sorted(maps.Keys(newReq)) {
		if !oldReq[n] {
			*out = append(*out, fmt.Sprintf("%s: now required", ptr+"/"+escapePointer(n)))
		}
	}
	for _, n := range slices.Sorted(maps.Keys(oldReq)) {
		if !newReq[n] {
			*out = append(*out, fmt.Sprintf("%s: no longer required", ptr+"/"+escapePointer(n)))
		}
	}
	op, _ := om["properties"].(map[string]any)
	np, _ := nm["properties"].(map[string]any)
	for _, n := range slices.Sorted(maps.Keys(np)) {
		if _, ok := op[n]; !ok {
			*out = append(*out, "+ "+ptr+"/"+escapePointer(n))
		}
	}
	for _, n := range slices.Sorted(maps.Keys(op)) {
		if _, ok := np[n]; !ok {
			*out = append(*out, "- "+ptr+"/"+escapePointer(n))
		} else {
			diffAt(op[n], np[n], ptr+"/"+escapePointer(n), out)
		}
	}
	if om["items"] != nil || nm["items"] != nil {
		diffAt(om["items"], nm["items"], ptr+"/[]", out)
	}
}

func stringSet(v any) map[string]bool {
	s := map[string]bool{}
	list, _ := v.([]any)
	for _, e := range list {
		if str, ok := e.(string); ok {
			s[str] = true
		}
	}
	return s
}

// sameJSON compares JSON values as their canonical JSON (numbers by text).
func sameJSON(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return reflect.DeepEqual(a, b)
	}
	return bytes.Equal(ja, jb)
}

// brief is a JSON value in at most 60 characters, "none" for nothing.
func brief(v any) string {
	if v == nil {
		return "none"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 60 {
		return string(bytes.ToValidUTF8(b[:57], nil)) + "…"
	}
	return string(b)
}
