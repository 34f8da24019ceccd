// Command vexlc compiles vexl source to bytecode.
//
// Usage:
//
//	vexlc [-o OUT] FILE.vx       compile FILE.vx (to FILE.vxb by default)
//	vexlc -e PROGRAM -o OUT      compile a program given on the command line
//	vexlc --disasm FILE.vxb      print a readable listing of a compiled program
//	vexlc --version              print the version and the bytecode version
//
// FILE may be "-" for standard input and OUT may be "-" for standard output.
// Compile errors are printed to standard error as FILE:LINE:COL: message.
// The exit status is 0 on success, 1 when compiling, reading or writing
// fails, and 2 for a usage error.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/vexl-dev/vexl/bytecode"
	"github.com/vexl-dev/vexl/lang"
)

// version is the version vexlc reports.
const version = "devel"

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

const usage = `usage: vexlc [-o OUT] FILE.vx       compile FILE.vx (to FILE.vxb by default)
       vexlc -e PROGRAM -o OUT      compile a program given on the command line
       vexlc --disasm FILE.vxb      print a readable listing of a compiled program
       vexlc --version              print the version
FILE may be - for standard input, OUT may be - for standard output.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// versionLine returns the line printed by --version.
func versionLine() string {
	return fmt.Sprintf("vexlc %s (bytecode v%d)", version, bytecode.FormatVersion)
}

// options are the parsed command line.
type options struct {
	out, expr   string
	showVersion bool
	disasm      bool
	files       []string
	outSet      bool // -o was given
	exprSet     bool // -e was given
}

// parseArgs parses args, allowing flags before and after the file name.
func parseArgs(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("vexlc", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.out, "o", "", "output `file` (- for standard output)")
	fs.StringVar(&o.expr, "e", "", "compile `program` text instead of a file")
	fs.BoolVar(&o.showVersion, "version", false, "print the version")
	fs.BoolVar(&o.disasm, "disasm", false, "disassemble a compiled program")
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		o.files = append(o.files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "o":
			o.outSet = true
		case "e":
			o.exprSet = true
		}
	})
	return o, nil
}

func usageError(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "vexlc: "+format+"\n", args...)
	fmt.Fprint(stderr, usage)
	return exitUsage
}

// run is the whole command; it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parseArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	if err != nil {
		return usageError(stderr, "%v", err)
	}
	switch {
	case o.showVersion:
		if o.disasm || o.exprSet || o.outSet || len(o.files) > 0 {
			return usageError(stderr, "--version takes no other arguments")
		}
		fmt.Fprintln(stdout, versionLine())
		return exitOK
	case o.disasm:
		if o.exprSet || o.outSet || len(o.files) != 1 {
			return usageError(stderr, "--disasm takes exactly one compiled program")
		}
		return disasm(o.files[0], stdin, stdout, stderr)
	case o.exprSet:
		if len(o.files) > 0 {
			return usageError(stderr, "-e and a source file are exclusive")
		}
		if !o.outSet || o.out == "" {
			return usageError(stderr, "-e needs -o OUT")
		}
		return compile("<expr>", []byte(o.expr), o.out, stdout, stderr)
	}
	if len(o.files) != 1 {
		return usageError(stderr, "need exactly one source file")
	}
	file := o.files[0]
	out := o.out
	if !o.outSet {
		if file == "-" {
			return usageError(stderr, "reading standard input needs -o OUT")
		}
		out = strings.TrimSuffix(file, ".vx") + ".vxb"
	} else if out == "" {
		return usageError(stderr, "-o needs a file name")
	}
	src, name, err := readInput(file, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "vexlc: %v\n", err)
		return exitFailure
	}
	return compile(name, src, out, stdout, stderr)
}

// readInput reads a file, or standard input for "-".
func readInput(file string, stdin io.Reader) (data []byte, name string, err error) {
	if file == "-" {
		data, err = io.ReadAll(stdin)
		if err != nil {
			return nil, "", fmt.Errorf("reading standard input: %w", err)
		}
		return data, "<stdin>", nil
	}
	data, err = os.ReadFile(file)
	return data, file, err
}

func compile(name string, src []byte, out string, stdout, stderr io.Writer) int {
	prog, err := lang.Compile(name, src)
	if err != nil {
		var lerr *lang.Error
		if errors.As(err, &lerr) {
			fmt.Fprintln(stderr, lerr)
		} else {
			fmt.Fprintf(stderr, "vexlc: %v\n", err)
		}
		return exitFailure
	}
	data, err := bytecode.Encode(prog)
	if err != nil {
		fmt.Fprintf(stderr, "vexlc: %s: %v\n", name, err)
		return exitFailure
	}
	if err := writeOutput(out, data, stdout); err != nil {
		fmt.Fprintf(stderr, "vexlc: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// writeOutput writes data to standard output for "-", otherwise atomically
// to the file out: a failed write leaves no partial file behind.
func writeOutput(out string, data []byte, stdout io.Writer) error {
	if out == "-" {
		_, err := stdout.Write(data)
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".vexlc-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return nil
}

func disasm(file string, stdin io.Reader, stdout, stderr io.Writer) int {
	data, name, err := readInput(file, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "vexlc: %v\n", err)
		return exitFailure
	}
	prog, err := bytecode.Decode(data)
	if err != nil {
		fmt.Fprintf(stderr, "vexlc: %s: %v\n", name, err)
		return exitFailure
	}
	fmt.Fprint(stdout, bytecode.Disassemble(prog))
	return exitOK
}
