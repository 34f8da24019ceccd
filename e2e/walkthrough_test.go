package e2e

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// walkthroughFile is the manual page, relative to the repository root,
// that holds the walkthrough TestWalkthrough runs.
const walkthroughFile = "docs/getting-started.md"

// walkthroughHeading is the section of walkthroughFile whose marked blocks
// TestWalkthrough runs.
const walkthroughHeading = "## Release your own project"

// walkthroughInfo is the info string of a fenced block the walkthrough
// runs: "```sh walkthrough".
const walkthroughInfo = "sh walkthrough"

// walkthroughBlocks returns, in order, the bodies of the fenced blocks
// marked walkthroughInfo in the section of the Markdown page headed
// exactly heading (it ends at the next heading of level one or two). It
// refuses a page the test would read wrongly: the heading missing or
// twice, no marked block, a marked block outside the section, a marker
// spelt otherwise ("```bash walkthrough"), or a fence left open. Errors
// name the place as walkthroughFile:LINE.
func walkthroughBlocks(page, heading string) ([]string, error) {
	lines := strings.Split(strings.ReplaceAll(page, "\r\n", "\n"), "\n")
	var (
		blocks             []string
		inSection, seen    bool
		fenceLine          int // 1-based line of the open fence, 0 when none
		marked             bool
		body               []string
		fence              string
		sectionLine, count int
	)
	for i, line := range lines {
		n := i + 1
		if fenceLine != 0 {
			if strings.TrimRight(line, " ") == fence {
				if marked {
					blocks = append(blocks, strings.Join(body, "\n")+"\n")
				}
				fenceLine, marked, body = 0, false, nil
				continue
			}
			if marked {
				body = append(body, line)
			}
			continue
		}
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			fence = line[:3]
			info := strings.TrimSpace(strings.TrimLeft(line, line[:1]))
			fenceLine = n
			fields := strings.Fields(info)
			if strings.Contains(info, "walkthrough") {
				if strings.Join(fields, " ") != walkthroughInfo {
					return nil, fmt.Errorf("%s:%d: fence info %q: a walkthrough block is marked exactly %q", walkthroughFile, n, info, walkthroughInfo)
				}
				if !inSection {
					return nil, fmt.Errorf("%s:%d: a %q block outside %q would not run: move it into the section or unmark it", walkthroughFile, n, walkthroughInfo, heading)
				}
				marked = true
				count++
			}
			continue
		}
		if strings.HasPrefix(line, "# ") || strings.HasPrefix(line, "## ") {
			if strings.TrimRight(line, " ") == heading {
				if seen {
					return nil, fmt.Errorf("%s:%d: %q again (first at line %d): the walkthrough must be one section", walkthroughFile, n, heading, sectionLine)
				}
				seen, inSection, sectionLine = true, true, n
			} else {
				inSection = false
			}
		}
	}
	if fenceLine != 0 {
		return nil, fmt.Errorf("%s:%d: fenced block never closed", walkthroughFile, fenceLine)
	}
	if !seen {
		return nil, fmt.Errorf("%s: no section headed %q", walkthroughFile, heading)
	}
	if count == 0 {
		return nil, fmt.Errorf("%s:%d: section %q has no %q block", walkthroughFile, sectionLine, heading, walkthroughInfo)
	}
	return blocks, nil
}

