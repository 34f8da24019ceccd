package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/internal/suggest"
	"github.com/spf13/cobra"
)

// jsonAll is what a bare --json stands for: every declared field. It is no
// verb's field name (TestJSONFields checks).
const jsonAll = "all"

// jsonShape says what a verb's --json prints: one object, or a list of
// objects whose fields are those declared.
type jsonShape int

const (
	jsonObject jsonShape = iota
	jsonList
)

// jsonFlag is the value of a verb's --json flag: bare, it turns the JSON
// report on with every field; --json=FIELD,... turns it on with only the
// fields named, which must be among those the verb declares. It writes
// the outcome into the verb's options (on, and the fields in declared
// order, nil for all).
type jsonFlag struct {
	cmd      *cobra.Command
	declared []string
	shape    jsonShape
	on       *bool
	fields   *[]string
}

// String is the flag's value as --json=VALUE would give it.
func (j *jsonFlag) String() string {
	if j.fields == nil || *j.fields == nil {
		if j.on != nil && *j.on {
			return jsonAll
		}
		return ""
	}
	return strings.Join(*j.fields, ",")
}

// Type is empty so that the help line reads "--json[=all]": the value is
// optional, and when given it follows "=" (a value after a space is an
// argument of the verb).
func (j *jsonFlag) Type() string { return "" }

// Set takes "all" (bare --json) or a comma-separated list of declared
// fields, and refuses an unknown or empty field naming the verb and every
// field it has.
func (j *jsonFlag) Set(v string) error {
	*j.on = true
	if v == jsonAll {
		*j.fields = nil
		return nil
	}
	want := map[string]bool{}
	for name := range strings.SplitSeq(v, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			return fmt.Errorf("empty JSON field in %q: give --json for every field, or --json=FIELD[,FIELD...] with fields of %s: %s",
				v, j.cmd.CommandPath(), strings.Join(j.declared, ", "))
		}
		if !slices.Contains(j.declared, name) {
			hint := ""
			if s := suggest.Closest(name, j.declared); s != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", s)
			}
			return fmt.Errorf("unknown JSON field %q for %s%s; its fields are: %s", name, j.cmd.CommandPath(), hint, strings.Join(j.declared, ", "))
		}
		want[name] = true
	}
	sel := []string{}
	for _, name := range j.declared {
		if want[name] {
			sel = append(sel, name)
		}
	}
	*j.fields = sel
	return nil
}

// addJSONFlag gives cmd its --json flag with the fields of the report it
// prints, in the order the report encodes them (TestJSONFields checks them
// against the report's type), and lists them under JSON FIELDS in the
// verb's help. Bare --json sets *on; --json=FIELD,... sets *on and
// *fields (in declared order). shape says whether the report is one object
// or a list of them (the fields are then each element's).
func addJSONFlag(cmd *cobra.Command, on *bool, fields *[]string, shape jsonShape, declared ...string) {
	j := &jsonFlag{cmd: cmd, declared: declared, shape: shape, on: on, fields: fields}
	f := cmd.Flags().VarPF(j, "json", "", "print the report as JSON on stdout: every field, or only those named by --json=FIELD[,FIELD...] (see JSON FIELDS)")
	f.NoOptDefVal = jsonAll
	cmd.Long += "\n\n" + jsonHelp(shape, declared)
}

// jsonHelp is the JSON FIELDS section of a verb's help.
func jsonHelp(shape jsonShape, declared []string) string {
	var b strings.Builder
	b.WriteString("JSON FIELDS\n")
	if shape == jsonList {
		b.WriteString("  --json prints a list of objects, each with these fields; --json=FIELD,...\n  keeps only the fields named in each (the value needs \"=\"):\n")
	} else {
		b.WriteString("  --json prints an object with these fields; --json=FIELD,... keeps only the\n  fields named (the value needs \"=\"):\n")
	}
	line := " "
	for i, name := range declared {
		word := " " + name
		if i < len(declared)-1 {
			word += ","
		}
		if len(line)+len(word) > 78 {
			b.WriteString(line + "\n")
			line = " "
		}
		line += word
	}
	b.WriteString(line)
	return b.String()
}

// writeJSON writes v as indented JSON with a trailing newline. With fields
// (in declared order, as the --json flag gives them), only those top-level
// fields of v are written, of each element when v encodes as a list, in
// that order and with the values the whole report has; a field the whole
// report leaves out (empty, and encoded only when set) is left out too.
func writeJSON(w io.Writer, v any, fields []string) error {
	if fields == nil {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	sel, err := selectJSON(raw, fields)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, sel, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// selectJSON keeps the named fields, in that order, of the object raw, or
// of each object of the list raw; null stays null.
func selectJSON(raw []byte, fields []string) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case bytes.Equal(raw, []byte("null")):
		return raw, nil
	case len(raw) > 0 && raw[0] == '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			return nil, fmt.Errorf("JSON report: %w", err)
		}
		out := []byte{'['}
		for i, e := range elems {
			if i > 0 {
				out = append(out, ',')
			}
			o, err := selectJSON(e, fields)
			if err != nil {
				return nil, err
			}
			out = append(out, o...)
		}
		return append(out, ']'), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("JSON report: %w", err)
	}
	out := []byte{'{'}
	first := true
	for _, name := range fields {
		val, ok := obj[name]
		if !ok {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		key, err := json.Marshal(name)
		if err != nil {
			return nil, err
		}
		out = append(out, key...)
		out = append(out, ':')
		out = append(out, val...)
	}
	return append(out, '}'), nil
}
