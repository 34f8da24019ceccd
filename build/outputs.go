package build

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/internal/suggest"
)

// maxListed is how many file names an error about a step's outputs lists
// at most; the rest are counted ("and N more").
const maxListed = 10

// nearNameBytes bounds the part of a file name that is compared by edit
// distance, so that ranking what a step wrote costs a bounded amount per
// file, however long its names.
const nearNameBytes = 64

// nearFile is a file a step wrote, scored by its nearness to a declared
// output it did not write. Lower is nearer, field by field.
type nearFile struct {
	path string
	// related is false unless one base name starts with the other, case
	// folded: liblz4.so.1 for liblz4.so, lz4.h in another folder for lz4.h.
	related bool
	// dist is the edit distance between the case-folded base names (their
	// first nearNameBytes bytes).
	dist int
	// elsewhere says the file is in another folder than the missing one.
	elsewhere bool
}

func (a nearFile) nearerThan(b nearFile) bool {
	switch {
	case a.related != b.related:
		return a.related
	case a.dist != b.dist:
		return a.dist < b.dist
	case a.elsewhere != b.elsewhere:
		return !a.elsewhere
	}
	return a.path < b.path
}

// nearest keeps the files nearest to one missing output (a slash path
// relative to $MKRELEASE_OUT), at most limit of them, nearest first.
type nearest struct {
	missing   string
	dir, base string // of missing; base case folded
	limit     int
	best      []nearFile
}

func newNearest(missing string, limit int) *nearest {
	return &nearest{missing: missing, dir: path.Dir(missing), base: strings.ToLower(path.Base(missing)), limit: limit}
}

// add scores the written file p (a slash path) and keeps it if it is
// among the limit nearest so far.
func (n *nearest) add(p string) {
	base := strings.ToLower(path.Base(p))
	f := nearFile{path: p, elsewhere: path.Dir(p) != n.dir,
		related: strings.HasPrefix(base, n.base) || strings.HasPrefix(n.base, base)}
	if f.related {
		f.dist = max(len(base)-len(n.base), len(n.base)-len(base)) // the edit distance of a prefix
	} else {
		f.dist = suggest.Distance(truncate(n.base), truncate(base), nearNameBytes+1)
	}
	if len(n.best) == n.limit && !f.nearerThan(n.best[len(n.best)-1]) {
		return
	}
	i, _ := slices.BinarySearchFunc(n.best, f, func(e, t nearFile) int {
		if e.nearerThan(t) {
			return -1
		}
		return 1
	})
	n.best = slices.Insert(n.best, i, f)
	if len(n.best) > n.limit {
		n.best = n.best[:n.limit]
	}
}

func (n *nearest) names() []string {
	names := make([]string, len(n.best))
	for i, f := range n.best {
		names[i] = f.path
	}
	return names
}

func truncate(s string) string {
	if len(s) > nearNameBytes {
		return s[:nearNameBytes]
	}
	return s
}

// missingOutputsError says which declared outputs (slash paths, sorted) a
// step did not write to out, lists for each the other files it wrote
// there (those it does not declare among outputs), nearest first
// (maxListed names shared among the missing outputs, at least two each,
// however many files it wrote), and says how to fix the step or its
// declaration. outputs are all the declared outputs, sorted.
func missingOutputsError(out string, missing, outputs []string) error {
	limit := max(2, maxListed/len(missing))
	near := make([]*nearest, len(missing))
	for i, m := range missing {
		near[i] = newNearest(m, limit)
	}
	total, others := 0, 0
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(out, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		total++
		if _, declared := slices.BinarySearch(outputs, rel); declared {
			return nil
		}
		others++
		for _, n := range near {
			n.add(rel)
		}
		return nil
	})
	var b strings.Builder
	fmt.Fprintf(&b, "declared output(s) not written to $MKRELEASE_OUT: %s", strings.Join(missing, ", "))
	switch {
	case err != nil:
		fmt.Fprintf(&b, " (listing what the step wrote instead failed: %v)", err)
	case total == 0:
		b.WriteString("; the step wrote nothing there")
	case others == 0:
		b.WriteString("; the step wrote nothing else there")
	case len(near) == 1:
		fmt.Fprintf(&b, "; it wrote (nearest first): %s", listed(near[0].names(), others))
	default:
		parts := make([]string, len(near))
		for i, n := range near {
			parts[i] = fmt.Sprintf("to %s: %s", n.missing, listed(n.names(), others))
		}
		fmt.Fprintf(&b, "; it wrote %d other files, nearest first %s", others, strings.Join(parts, "; "))
	}
	if others == 0 {
		fmt.Fprintf(&b, "; make the step write %s into $MKRELEASE_OUT", strings.Join(missing, ", "))
	} else {
		fmt.Fprintf(&b, "; declare the file(s) the step writes in its outputs, or make the step write %s", strings.Join(missing, ", "))
	}
	return errors.New(b.String())
}

// listed joins names and counts the rest of total ("and N more").
func listed(names []string, total int) string {
	s := strings.Join(names, ", ")
	if rest := total - len(names); rest > 0 {
		s += fmt.Sprintf(", and %d more", rest)
	}
	return s
}
