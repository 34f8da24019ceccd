package actioncache

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/digestmemo"
)

// Trim removes what no build used for MaxUnused (entries, their memos,
// what killed runs left), keeps everything used since, and looks at most
// once every TrimInterval.
func TestTrim(t *testing.T) {
	now := time.Now()
	old := now.Add(-MaxUnused - time.Hour)
	c := &Cache{Dir: t.TempDir(), Digests: digestmemo.Memo{Dir: t.TempDir()}}
	src := t.TempDir()
	mustWrite(t, filepath.Join(src, "tool"), "#!/bin/sh\necho hi\n", 0o755)
	mustMkdir(t, filepath.Join(src, "lib"))
	mustWrite(t, filepath.Join(src, "lib", "x.so"), "ELF...", 0o644)
	keyOf := func(name string) string { return checksum.Bytes([]byte(name)) }
	put := func(name string, used time.Time) string {
		t.Helper()
		k := keyOf(name)
		if _, err := c.Put(k, step, target, src, declared, nil); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(filepath.Join(c.entryDir(k), "entry.json"), used, used); err != nil {
			t.Fatal(err)
		}
		return k
	}
	unused := put("unused", old)
	fresh := put("fresh", now.Add(-time.Hour))
	restored := put("restored", old)
	// A build restores it now: that is a use.
	if _, err := c.Restore(restored, step, target, declared, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	// What killed runs leave: an entry being assembled, an entry whose
	// record a removal took first.
	shard := filepath.Dir(c.entryDir(unused))
	staleTmp := filepath.Join(shard, ".tmp-0123abcd-1")
	liveTmp := filepath.Join(shard, ".tmp-0123abcd-2")
	orphan := c.entryDir(keyOf("orphan"))
	for _, d := range []string{staleTmp, liveTmp, filepath.Join(orphan, "out")} {
		mustMkdir(t, d)
	}
	for _, d := range []string{staleTmp, orphan} {
		os.Chtimes(d, now.Add(-tmpMaxAge-time.Hour), now.Add(-tmpMaxAge-time.Hour))
	}
	os.Chtimes(orphan, old, old)
	other := filepath.Join(shard, "notes.txt") // not the cache's: left alone
	mustWrite(t, other, "mine", 0o644)
	os.Chtimes(other, old, old)
	// Memos: one not written for long, one written now.
	staleMemo := filepath.Join(c.Digests.Dir, "stale-memo")
	mustWrite(t, staleMemo, "x", 0o644)
	os.Chtimes(staleMemo, old, old)
	memosBefore := len(mustReadDirNames(t, c.Digests.Dir))
	unusedBytes := treeSize(c.entryDir(unused))
	if outputs := int64(len("#!/bin/sh\necho hi\n") + len("ELF...")); unusedBytes <= outputs {
		t.Fatalf("the unused entry holds %d bytes, want its outputs (%d) and its record", unusedBytes, outputs)
	}

	st, err := c.Trim(now)
	if err != nil {
		t.Fatal(err)
	}
	checkKept(t, []keptCase{
		{"entry unused for longer than MaxUnused", c.entryDir(unused), false},
		{"entry stored an hour ago", c.entryDir(fresh), true},
		{"old entry restored now", c.entryDir(restored), true},
		{"folder a killed Put left a day ago", staleTmp, false},
		{"folder a running Put assembles", liveTmp, true},
		{"entry folder without its record", orphan, false},
		{"a file that is not the cache's", other, true},
		{"memo not written for longer than MaxUnused", staleMemo, false},
	})
	if st.Skipped || st.Entries != 2 || st.Memos != 1 {
		t.Errorf("stats %+v, want 2 entries and 1 memo removed", st)
	}
	if st.Bytes != unusedBytes {
		t.Errorf("bytes %d, want %d (the unused entry's files)", st.Bytes, unusedBytes)
	}
	if n := len(mustReadDirNames(t, c.Digests.Dir)); n != memosBefore-1 {
		t.Errorf("%d memos left of %d, want only the stale one gone", n, memosBefore)
	}
	if _, err := c.Restore(fresh, step, target, declared, t.TempDir()); err != nil {
		t.Errorf("a kept entry no longer restores: %v", err)
	}

	// Within TrimInterval nothing is looked at, however old.
	again := put("unused again", old)
	if st, err := c.Trim(now.Add(TrimInterval / 2)); err != nil || !st.Skipped || !exists(c.entryDir(again)) {
		t.Errorf("second trim within the interval: %+v %v, entry kept %v; want skipped", st, err, exists(c.entryDir(again)))
	}
	// After it, the cache is looked through again.
	if st, err := c.Trim(now.Add(TrimInterval + time.Minute)); err != nil || st.Skipped || exists(c.entryDir(again)) {
		t.Errorf("trim after the interval: %+v %v, entry kept %v; want it removed", st, err, exists(c.entryDir(again)))
	}
	// A mark from the future (a clock set back) does not stop trimming.
	later := put("after the clock went back", old)
	if st, err := c.Trim(now); err != nil || st.Skipped || exists(c.entryDir(later)) {
		t.Errorf("trim with a mark in the future: %+v %v; want it to run", st, err)
	}
}

// A restore records the use only when the last one is over an hour old:
// most restores write nothing.
func TestRestoreMarksUse(t *testing.T) {
	c, _ := putSample(t)
	rec := filepath.Join(c.entryDir(key), "entry.json")
	for _, tc := range []struct {
		what  string
		age   time.Duration
		moved bool
	}{
		{"used a minute ago", time.Minute, false},
		{"used two days ago", 48 * time.Hour, true},
	} {
		before := time.Now().Add(-tc.age).Truncate(time.Second)
		os.Chtimes(rec, before, before)
		if _, err := c.Restore(key, step, target, declared, t.TempDir()); err != nil {
			t.Fatal(err)
		}
		st, _ := os.Stat(rec)
		if moved := !st.ModTime().Equal(before); moved != tc.moved {
			t.Errorf("%s: last use moved %v, want %v", tc.what, moved, tc.moved)
		}
	}
}

// The steps' own caches go once no step run used them for MaxUnused,
// whole (a read-only folder a tool left included); those a run used since
// stay, and so does a target folder that still holds one.
func TestTrimStepCaches(t *testing.T) {
	now := time.Now()
	old := now.Add(-MaxUnused - time.Hour)
	c := &Cache{Dir: t.TempDir()}
	mustMkdir(t, filepath.Join(c.Dir, "actions")) // a cache that served builds
	goUsed, stepUsed := c.StepDirs("linux-x86_64", "lib")
	goGone, stepGone := c.StepDirs("linux-x86_64", "renamed-step")
	goDropped, stepDropped := c.StepDirs("macos-arm64", "lib")
	for _, d := range []string{goUsed, stepUsed, goGone, stepGone, goDropped, stepDropped} {
		mustMkdir(t, filepath.Join(d, "sub"))
		mustWrite(t, filepath.Join(d, "sub", "object.o"), "0123456789", 0o644)
		os.Chtimes(d, old, old)
	}
	// A tool left a read-only folder (Go's module cache is; only a run
	// that is not root finds it in the way).
	if err := os.Chmod(filepath.Join(stepGone, "sub"), 0o555); err != nil {
		t.Fatal(err)
	}
	// A run of the step now uses its folders, whatever it leaves in them.
	if err := UseStepDirs(now, goUsed, stepUsed); err != nil {
		t.Fatal(err)
	}
	// A step's first run: nothing to record yet; the run creates it.
	fresh, _ := c.StepDirs("windows-x86_64", "new-step")
	if err := UseStepDirs(now, fresh); err != nil {
		t.Fatalf("recording the use of a folder not there yet: %v", err)
	}
	mustMkdir(t, fresh)

	st, err := c.Trim(now)
	if err != nil {
		t.Fatal(err)
	}
	checkKept(t, []keptCase{
		{"Go build cache of a step run now", goUsed, true},
		{"cache folder of a step run now", stepUsed, true},
		{"cache folder a run created now", fresh, true},
		{"Go build cache of a step no run used for long", goGone, false},
		{"cache folder of a step no run used for long, with a read-only folder", stepGone, false},
		{"Go build cache of a dropped target", goDropped, false},
		{"cache folder of a dropped target", stepDropped, false},
		{"the dropped target's folder, now empty", filepath.Dir(stepDropped), false},
		{"a target folder that still holds a step's", filepath.Dir(stepUsed), true},
	})
	if st.StepFolders != 4 || st.StepBytes != 40 {
		t.Errorf("stats %+v, want 4 step folders of 10 bytes each removed", st)
	}
	if b, err := os.ReadFile(filepath.Join(stepUsed, "sub", "object.o")); err != nil || string(b) != "0123456789" {
		t.Errorf("the kept cache lost its files: %q %v", b, err)
	}
}

// keptCase is a path that Trim must keep or remove.
type keptCase struct {
	what string
	path string
	kept bool
}

// checkKept reports each case whose path Trim did not keep or remove as
// it should have.
func checkKept(t *testing.T, cases []keptCase) {
	t.Helper()
	for _, tc := range cases {
		if got := exists(tc.path); got != tc.kept {
			t.Errorf("%s: kept %v, want %v", tc.what, got, tc.kept)
		}
	}
}
