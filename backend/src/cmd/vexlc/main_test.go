package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vexl-dev/vexl/bytecode"
)

const demo = "# demo\nin x, y\nlet t = x * y\nout t + 2.5 * sqrt(abs(x)) - min(x, y) / 3\n"

// vexlc runs the command in dir and returns its exit status and output.
func vexlc(t *testing.T, dir, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func decodeFile(t *testing.T, path string) *bytecode.Program {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := bytecode.Decode(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}

func TestVersion(t *testing.T) {
	code, out, errs := vexlc(t, t.TempDir(), "", "--version")
	if code != 0 || out != "vexlc devel (bytecode v1)\n" || errs != "" {
		t.Errorf("--version = %d, %q, %q", code, out, errs)
	}
}

func TestCompileFileDefaultOutput(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "demo.vx"), demo)
	if code, out, errs := vexlc(t, dir, "", "demo.vx"); code != 0 || out != "" || errs != "" {
		t.Fatalf("vexlc demo.vx = %d, %q, %q", code, out, errs)
	}
	p := decodeFile(t, filepath.Join(dir, "demo.vxb"))
	if strings.Join(p.Inputs, ",") != "x,y" {
		t.Errorf("inputs = %v", p.Inputs)
	}
	// Compiling is deterministic.
	first, _ := os.ReadFile(filepath.Join(dir, "demo.vxb"))
	if code, _, _ := vexlc(t, dir, "", "-o", "again.vxb", "demo.vx"); code != 0 {
		t.Fatal("second compile failed")
	}
	second, _ := os.ReadFile(filepath.Join(dir, "again.vxb"))
	if !bytes.Equal(first, second) {
		t.Error("two compiles of the same source differ")
	}
}

func TestCompileForms(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "prog"), "in a\nout a * 2\n")
	tests := []struct {
		name  string
		stdin string
		args  []string
		out   string // file to decode, or "" for standard output
	}{
		{"flag after file", "", []string{"prog", "-o", "p1.vxb"}, "p1.vxb"},
		{"other extension", "", []string{"-o", "p2.vxb", "prog"}, "p2.vxb"},
		{"inline", "", []string{"-e", "in a\nout a * 2", "-o", "p3.vxb"}, "p3.vxb"},
		{"stdin to stdout", "in a\nout a * 2", []string{"-o", "-", "-"}, ""},
		{"inline to stdout", "", []string{"-e", "in a\nout a * 2", "-o", "-"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := vexlc(t, dir, tt.stdin, tt.args...)
			if code != 0 || errs != "" {
				t.Fatalf("vexlc %q = %d, stderr %q", tt.args, code, errs)
			}
			data := []byte(out)
			if tt.out != "" {
				var err error
				if data, err = os.ReadFile(filepath.Join(dir, tt.out)); err != nil {
					t.Fatal(err)
				}
			}
			p, err := bytecode.Decode(data)
			if err != nil || p.Inputs[0] != "a" {
				t.Errorf("output: %v, %v", p, err)
			}
		})
	}
}

func TestCompileErrorsAndUsage(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bad.vx"), "in x\nout x + y\n")
	writeFile(t, filepath.Join(dir, "good.vx"), "in x\nout x\n")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // prefix
	}{
		{"compile error", []string{"bad.vx"}, 1, "bad.vx:2:9: unknown identifier y\n"},
		{"inline error", []string{"-e", "in x\nout sqrt(x, x)", "-o", "o.vxb"}, 1, "<expr>:2:5: sqrt expects 1 argument, got 2\n"},
		{"missing file", []string{"nope.vx"}, 1, "vexlc: open nope.vx: no such file or directory\n"},
		{"no file", nil, 2, "vexlc: need exactly one source file\nusage:"},
		{"two files", []string{"good.vx", "bad.vx"}, 2, "vexlc: need exactly one source file\n"},
		{"unknown flag", []string{"-x", "good.vx"}, 2, "vexlc: flag provided but not defined: -x\n"},
		{"inline without output", []string{"-e", "in x\nout x"}, 2, "vexlc: -e needs -o OUT\n"},
		{"inline and file", []string{"-e", "in x\nout x", "-o", "o", "good.vx"}, 2, "vexlc: -e and a source file are exclusive\n"},
		{"stdin without output", []string{"-"}, 2, "vexlc: reading standard input needs -o OUT\n"},
		{"version with file", []string{"--version", "good.vx"}, 2, "vexlc: --version takes no other arguments\n"},
		{"disasm without file", []string{"--disasm"}, 2, "vexlc: --disasm takes exactly one compiled program\n"},
		{"disasm of source", []string{"--disasm", "good.vx"}, 1, "vexlc: good.vx: decode: invalid vexl program: not a vexl program (bad magic)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := vexlc(t, dir, "", tt.args...)
			if code != tt.code || !strings.HasPrefix(errs, tt.stderr) || out != "" {
				t.Errorf("vexlc %q = %d, stdout %q, stderr %q; want %d, stderr prefix %q", tt.args, code, out, errs, tt.code, tt.stderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.vxb")); !os.IsNotExist(err) {
		t.Errorf("a failed compile left bad.vxb behind (stat: %v)", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("directory holds %d entries after failures, want 2", len(entries))
	}
}

func TestHelp(t *testing.T) {
	code, out, _ := vexlc(t, t.TempDir(), "", "-h")
	if code != 0 || !strings.HasPrefix(out, "usage: vexlc") {
		t.Errorf("-h = %d, %q", code, out)
	}
}

func TestDisasm(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "demo.vx"), demo)
	if code, _, errs := vexlc(t, dir, "", "demo.vx"); code != 0 {
		t.Fatal(errs)
	}
	code, out, errs := vexlc(t, dir, "", "--disasm", "demo.vxb")
	if code != 0 || errs != "" {
		t.Fatalf("--disasm = %d, %q", code, errs)
	}
	for _, want := range []string{"vexl bytecode v1\n", "inputs:    x, y\n", "  0002  mul\n", "  0016  sub\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %q:\n%s", want, out)
		}
	}
}