func TestWalkthroughBlocks(t *testing.T) {
	const head = "# Getting started\n\n## Release your own project\n\ntext\n\n"
	tests := []struct {
		name, page string
		want       []string
		err        string
	}{
		{"blocks in order, others left out",
			head + "```sh walkthrough\na\nb\n```\n\n```text\nout\n```\n\n```sh\nnot run\n```\n\n```sh walkthrough\nc\n```\n\n## Next\n\n```sh\nd\n```\n",
			[]string{"a\nb\n", "c\n"}, ""},
		{"a heredoc's fence-like text inside a block is body",
			head + "```sh walkthrough\ncat <<'EOF'\n  ```\nEOF\n```\n",
			[]string{"cat <<'EOF'\n  ```\nEOF\n"}, ""},
		{"tilde fences and CRLF", strings.ReplaceAll(head+"~~~sh walkthrough\nx\n~~~\n", "\n", "\r\n"),
			[]string{"x\n"}, ""},
		{"a subsection stays in the section", head + "### Step\n\n```sh walkthrough\ny\n```\n",
			[]string{"y\n"}, ""},
		{"no section", "# Getting started\n\n```sh walkthrough\nx\n```\n", nil, "outside"},
		{"no section at all", "# Getting started\n", nil, "docs/getting-started.md: no section headed"},
		{"section without blocks", head + "```sh\nx\n```\n", nil, "has no"},
		{"marker spelt otherwise", head + "```bash walkthrough\nx\n```\n", nil, "marked exactly"},
		{"marked block after the section", head + "```sh walkthrough\nx\n```\n## Other\n```sh walkthrough\ny\n```\n", nil, "docs/getting-started.md:11: a \"sh walkthrough\" block outside"},
		{"section twice", head + "```sh walkthrough\nx\n```\n## Release your own project\n", nil, "again (first at line 3)"},
		{"fence left open", head + "```sh walkthrough\nx\n", nil, "docs/getting-started.md:7: fenced block never closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := walkthroughBlocks(tt.page, walkthroughHeading)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
				t.Errorf("blocks = %q, want %q", got, tt.want)
			}
		})
	}
}

// walkthroughScript reads walkthroughFile of the checkout and joins its
// walkthrough blocks into one script, each block announced by a `:` line
// that bash -x traces.
func walkthroughScript(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(walkthroughFile)))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := walkthroughBlocks(string(b), walkthroughHeading)
	if err != nil {
		t.Fatal(err)
	}
	var s strings.Builder
	for i, blk := range blocks {
		fmt.Fprintf(&s, ": %s walkthrough block %d\n%s", walkthroughFile, i+1, blk)
	}
	return s.String()
}

// walkthroughSteps are the commands the walkthrough runs, in its
// order; each must start a line of the walkthrough's script.
var walkthroughSteps = []string{
	"git init", "mkrelease init", "sed -i", "mkrelease lock", "git add -A && git commit",
	"mkrelease build", "mkrelease install dist/greet-0.1.0-linux-x86_64.tar.gz",
	"mkrelease evidence run", "mkrelease publish", "mkrelease verify published", "git status --short",
}

// TestWalkthroughSteps checks, without running it, that the walkthrough in
// walkthroughFile makes every step of the issue, in order, so that a step
// dropped from the page fails here and not only as a missing file later.
func TestWalkthroughSteps(t *testing.T) {
	if err := stepsInOrder(walkthroughScript(t), walkthroughSteps); err != nil {
		t.Error(err)
	}
	// a walkthrough that lost a step, or swapped two, is refused
	script := walkthroughScript(t)
	for _, broken := range []string{
		strings.Replace(script, "mkrelease lock", "true", 1),
		strings.Replace(strings.Replace(script, "mkrelease evidence run", "EV", 1), "mkrelease publish", "mkrelease evidence run", 1),
	} {
		if stepsInOrder(broken, walkthroughSteps) == nil {
			t.Errorf("a script missing or reordering a step passed:\n%s", broken)
		}
	}
}

// stepsInOrder reports the first of steps that does not start a line of
// script after the previous one.
func stepsInOrder(script string, steps []string) error {
	lines := strings.Split(script, "\n")
	at := 0
	for _, step := range steps {
		found := false
		for ; at < len(lines); at++ {
			if strings.HasPrefix(strings.TrimSpace(lines[at]), step) {
				found = true
				at++
				break
			}
		}
		if !found {
			return fmt.Errorf("the walkthrough in %s has no %q after the steps before it (%s)", walkthroughFile, step, strings.Join(steps, ", "))
		}
	}
	return nil
}

