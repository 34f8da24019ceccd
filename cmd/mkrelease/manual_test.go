package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// mdFence is a fenced block (its lines hold no links or headings), and
// mdHeading a heading line; links are docs_test.go's mdLink.
var (
	mdFence   = regexp.MustCompile("(?ms)^```.*?^```")
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	// slugDrop is what GitHub leaves out of a heading's anchor.
	slugDrop = regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
)

// slugs are the anchors GitHub gives the headings of a Markdown page: lower
// case, punctuation dropped, spaces as hyphens, "-1", "-2" for repeats.
func slugs(page string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range mdHeading.FindAllStringSubmatch(mdFence.ReplaceAllString(page, ""), -1) {
		s := strings.ReplaceAll(slugDrop.ReplaceAllString(strings.ToLower(strings.TrimSpace(m[1])), ""), " ", "-")
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// TestManualLinks checks every relative link of the README and the manual
// (docs/, the generated reference included): the file it names exists, and
// the heading its #fragment names is on that page. Pages move and headings
// change; a link into the void is a manual that lies.
func TestManualLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	pages := []string{filepath.Join(root, "README.md")}
	for _, glob := range []string{"docs/*.md", "docs/reference/*.md"} {
		m, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, m...)
	}
	if len(pages) < 15 {
		t.Fatalf("found only %d pages of the manual: %v", len(pages), pages)
	}
	links := 0
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(mdFence.ReplaceAllString(string(b), ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			file, frag, _ := strings.Cut(target, "#")
			dest := p
			if file != "" {
				dest = filepath.Join(filepath.Dir(p), filepath.FromSlash(file))
			}
			rel, _ := filepath.Rel(root, p)
			page, err := os.ReadFile(dest)
			if err != nil {
				t.Errorf("%s: link %s: %v", rel, target, err)
				continue
			}
			if frag != "" && strings.HasSuffix(dest, ".md") && !slugs(string(page))[frag] {
				t.Errorf("%s: link %s: no heading with the anchor #%s on that page", rel, target, frag)
			}
		}
	}
	if links < 100 {
		t.Errorf("only %d relative links checked: is the link pattern still right?", links)
	}
}

func TestSlugs(t *testing.T) {
	page := "# Getting started\n## The output folder (`dist/`)\n```sh\n# not a heading\n```\n## `[[evidence.lane]]` keys\n## Getting started\n"
	got := slugs(page)
	for _, want := range []string{"getting-started", "the-output-folder-dist", "evidencelane-keys", "getting-started-1"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Errorf("a comment in a code block became a heading: %v", got)
	}
}
