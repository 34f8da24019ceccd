package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/audit"
	"github.com/mkrelease/mkrelease/bundle"
	"github.com/mkrelease/mkrelease/evidence/runner"
	"github.com/mkrelease/mkrelease/publish"
	"github.com/mkrelease/mkrelease/report"
	"github.com/mkrelease/mkrelease/reproduce"
	"github.com/spf13/cobra"
)

// jsonVerbs is every verb with --json: the report it encodes (an element
// of the list for a list-shaped report; a json.Marshaler with every field
// set, so that its encoding shows them all) and the fields it declares, in
// order. A field added, renamed, dropped or moved changes the contract of
// --json and must change here.
var jsonVerbs = []struct {
	verb   string
	shape  jsonShape
	report any
	fields []string
}{
	{"build", jsonObject, buildReport{}, []string{"project", "version", "out", "targets", "sandboxed", "sandbox", "network_isolated",
		"isolation_note", "actions_total", "actions_run", "actions_cached", "remote_cache", "actions_remote", "actions", "artifacts"}},
	{"check", jsonObject, checkReport{}, []string{"ok", "config", "lock", "project", "version", "findings"}},
	{"evidence import", jsonObject, runner.Report{KeyID: "k"}, []string{"archive", "checks", "findings", "key_id"}},
	{"evidence run", jsonList, evidenceRunReport{}, []string{"target", "archive", "statements", "passed", "summary"}},
	{"install", jsonObject, bundle.Installed{}, []string{"venv", "python", "created", "packages"}},
	{"lock", jsonObject, lockReport{}, []string{"lock", "changed", "changes"}},
	{"merge", jsonObject, mergeReport{}, []string{"out", "parts", "artifacts"}},
	{"publish", jsonObject, publish.Result{}, []string{"input", "decision", "assets", "noop", "vsa", "channel", "channel_refused", "skipped_targets"}},
	{"report", jsonObject, report.Report{}, []string{"schema", "kind", "path", "project", "version", "targets", "artifacts", "evidence", "decision", "channel"}},
	{"reproduce", jsonObject, reproduce.Report{}, []string{"inputs", "identical", "artifacts"}},
	{"verify", jsonObject, audit.Report{}, []string{"ok", "items"}},
}

// noJSONVerbs are the verbs that print no report, and why.
var noJSONVerbs = map[string]string{
	"keygen":  "writes a key pair and prints the two paths",
	"init":    "scaffolds a project once, printing for a person what it wrote and what to do next; the lock it runs has lock's --json",
	"release": "runs build, evidence run and publish, each of which has --json",
	"docs":    "writes the command reference (docs/reference) for the repository, printing nothing",
}

// TestJSONFields pins the fields of every verb's --json, checks them
// against the report type each verb encodes (a field of the type not
// declared, or declared and not in the type, fails), that the help lists
// them, and that every verb either has --json or is known to print no
// report.
func TestJSONFields(t *testing.T) {
	f := &Factory{IO: &IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Getenv: func(string) string { return "" }}
	got := map[string]*cobra.Command{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.HasParent() || c.HasSubCommands() || !c.Runnable() || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		verb := strings.TrimPrefix(c.CommandPath(), "mkrelease ")
		if c.Flags().Lookup("json") != nil {
			got[verb] = c
		} else if _, ok := noJSONVerbs[verb]; !ok {
			t.Errorf("mkrelease %s has no --json and is not among the verbs that print no report", verb)
		}
	}
	walk(NewCmdRoot(f))

	pinned := map[string]bool{}
	for _, tc := range jsonVerbs {
		pinned[tc.verb] = true
		t.Run(tc.verb, func(t *testing.T) {
			cmd, ok := got[tc.verb]
			if !ok {
				t.Fatalf("mkrelease %s has no --json flag", tc.verb)
			}
			j, ok := cmd.Flags().Lookup("json").Value.(*jsonFlag)
			if !ok {
				t.Fatalf("mkrelease %s --json is a %T, not addJSONFlag's", tc.verb, cmd.Flags().Lookup("json").Value)
			}
			if !slices.Equal(j.declared, tc.fields) {
				t.Errorf("declared fields %q, want %q", j.declared, tc.fields)
			}
			if j.shape != tc.shape {
				t.Errorf("shape %d, want %d", j.shape, tc.shape)
			}
			if slices.Contains(j.declared, jsonAll) {
				t.Errorf("a field is named %q, which bare --json stands for", jsonAll)
			}
			keys, err := jsonKeys(tc.report)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(keys, j.declared) {
				t.Errorf("%T encodes fields %q, but the verb declares %q", tc.report, keys, j.declared)
			}
			if !strings.Contains(cmd.Long, "JSON FIELDS\n") {
				t.Errorf("help has no JSON FIELDS section:\n%s", cmd.Long)
			}
			section := cmd.Long[strings.Index(cmd.Long, "JSON FIELDS"):]
			for _, name := range j.declared {
				if !slices.Contains(strings.FieldsFunc(section, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' }), name) {
					t.Errorf("help's JSON FIELDS does not list %q", name)
				}
			}
		})
	}
	for verb := range got {
		if !pinned[verb] {
			t.Errorf("mkrelease %s has --json but its fields are not pinned here", verb)
		}
	}
}

// jsonKeys lists the top-level keys v encodes to, in order: from the
// struct's json tags, as encoding/json reads them, or, for a type with its
// own MarshalJSON, from its encoding.
func jsonKeys(v any) ([]string, error) {
	if m, ok := v.(json.Marshaler); ok {
		raw, err := m.MarshalJSON()
		if err != nil {
			return nil, err
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return nil, errors.New("not a JSON object: " + string(raw))
		}
		var keys []string
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, err
			}
			keys = append(keys, tok.(string))
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
		}
		return keys, nil
	}
	var keys []string
	structKeys(reflect.TypeOf(v), &keys)
	return keys, nil
}