// runWalkthrough runs script with bash -e (and pipefail, tracing each
// command) in dir; on failure the error carries the end of the output,
// where the failing command is traced.
func runWalkthrough(dir string, env []string, script string) (string, error) {
	f := filepath.Join(dir, "..", "walkthrough.sh")
	if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
		return "", err
	}
	cmd := exec.Command("bash", "-e", "-o", "pipefail", "-x", f)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		tail := out.String()
		if len(tail) > 6000 {
			tail = "..." + tail[len(tail)-6000:]
		}
		return out.String(), fmt.Errorf("bash -e %s: %w; the end of its output:\n%s", f, err, tail)
	}
	return out.String(), nil
}

// TestWalkthroughRunnerStops checks that the runner stops at the first
// command that fails and says so: the walkthrough cannot pass a broken step.
func TestWalkthroughRunnerStops(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	os.Mkdir(dir, 0o755)
	out, err := runWalkthrough(dir, []string{"PATH=" + os.Getenv("PATH")}, "echo one\nfalse | cat\necho after\n")
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("err = %v, want the script's exit status", err)
	}
	if !strings.Contains(out, "one") || strings.Contains(out, "after") || !strings.Contains(err.Error(), "+ false") {
		t.Errorf("output %q, err %v: want it stopped at false, traced", out, err)
	}
}

