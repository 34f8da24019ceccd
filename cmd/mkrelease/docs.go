package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/mkrelease/mkrelease/internal/atomicfile"
)

// referenceIndex is the index page of the command reference.
const referenceIndex = "README.md"

// referenceRegenerate is the command that writes this repository's
// command reference; the pages name it, and so does the test that finds
// the checked-in reference stale.
const referenceRegenerate = "go run ./cmd/mkrelease docs --out docs/reference"

// NewCmdDocs returns the hidden docs command, which writes the command
// reference: one Markdown page per command plus an index.
func NewCmdDocs(f *Factory) *cobra.Command {
	out := "docs/reference"
	cmd := &cobra.Command{
		Use:   "docs",
		Short: "Write the command reference: one Markdown page per command, and an index",
		Long: `Docs writes the command reference into a folder (--out): a Markdown page per
command (mkrelease.md, mkrelease_build.md, mkrelease_evidence_run.md, ...), with
its help, usage, examples and flags, and README.md, the index of the commands.
The pages link to each other with relative links. Each file is written
atomically and only when its content changes; pages an earlier run wrote for
commands that no longer exist are removed. Nothing else in the folder is touched.

The reference in this repository is docs/reference: run
` + referenceRegenerate + ` after changing a command's help.`,
		Example: `  mkrelease docs --out docs/reference`,
		Hidden:  true,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// A tree of its own: the pages do not depend on how mkrelease
			// was invoked (the flags parsed, the commands cobra adds when it
			// executes).
			written, removed, err := writeReference(NewCmdRoot(f), out)
			for _, n := range written {
				fmt.Fprintf(f.IO.Out, "wrote %s\n", filepath.Join(out, n))
			}
			for _, n := range removed {
				fmt.Fprintf(f.IO.Out, "removed %s\n", filepath.Join(out, n))
			}
			if err == nil && len(written)+len(removed) == 0 {
				fmt.Fprintf(f.IO.Out, "%s is up to date\n", out)
			}
			return err
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", out, "folder to write the reference into (created if missing)")
	return cmd
}

// generatedPage reports whether name is a file the reference generator
// owns in its folder: the index, and the pages, mkrelease*.md.
func generatedPage(name string) bool {
	return name == referenceIndex || (strings.HasPrefix(name, "mkrelease") && strings.HasSuffix(name, ".md"))
}

// referencePages renders the reference of root's command tree (the
// commands a user can run: not hidden ones, not help), keyed by file
// name. It prepares root for that (it adds the help flags, and the
// completion command and --version flag cobra adds when it executes) and
// changes the commands' long help, so root must be a tree of its own.
// The pages hold no date and nothing of the machine that renders them.
func referencePages(root *cobra.Command) (map[string][]byte, error) {
	root.InitDefaultCompletionCmd()
	root.InitDefaultVersionFlag()
	pages := map[string][]byte{}
	var index bytes.Buffer
	fmt.Fprintf(&index, "%s\n\n# Command reference\n\n", generatedHeader())
	fmt.Fprintf(&index, "Every mkrelease command, with its help, usage, examples and flags, as `mkrelease COMMAND --help`\nprints them. The manual starts at [docs/README.md](../README.md).\n\n")
	var visit func(c *cobra.Command, depth int) error
	visit = func(c *cobra.Command, depth int) error {
		name := pageName(c)
		c.DisableAutoGenTag = true // no date
		if c.Long != "" {
			// The help is plain text laid out for a terminal (aligned
			// columns, names with _ and *): shown as it is.
			c.Long = fenced(c.Long)
		}
		var page bytes.Buffer
		page.WriteString(generatedHeader() + "\n\n")
		if err := doc.GenMarkdownCustom(c, &page, func(link string) string { return link }); err != nil {
			return fmt.Errorf("the reference page of %s: %w", c.CommandPath(), err)
		}
		if _, dup := pages[name]; dup {
			return fmt.Errorf("two commands have the reference page %s", name)
		}
		pages[name] = page.Bytes()
		fmt.Fprintf(&index, "%s- [%s](%s) — %s\n", strings.Repeat("  ", depth), c.CommandPath(), name, c.Short)
		for _, sub := range c.Commands() { // sorted by name
			if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() {
				if err := visit(sub, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := visit(root, 0); err != nil {
		return nil, err
	}
	pages[referenceIndex] = index.Bytes()
	return pages, nil
}

// pageName is the file name of c's reference page, the one the pages'
// links name: the command path with "_" for spaces, and ".md".
func pageName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
}

func generatedHeader() string {
	return "<!-- Generated from the commands' help by `" + referenceRegenerate + "`; do not edit. -->"
}

// fenced puts text in a Markdown code block, with a fence longer than
// any run of backticks in it.
func fenced(text string) string {
	n, run := 3, 0
	for _, r := range text {
		if r == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", n)
	return fence + "text\n" + strings.TrimRight(text, "\n") + "\n" + fence
}

// writeReference writes the reference of root's command tree (a tree of
// its own, see referencePages) into dir, creating it if missing. Each
// file is written atomically, and only when its content changes; the
// generator's files (README.md and mkrelease*.md) of commands that no
// longer exist are removed, and nothing else in dir is touched. It
// returns the names of the files written and removed, sorted.
func writeReference(root *cobra.Command, dir string) (written, removed []string, err error) {
	pages, err := referencePages(root)
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("the reference folder: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(pages)) {
		p := filepath.Join(dir, name)
		old, err := os.ReadFile(p)
		if err == nil && bytes.Equal(old, pages[name]) {
			continue
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return written, removed, fmt.Errorf("reference page %s: %w", p, err)
		}
		if err := atomicfile.WriteFile(p, pages[name], 0o644); err != nil {
			return written, removed, fmt.Errorf("reference page %s: %w", p, err)
		}
		written = append(written, name)
	}
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return written, removed, fmt.Errorf("the reference folder: %w", err)
	}
	for _, e := range entries {
		if _, current := pages[e.Name()]; current || !e.Type().IsRegular() || !generatedPage(e.Name()) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			return written, removed, fmt.Errorf("a stale reference page: %w", err)
		}
		removed = append(removed, e.Name())
	}
	return written, removed, nil
}
