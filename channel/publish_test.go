package channel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mkrelease/mkrelease/bundle/deps"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/wheel"
)

func TestPublishLayout(t *testing.T) {
	parent := t.TempDir()
	dest := filepath.Join(parent, "channel")
	r2, r3 := release(t, "0.2.0", ""), release(t, "0.3.0", "")
	res2 := mustPublish(t, dest, r2)
	res3 := mustPublish(t, dest, r3)
	if res2.NoOp || res3.NoOp || res2.GenerationNumber != 1 || res3.GenerationNumber != 2 {
		t.Fatalf("results: %+v, %+v", res2, res3)
	}

	// DEST is a relative link to the newest generation; the previous one
	// is kept; nothing else is beside them.
	if target, err := os.Readlink(dest); err != nil || target != ".channel.generations/g-000002" {
		t.Fatalf("Readlink(DEST) = %q, %v", target, err)
	}
	if got, want := listDir(t, parent), []string{".channel.generations", ".channel.lock", "channel"}; !slices.Equal(got, want) {
		t.Errorf("DEST's folder holds %v, want %v", got, want)
	}
	if got, want := listDir(t, filepath.Join(parent, ".channel.generations")), []string{"g-000001", "g-000002"}; !slices.Equal(got, want) {
		t.Errorf("generations %v, want %v", got, want)
	}

	// Every asset is there byte for byte; unchanged ones are hard links
	// to the previous generation's.
	for _, r := range []Release{r2, r3} {
		for _, a := range r.Assets {
			want, _ := os.ReadFile(a)
			got, err := os.ReadFile(filepath.Join(dest, "releases", r.Version, filepath.Base(a)))
			if err != nil || string(got) != string(want) {
				t.Errorf("releases/%s/%s: %v (same bytes: %v)", r.Version, filepath.Base(a), err, string(got) == string(want))
			}
		}
	}
	w020 := filepath.Base(wheelsOf(r2.Assets)[0])
	a, _ := os.Stat(filepath.Join(parent, ".channel.generations/g-000001/releases/0.2.0", w020))
	b, _ := os.Stat(filepath.Join(parent, ".channel.generations/g-000002/releases/0.2.0", w020))
	if !os.SameFile(a, b) {
		t.Errorf("%s was copied into the new generation, not hard-linked", w020)
	}

	// The PEP 503 root lists each project once, normalised.
	root := readFile(t, filepath.Join(dest, "simple/index.html"))
	for _, want := range []string{`<a href="vexl/">vexl</a>`, `<a href="vexl-plugin/">vexl-plugin</a>`} {
		if strings.Count(root, want) != 1 {
			t.Errorf("simple/index.html lacks %s:\n%s", want, root)
		}
	}

	// Project pages: relative links with the wheel's sha256, the escaped
	// Requires-Python and the .metadata digest, which is METADATA's.
	for _, r := range []Release{r2, r3} {
		for _, whl := range wheelsOf(r.Assets) {
			name := filepath.Base(whl)
			fn, _ := wheel.ParseFilename(name)
			meta := zipMember(t, whl, fn.DistInfo()+"/METADATA")
			metaFile := readFile(t, filepath.Join(dest, "releases", r.Version, name+".metadata"))
			if metaFile != string(meta) {
				t.Errorf("%s.metadata is not the wheel's METADATA", name)
			}
			sha, _, _ := checksum.File(whl)
			rp := "&gt;=3.8"
			project := "vexl"
			if strings.HasPrefix(name, "vexl_plugin") {
				rp, project = "&gt;=3.8,&lt;4", "vexl-plugin"
			}
			m := checksum.Bytes(meta)
			link := fmt.Sprintf(`<a href="../../releases/%s/%s#sha256=%s" data-requires-python="%s" data-dist-info-metadata="sha256=%s" data-core-metadata="sha256=%s">%s</a>`, r.Version, name, sha, rp, m, m, name)
			page := readFile(t, filepath.Join(dest, "simple", project, "index.html"))
			if strings.Count(page, link) != 1 {
				t.Errorf("simple/%s/index.html lacks\n%s\nin\n%s", project, link, page)
			}
			fl := strings.Replace(link, `href="../../`, `href="`, 1)
			if strings.Count(readFile(t, filepath.Join(dest, "find-links.html")), fl) != 1 {
				t.Errorf("find-links.html lacks %s", fl)
			}
		}
	}
	for _, pg := range []string{"simple/index.html", "simple/vexl/index.html", "simple/vexl-plugin/index.html", "find-links.html", "index.html"} {
		text := readFile(t, filepath.Join(dest, pg))
		if strings.Contains(text, `href="/`) || strings.Contains(text, "://") || strings.Contains(text, parent) {
			t.Errorf("%s has a link that is not relative:\n%s", pg, text)
		}
	}

	// channel.json and Open agree.
	c, err := Open("file://" + dest)
	if err != nil {
		t.Fatal(err)
	}
	st := c.State()
	if st.Project != "vexl" || st.Newest != "0.3.0" || st.Generation != 2 || len(st.Versions) != 2 || st.Versions[0].Version != "0.2.0" {
		t.Errorf("State() = %+v", st)
	}
	if len(st.Versions[1].Assets) != len(r3.Assets) || len(st.Versions[1].Wheels) != 2 {
		t.Errorf("0.3.0 has %d assets, %d wheels", len(st.Versions[1].Assets), len(st.Versions[1].Wheels))
	}
	st.Versions[0].Assets[0].Name = "changed"
	if c.State().Versions[0].Assets[0].Name == "changed" {
		t.Error("State() hands out the channel's own slices")
	}
	wantPaths := []string{"releases/0.3.0/vexl-0.3.0-py3-none-any.whl", "releases/0.3.0/vexl-0.3.0-py3-none-any.whl.metadata", "simple/vexl-plugin/index.html", "channel.json"}
	for _, p := range wantPaths {
		if !slices.Contains(res3.URLPaths, p) {
			t.Errorf("URLPaths lacks %s: %v", p, res3.URLPaths)
		}
	}
	mustVerify(t, dest)

	// A third version: the oldest generation is collected, the previous
	// one kept.
	res4 := mustPublish(t, dest, release(t, "0.4.0", ""))
	if !slices.Equal(res4.Removed, []string{filepath.Join(".channel.generations", "g-000001")}) {
		t.Errorf("Removed = %v", res4.Removed)
	}
	if got, want := listDir(t, filepath.Join(parent, ".channel.generations")), []string{"g-000002", "g-000003"}; !slices.Equal(got, want) {
		t.Errorf("generations %v, want %v", got, want)
	}
	mustVerify(t, dest)
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestPublishRules publishes 0.2.0 and 0.3.0, then one more release, and
// checks the outcome.
func TestPublishRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		next func(t *testing.T) Release
		// noop: nothing written; rule: refused by it, naming assets.
		noop     bool
		rule     string
		assets   []string
		versions []string
		// only: the rule is the only reason.
		only bool
	}{
		{name: "identical republish", next: func(t *testing.T) Release { return release(t, "0.3.0", "") }, noop: true},
		{name: "identical republish of an older version", next: func(t *testing.T) Release { return release(t, "0.2.0", "") }, noop: true},
		{name: "different bytes", next: func(t *testing.T) Release { return release(t, "0.3.0", "rebuilt") },
			rule: RuleDifferentAssets, assets: []string{"SHA256SUMS", "vexl-0.3.0-linux-x86_64.tar.gz", "vexl-0.3.0-linux-x86_64.tar.gz.sha256"}},
		{name: "asset missing", next: func(t *testing.T) Release {
			r := release(t, "0.3.0", "")
			r.Assets = slices.DeleteFunc(r.Assets, func(a string) bool { return strings.HasSuffix(a, ".vsa.intoto.jsonl") })
			return r
		}, rule: RuleDifferentAssets, assets: []string{"vexl-0.3.0.vsa.intoto.jsonl"}},
		{name: "re-signed summary, declared volatile", next: func(t *testing.T) Release {
			r := release(t, "0.3.0", "")
			resign(t, r.Assets)
			r.Volatile = []string{"vexl-0.3.0.vsa.intoto.jsonl", "vexl-0.3.0.vsa.intoto.jsonl.sha256"}
			return r
		}, noop: true},
		{name: "volatile summary left out of the republish", next: func(t *testing.T) Release {
			r := release(t, "0.3.0", "")
			r.Assets = slices.DeleteFunc(r.Assets, func(a string) bool { return strings.Contains(a, ".vsa.intoto.jsonl") })
			r.Volatile = []string{"vexl-0.3.0.vsa.intoto.jsonl", "vexl-0.3.0.vsa.intoto.jsonl.sha256"}
			return r
		}, noop: true},
		{name: "re-signed summary, not volatile", next: func(t *testing.T) Release {
			r := release(t, "0.3.0", "")
			resign(t, r.Assets)
			return r
		}, rule: RuleDifferentAssets, assets: []string{"vexl-0.3.0.vsa.intoto.jsonl", "vexl-0.3.0.vsa.intoto.jsonl.sha256"}},
		{name: "volatile does not hide other bytes", next: func(t *testing.T) Release {
			r := release(t, "0.3.0", "rebuilt")
			r.Volatile = []string{"vexl-0.3.0.vsa.intoto.jsonl", "vexl-0.3.0.vsa.intoto.jsonl.sha256"}
			return r
		}, rule: RuleDifferentAssets, assets: []string{"SHA256SUMS", "vexl-0.3.0-linux-x86_64.tar.gz", "vexl-0.3.0-linux-x86_64.tar.gz.sha256"}},
		{name: "same version spelled otherwise", next: func(t *testing.T) Release { return release(t, "0.3", "") },
			rule: RuleDifferentAssets},
		{name: "downgrade", next: func(t *testing.T) Release { return release(t, "0.1.0", "") }, rule: RuleDowngrade},
		{name: "downgrade allowed", next: func(t *testing.T) Release {
			r := release(t, "0.1.0", "")
			r.AllowDowngrade = true
			return r
		}, versions: []string{"0.1.0", "0.2.0", "0.3.0"}},
		{name: "pre-release of the newest is lower", next: func(t *testing.T) Release { return release(t, "0.3.0rc1", "") }, rule: RuleDowngrade},
		{name: "newer", next: func(t *testing.T) Release { return release(t, "0.3.1", "") }, versions: []string{"0.2.0", "0.3.0", "0.3.1"}},
		{name: "other project", next: func(t *testing.T) Release {
			r := release(t, "0.4.0", "")
			r.Project = "other"
			return r
		}, rule: RuleOtherProject, only: true},
		{name: "other project, lower and same versions", next: func(t *testing.T) Release {
			r := release(t, "0.2.0", "rebuilt")
			r.Project = "other"
			return r
		}, rule: RuleOtherProject, only: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dest := filepath.Join(parent, "ch")
			mustPublish(t, dest, release(t, "0.2.0", ""))
			mustPublish(t, dest, release(t, "0.3.0", ""))
			before := listDir(t, filepath.Join(parent, ".ch.generations"))
			r := tc.next(t)

			c, err := Open(dest)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := c.Plan(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Publish(context.Background(), dest, r)

			if tc.rule != "" {
				var ref *RefusedError
				if !errors.As(err, &ref) || ref.ExitCode() != 1 {
					t.Fatalf("Publish = %v, want a refusal by %s", err, tc.rule)
				}
				if !slices.ContainsFunc(ref.Reasons, func(rs Reason) bool { return rs.Rule == tc.rule }) {
					t.Errorf("reasons %v, want %s", ref.Reasons, tc.rule)
				}
				if tc.only && len(ref.Reasons) != 1 {
					t.Errorf("reasons %v, want %s alone", ref.Reasons, tc.rule)
				}
				for _, a := range tc.assets {
					if !strings.Contains(err.Error(), a) || !slices.ContainsFunc(ref.Reasons, func(rs Reason) bool { return slices.Contains(rs.Assets, a) }) {
						t.Errorf("refusal does not name %s:\n%v", a, err)
					}
				}
				if tc.assets != nil && len(ref.Reasons[0].Assets) != len(tc.assets) {
					t.Errorf("refusal names %v, want %v", ref.Reasons[0].Assets, tc.assets)
				}
				if p := plan.Refusal(); p == nil || p.Error() != ref.Error() {
					t.Errorf("Plan.Refusal() = %v, want what Publish says", p)
				}
			} else if err != nil {
				t.Fatalf("Publish = %v", err)
			}
			after := listDir(t, filepath.Join(parent, ".ch.generations"))
			if tc.noop || tc.rule != "" {
				if res != nil && (!res.NoOp || res.GenerationNumber != 2) {
					t.Errorf("NoOp = %v, generation %d; want a no-op on generation 2", res.NoOp, res.GenerationNumber)
				}
				if tc.noop != plan.NoOp() {
					t.Errorf("Plan.NoOp() = %v", plan.NoOp())
				}
				if !slices.Equal(before, after) {
					t.Errorf("generations %v, then %v: something was written", before, after)
				}
				tc.versions = []string{"0.2.0", "0.3.0"}
			}
			if got := versions(t, dest); !slices.Equal(got, tc.versions) {
				t.Errorf("versions %v, want %v", got, tc.versions)
			}
			if c, _ := Open(dest); c.State().Newest != tc.versions[len(tc.versions)-1] {
				t.Errorf("newest %s", c.State().Newest)
			}
			mustVerify(t, dest)
		})
	}
}