// TestWalkthrough follows "Release your own project" in walkthroughFile as
// written: it runs the section's marked blocks, in order, in one bash -e
// session in an empty folder, with the mkrelease under test on PATH, and
// checks what each step says it produces.
func TestWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds, installs, gathers evidence and publishes a C library")
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the walkthrough is written for Linux x86_64")
	}
	for _, tool := range []string{"bash", "git", "cc", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the walkthrough needs %s (scripts/bootstrap installs it): %v", tool, err)
		}
	}
	script := walkthroughScript(t)
	root := t.TempDir()
	work, home := filepath.Join(root, "work"), filepath.Join(root, "home")
	for _, d := range []string{work, home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// a user's git identity, as on their machine
	gitconfig := "[user]\n\tname = Ada Dev\n\temail = ada@example.invalid\n[init]\n\tdefaultBranch = main\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(gitconfig), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + filepath.Dir(mkrelease) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home, "MKRELEASE_CACHE=" + filepath.Join(root, "cache"),
		"TZ=UTC", "LANG=C.UTF-8", "GIT_CONFIG_NOSYSTEM=1",
	}
	for _, k := range []string{"PYENV_ROOT", "TMPDIR"} { // where the interpreters and the scratch space are
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}

	start := time.Now()
	out, err := runWalkthrough(work, env, script)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the walkthrough ran in %s", time.Since(start).Round(time.Second))

	// what the page says the steps print: init's detection (2), lock
	// after the edits (3), the greeting of the installed package (5), and
	// the evidence's lanes (6)
	for _, line := range []string{
		"detected: greet 0.1.0: Makefile (libgreet.so); Python package greet",
		"release.lock: written (3 changes); review it and commit it",
		"release.lock: up to date",
		"Hello, world, from C!",
		"PASS  linux-x86_64 smoke: 2 cases: 2 passed, 0 failed, 0 errors, 0 skipped",
	} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(line) + `$`).MatchString(out) {
			t.Errorf("the walkthrough did not print %q; output:\n%s", line, out)
		}
	}
	proj := filepath.Join(work, "greet")

	// 3: both edits are in release.toml and in the wheels
	toml, err := os.ReadFile(filepath.Join(proj, "release.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{`summary = "Say hello from C"`, `license = "MIT"`, `env = { CFLAGS = "-O2" }`} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(line) + `$`).Match(toml) {
			t.Errorf("release.toml has no line %s after init and the edits", line)
		}
	}

	// 4: the pair: the binding is pure Python, the native wheel manylinux
	dist := filepath.Join(proj, "dist")
	binding := filepath.Join(dist, "greet-0.1.0-py3-none-any.whl")
	// the name the page shows: libgreet.so imports snprintf, whose
	// symbol version is older than glibc 2.17, the manylinux floor
	natives := []string{filepath.Join(dist, "greet_native-0.1.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl")}
	if _, err := os.Stat(natives[0]); err != nil {
		all, _ := filepath.Glob(filepath.Join(dist, "*.whl"))
		t.Fatalf("want the native wheel %s, dist has %q", filepath.Base(natives[0]), all)
	}
	for _, whl := range []string{binding, natives[0]} {
		meta := zipMember(t, whl, strings.SplitN(filepath.Base(whl), "-", 2)[0]+"-0.1.0.dist-info/METADATA")
		for _, want := range []string{"Summary: Say hello from C", "License-Expression: MIT", "Author-email: Ada Dev <ada@example.invalid>"} {
			if !strings.Contains(meta, want+"\n") {
				t.Errorf("%s METADATA lacks %q:\n%s", filepath.Base(whl), want, meta)
			}
		}
	}
	if lib := zipMember(t, natives[0], "greet/libgreet.so"); !strings.HasPrefix(lib, "\x7fELF") {
		t.Errorf("%s: greet/libgreet.so is not an ELF library", filepath.Base(natives[0]))
	}
	if meta := zipMember(t, binding, "greet-0.1.0.dist-info/METADATA"); !strings.Contains(meta, "Requires-Dist: greet-native==0.1.0\n") {
		t.Errorf("the binding does not require its native wheel at this version:\n%s", meta)
	}

	// 6: the evidence is in dist/
	for _, f := range []string{"greet-0.1.0-verifier-evidence-linux-x86_64.tar.gz", "greet-0.1.0-verifier-evidence-linux-x86_64.intoto.jsonl"} {
		if _, err := os.Stat(filepath.Join(dist, f)); err != nil {
			t.Errorf("evidence run: %v", err)
		}
	}

	// 7: the channel holds the release, and verifies (here too, not only
	// in the page's own command)
	rel := filepath.Join(proj, "published", "releases", "0.1.0")
	for _, f := range []string{filepath.Base(binding), filepath.Base(natives[0]), "greet-0.1.0-linux-x86_64.tar.gz",
		"greet-0.1.0-verifier-evidence-linux-x86_64.tar.gz", "greet-0.1.0.vsa.intoto.jsonl"} {
		if _, err := os.Stat(filepath.Join(rel, f)); err != nil {
			t.Errorf("publish: %v", err)
		}
	}
	r := run{dir: proj, env: env[1:], umask: "022"}
	r.mustMkrelease(t, "verify", "published")

	// git shows nothing of what mkrelease wrote: the page says `git
	// status --short` prints nothing
	cmd := exec.Command("git", "status", "--porcelain", "--untracked-files=all", "--ignored=no")
	cmd.Dir, cmd.Env = proj, env
	st, err := cmd.Output()
	if err != nil {
		t.Fatalf("git status: %v", err)
	}
	if len(st) != 0 {
		t.Errorf("git status in the walked project lists (want nothing; above all not .mkrelease/, dist/ or published):\n%s", st)
	}
}

// zipMember returns the member name of the zip file path.
func zipMember(t *testing.T, path, name string) string {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	for _, f := range z.File {
		if f.Name == name {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			b, err := io.ReadAll(rc)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	t.Fatalf("%s has no member %s", filepath.Base(path), name)
	return ""
}

// FuzzWalkthroughBlocks feeds the extractor any text: it never panics, and
// what it returns it found: each block's lines are lines of the input.
func FuzzWalkthroughBlocks(f *testing.F) {
	for _, s := range []string{
		"## Release your own project\n```sh walkthrough\na\n```\n",
		"## Release your own project\n~~~sh walkthrough\n```\n~~~\n## x\n",
		"```sh walkthrough\n", "## Release your own project\n```", "```\n## Release your own project\n```\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, page string) {
		blocks, err := walkthroughBlocks(page, walkthroughHeading)
		if err != nil {
			if blocks != nil {
				t.Errorf("blocks %q with error %v", blocks, err)
			}
			return
		}
		in := strings.ReplaceAll(page, "\r\n", "\n")
		for _, b := range blocks {
			if !strings.Contains(in, b) && b != "\n" {
				t.Errorf("block %q is not in the input", b)
			}
		}
	})
}
