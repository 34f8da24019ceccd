package source

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/internal/pin"
)

// Repository says which repository the project folder dir is a git work
// tree of, when it is one and one of its remotes is a repository that urls
// (release.toml's [project] urls) names: that URL as urls spells it, and
// dir's folder within the work tree, slash-separated ("" at its top). It
// returns "", "" otherwise, git missing included. git reads the work
// tree's own configuration only (no system or user configuration), and
// the answer does not depend on where the work tree is, nor on how its
// remote is spelt (https, ssh, scp-like, with or without .git).
func Repository(ctx context.Context, dir string, urls map[string]string) (repo, sub string) {
	out, err := runGit(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", ""
	}
	top := strings.TrimSpace(string(out))
	out, err = runGit(ctx, dir, "config", "--get-regexp", `^remote\..*\.url$`)
	if err != nil {
		return "", "" // no remote
	}
	var remotes []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if _, u, ok := strings.Cut(line, " "); ok {
			remotes = append(remotes, strings.TrimSpace(u))
		}
	}
	for _, label := range slices.Sorted(maps.Keys(urls)) {
		for _, r := range remotes {
			if !pin.SameRepository(urls[label], r) {
				continue
			}
			rel, ok := within(top, dir)
			if !ok {
				return "", ""
			}
			return urls[label], rel
		}
	}
	return "", ""
}

// within returns the slash-separated path of dir below top, both with
// their links resolved.
func within(top, dir string) (string, bool) {
	t, err := filepath.EvalSymlinks(top)
	if err != nil {
		return "", false
	}
	d, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(t, d)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	if rel == "." {
		return "", true
	}
	return filepath.ToSlash(rel), true
}