func TestPlanFacts(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "ch")
	c, err := Open(dest)
	if err != nil {
		t.Fatal(err)
	}
	r := release(t, "0.2.0", "")
	p, err := c.Plan(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if p.SameVersionPublished || p.LowerThanNewest || p.Newest != "" || len(p.Published) != 0 || p.Refusal() != nil || p.NoOp() {
		t.Errorf("plan on an empty channel: %+v", p)
	}
	if _, err := os.Lstat(filepath.Dir(dest)); err != nil {
		t.Fatal(err)
	}
	if names := listDir(t, filepath.Dir(dest)); len(names) != 0 {
		t.Errorf("Open and Plan wrote %v", names)
	}
	mustPublish(t, dest, r)
	mustPublish(t, dest, release(t, "0.3.0", ""))
	c, _ = Open(dest)
	p, err = c.Plan(context.Background(), release(t, "0.2.0", "x"))
	if err != nil {
		t.Fatal(err)
	}
	if !p.SameVersionPublished || p.SameVersionIdentical || !p.LowerThanNewest || p.Newest != "0.3.0" ||
		!slices.Equal(p.Published, []string{"0.2.0", "0.3.0"}) || len(p.Differing) != 3 {
		t.Errorf("plan: %+v", p)
	}
	d := p.Differing[1]
	if d.Name != "vexl-0.2.0-linux-x86_64.tar.gz" || d.Published == "" || d.Given == "" || d.Published == d.Given {
		t.Errorf("Differing[1] = %+v", d)
	}
}