func structKeys(t reflect.Type, keys *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-":
		case f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct:
			structKeys(f.Type, keys)
		case !f.IsExported():
		case tag == "":
			*keys = append(*keys, f.Name)
		default:
			*keys = append(*keys, tag)
		}
	}
}

// TestJSONFlag checks how --json lands in a verb's options and which
// values it refuses.
func TestJSONFlag(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		on      bool
		fields  []string
		wantErr []string
	}{
		{"absent", nil, false, nil, nil},
		{"bare: every field", []string{"--json"}, true, nil, nil},
		{"all: every field", []string{"--json=all"}, true, nil, nil},
		{"a selection comes out in declared order", []string{"--json=findings,ok"}, true, []string{"ok", "findings"}, nil},
		{"a field named twice counts once", []string{"--json=ok,ok"}, true, []string{"ok"}, nil},
		{"spaces around a name", []string{"--json= ok , lock"}, true, []string{"ok", "lock"}, nil},
		{"the last --json wins", []string{"--json=ok", "--json"}, true, nil, nil},
		{"an unknown field", []string{"--json=okay"}, false, nil,
			[]string{`unknown JSON field "okay" for check`, `did you mean "ok"?`, "its fields are: ok, lock, findings"}},
		{"no suggestion when none is near", []string{"--json=ok,zzzzzzzz"}, false, nil,
			[]string{`unknown JSON field "zzzzzzzz" for check; its fields are: ok, lock, findings`}},
		{"an empty field", []string{"--json=ok,"}, false, nil, []string{`empty JSON field in "ok,"`, "ok, lock, findings"}},
		{"an empty value", []string{"--json="}, false, nil, []string{`empty JSON field in ""`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var on bool
			var fields []string
			cmd := &cobra.Command{Use: "check"}
			addJSONFlag(cmd, &on, &fields, jsonObject, "ok", "lock", "findings")
			err := cmd.ParseFlags(tc.args)
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("%q accepted", tc.args)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if on != tc.on || !slices.Equal(fields, tc.fields) || (fields == nil) != (tc.fields == nil) {
				t.Errorf("%q: on %v fields %q, want %v %q", tc.args, on, fields, tc.on, tc.fields)
			}
		})
	}
}

// TestWriteJSONFields checks that a selection keeps the named fields with
// the bytes the whole report has for them.
func TestWriteJSONFields(t *testing.T) {
	rep := checkReport{OK: false, Config: "a<b>.toml", Lock: "release.lock", Findings: []Finding{{Kind: "config", Line: 3, Message: "bad & worse"}}}
	runs := []evidenceRunReport{{Target: "t1", Archive: "a1", Passed: true}, {Target: "t2", Archive: "a2"}}
	for _, tc := range []struct {
		name   string
		v      any
		fields []string
		want   string
	}{
		{"two fields, escaped as the whole report is", rep, []string{"ok", "config"}, "{\n  \"ok\": false,\n  \"config\": \"a\\u003cb\\u003e.toml\"\n}\n"},
		{"a nested value keeps its indentation", rep, []string{"findings"},
			"{\n  \"findings\": [\n    {\n      \"kind\": \"config\",\n      \"line\": 3,\n      \"message\": \"bad \\u0026 worse\"\n    }\n  ]\n}\n"},
		{"a field left out when empty stays out", rep, []string{"ok", "project"}, "{\n  \"ok\": false\n}\n"},
		{"each element of a list", runs, []string{"target", "passed"},
			"[\n  {\n    \"target\": \"t1\",\n    \"passed\": true\n  },\n  {\n    \"target\": \"t2\",\n    \"passed\": false\n  }\n]\n"},
		{"an empty list", []evidenceRunReport{}, []string{"target"}, "[]\n"},
		{"no list at all", []evidenceRunReport(nil), []string{"target"}, "null\n"},
		{"a type with its own encoding", runner.Report{KeyID: "k1"}, []string{"key_id"}, "{\n  \"key_id\": \"k1\"\n}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := writeJSON(&b, tc.v, tc.fields); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("writeJSON(%q) =\n%s\nwant\n%s", tc.fields, b.String(), tc.want)
			}
		})
	}
	// Every field selected is the whole report, byte for byte.
	rep.Project, rep.Version = "demo", "1.0"
	var whole, all bytes.Buffer
	if err := writeJSON(&whole, rep, nil); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(&all, rep, []string{"ok", "config", "lock", "project", "version", "findings"}); err != nil {
		t.Fatal(err)
	}
	if whole.String() != all.String() {
		t.Errorf("every field selected:\n%s\nthe whole report:\n%s", all.String(), whole.String())
	}
}