func TestPublishDest(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dest string) string // returns the dest to pass
		// refused: RuleNotChannel; usage: a *UsageError; else published.
		refused, usage bool
		why            string
	}{
		{name: "missing parent", setup: func(t *testing.T, dest string) string { return filepath.Join(dest, "a", "b") }},
		{name: "empty folder", setup: func(t *testing.T, dest string) string { must(t, os.Mkdir(dest, 0o755)); return dest }},
		{name: "file URL", setup: func(t *testing.T, dest string) string { return "file://" + dest }},
		{name: "non-empty folder", refused: true, why: "non-empty folder", setup: func(t *testing.T, dest string) string {
			must(t, os.Mkdir(dest, 0o755))
			must(t, os.WriteFile(filepath.Join(dest, "index.html"), []byte("hand made"), 0o644))
			return dest
		}},
		{name: "copy of a channel", refused: true, why: "a copy?", setup: func(t *testing.T, dest string) string {
			must(t, os.Mkdir(dest, 0o755))
			must(t, os.WriteFile(filepath.Join(dest, StateFile), []byte("{}"), 0o644))
			return dest
		}},
		{name: "file", refused: true, why: "regular file", setup: func(t *testing.T, dest string) string {
			must(t, os.WriteFile(dest, nil, 0o644))
			return dest
		}},
		{name: "link elsewhere", refused: true, why: "links to", setup: func(t *testing.T, dest string) string {
			must(t, os.Symlink(t.TempDir(), dest))
			return dest
		}},
		{name: "http URL", usage: true, setup: func(t *testing.T, dest string) string { return "http://example.invalid/ch" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "ch")
			arg := tc.setup(t, dest)
			before := listDir(t, filepath.Dir(dest))
			res, err := Publish(context.Background(), arg, release(t, "0.2.0", ""))
			var ref *RefusedError
			var use *UsageError
			switch {
			case tc.refused:
				if !errors.As(err, &ref) || ref.Reasons[0].Rule != RuleNotChannel || !strings.Contains(err.Error(), tc.why) {
					t.Fatalf("Publish = %v, want a refusal saying %q", err, tc.why)
				}
				if after := listDir(t, filepath.Dir(dest)); !slices.Equal(before, after) {
					t.Errorf("a refused publish wrote beside DEST: %v, then %v", before, after)
				}
			case tc.usage:
				if !errors.As(err, &use) || use.ExitCode() != 2 {
					t.Fatalf("Publish = %v, want a usage error", err)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if fi, err := os.Lstat(res.Dest); err != nil || fi.Mode()&os.ModeSymlink == 0 {
					t.Errorf("DEST %s is not a link: %v", res.Dest, err)
				}
				mustVerify(t, arg)
			}
		})
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestPublishUsageErrors(t *testing.T) {
	dir := t.TempDir()
	good := makeRelease(t, "0.2.0", "")
	other := makeRelease(t, "0.3.0", "")
	dup := filepath.Join(dir, filepath.Base(good[0]))
	must(t, os.WriteFile(dup, []byte("x"), 0o644))
	hidden := filepath.Join(dir, ".hidden")
	must(t, os.WriteFile(hidden, []byte("x"), 0o644))
	clash := filepath.Join(dir, filepath.Base(wheelsOf(good)[0])+".metadata")
	must(t, os.WriteFile(clash, []byte("x"), 0o644))
	noMeta := filepath.Join(dir, "vexl-0.2.0-py3-none-any.whl")
	must(t, os.WriteFile(noMeta, []byte("not a zip"), 0o644))
	badName := filepath.Join(t.TempDir(), "vexl-0.2.0.whl")
	must(t, os.WriteFile(badName, []byte("x"), 0o644))
	for _, tc := range []struct {
		name string
		r    Release
		want string // in the message
	}{
		{"invalid project", Release{Project: "no spaces", Version: "0.2.0", Assets: good}, "project"},
		{"invalid version", Release{Project: "vexl", Version: "zero", Assets: good}, "version"},
		{"no assets", Release{Project: "vexl", Version: "0.2.0"}, "no assets"},
		{"missing asset", Release{Project: "vexl", Version: "0.2.0", Assets: append(slices.Clone(good), filepath.Join(dir, "gone"))}, "gone"},
		{"folder asset", Release{Project: "vexl", Version: "0.2.0", Assets: append(slices.Clone(good), dir)}, "not a regular file"},
		{"same name twice", Release{Project: "vexl", Version: "0.2.0", Assets: append(slices.Clone(good), dup)}, "same name"},
		{"hidden name", Release{Project: "vexl", Version: "0.2.0", Assets: append(slices.Clone(good), hidden)}, "reserved"},
		{"metadata name", Release{Project: "vexl", Version: "0.2.0", Assets: append(slices.Clone(good), clash)}, "core metadata"},
		{"no wheel", Release{Project: "vexl", Version: "0.2.0", Assets: good[len(good)-1:]}, "no wheel"},
		{"wheel of another version", Release{Project: "vexl", Version: "0.2.0", Assets: append(slices.Clone(good[2:]), wheelsOf(other)[0])}, "not the release's"},
		{"wheel without METADATA", Release{Project: "vexl", Version: "0.2.0", Assets: []string{noMeta}}, noMeta},
		{"wheel name does not parse", Release{Project: "vexl", Version: "0.2.0", Assets: []string{badName}}, badName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "ch")
			_, err := Publish(context.Background(), dest, tc.r)
			var use *UsageError
			if !errors.As(err, &use) || use.ExitCode() != 2 || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Publish = %v, want a usage error mentioning %q", err, tc.want)
			}
			if names := listDir(t, filepath.Dir(dest)); len(names) != 0 {
				t.Errorf("a rejected publish wrote %v", names)
			}
		})
	}
}

// TestConcurrentPublish runs two publishes at once: the lock serialises
// them and both versions end up published.
func TestConcurrentPublish(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "ch")
	mustPublish(t, dest, release(t, "0.2.0", ""))
	rs := []Release{release(t, "0.3.0", ""), release(t, "0.4.0", "")}
	for i := range rs {
		rs[i].AllowDowngrade = true // whichever comes second may be lower
	}
	var wg sync.WaitGroup
	errs := make([]error, len(rs))
	for i, r := range rs {
		wg.Go(func() { _, errs[i] = Publish(context.Background(), dest, r) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := versions(t, dest); !slices.Equal(got, []string{"0.2.0", "0.3.0", "0.4.0"}) {
		t.Errorf("versions %v", got)
	}
	mustVerify(t, dest)
}

// TestLockHonoursContext: a publish waiting for the lock gives up when its
// context ends.
func TestLockHonoursContext(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "ch")
	mustPublish(t, dest, release(t, "0.2.0", ""))
	p, _ := newPaths(dest)
	unlock, err := lock(context.Background(), p.lock)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Publish(ctx, dest, release(t, "0.3.0", "")); !errors.Is(err, context.Canceled) {
		t.Errorf("Publish while locked = %v, want context.Canceled", err)
	}
}

// TestDepsFinderReadsChannel: mkrelease's own dependency finder resolves
// from a published channel through its file:// simple index, with the
// PEP 658 metadata hint.
func TestDepsFinderReadsChannel(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "ch")
	r := release(t, "0.3.0", "")
	mustPublish(t, dest, r)
	whl := wheelsOf(r.Assets)[1]
	sha, _, _ := checksum.File(whl)
	f := &deps.Finder{Index: "file://" + dest + "/simple", CacheDir: t.TempDir(), Offline: true}
	got, err := f.Fetch(context.Background(), deps.Locked{Name: "vexl-plugin", Version: "0.3.0", Wheels: []deps.LockedFile{{SHA256: sha}}},
		func(wheel.Filename) (int, bool) { return 0, true })
	if err != nil {
		t.Fatal(err)
	}
	fn, _ := wheel.ParseFilename(filepath.Base(whl))
	meta := checksum.Bytes(zipMember(t, whl, fn.DistInfo()+"/METADATA"))
	if got.Name != filepath.Base(whl) || got.SHA256 != sha || got.MetadataHint != meta {
		t.Errorf("Fetch = %+v, want %s with metadata hint %s", got, filepath.Base(whl), meta)
	}
}

// TestPublishFailsCleanly: a publish that fails while building the new
// generation (here a file of the current one is gone, so it can be neither
// linked nor copied) names the file and leaves the channel as it was, with
// no temporary generation.
func TestPublishFailsCleanly(t *testing.T) {
	parent := t.TempDir()
	dest := filepath.Join(parent, "ch")
	mustPublish(t, dest, release(t, "0.2.0", ""))
	gone := filepath.Join(dest, "releases/0.2.0/vexl-0.2.0.spdx.json")
	must(t, os.Remove(gone))
	_, err := Publish(context.Background(), dest, release(t, "0.3.0", ""))
	if err == nil || !strings.Contains(err.Error(), "vexl-0.2.0.spdx.json") {
		t.Fatalf("Publish onto a damaged channel = %v, want an error naming the missing file", err)
	}
	if got := versions(t, dest); !slices.Equal(got, []string{"0.2.0"}) {
		t.Errorf("versions %v after a failed publish", got)
	}
	if got := listDir(t, filepath.Join(parent, ".ch.generations")); !slices.Equal(got, []string{"g-000001"}) {
		t.Errorf("generations %v after a failed publish", got)
	}
}

func TestCopyFileChecksDigest(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	must(t, os.WriteFile(src, []byte("content"), 0o600))
	right := Asset{Name: "src", SHA256: checksum.Bytes([]byte("content")), Size: 7}
	for _, tc := range []struct {
		name string
		a    Asset
		ok   bool
	}{
		{"right", right, true},
		{"other digest", Asset{Name: "src", SHA256: checksum.Bytes([]byte("other")), Size: 7}, false},
		{"other size", Asset{Name: "src", SHA256: right.SHA256, Size: 8}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			dst := filepath.Join(out, "dst")
			err := copyFile(context.Background(), src, dst, tc.a)
			if tc.ok {
				fi, serr := os.Stat(dst)
				if err != nil || serr != nil || fi.Mode().Perm() != 0o644 {
					t.Fatalf("copyFile = %v; dst %v %v", err, fi, serr)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), src) || !strings.Contains(err.Error(), "changed") {
				t.Errorf("copyFile = %v, want an error naming %s", err, src)
			}
			if names := listDir(t, out); len(names) != 0 {
				t.Errorf("a refused copy left %v", names)
			}
		})
	}
}

// resign rewrites the verification summary among assets with other bytes
// (as signing it again would) and its sidecar.
func resign(t *testing.T, assets []string) {
	t.Helper()
	for _, a := range assets {
		if strings.HasSuffix(a, ".vsa.intoto.jsonl") {
			if err := os.WriteFile(a, []byte(`{"signed": "again"}`+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			sha, _, err := checksum.File(a)
			if err != nil {
				t.Fatal(err)
			}
			if err := dist.WriteSidecar(a, sha); err != nil {
				t.Fatal(err)
			}
		}
	}
}
