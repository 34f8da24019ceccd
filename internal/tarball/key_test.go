package tarball

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/checksum"
)

func TestKey(t *testing.T) {
	dir := t.TempDir()
	whl := filepath.Join(dir, "a.whl")
	os.WriteFile(whl, []byte("wheel bytes"), 0o644)
	base := func() ([]Entry, Options) {
		return []Entry{
			{Path: "wheels/a.whl", File: whl, Mode: 0o644},
			{Path: "wheels", Mode: fs.ModeDir | 0o755},
			{Path: "install.sh", Data: []byte("#!/bin/sh\n"), Mode: 0o755},
		}, Options{Root: "demo-1.0-t1", MTime: 1793491200}
	}
	e, o := base()
	k0, err := Key(e, o, "w1")
	if err != nil {
		t.Fatal(err)
	}
	// The order given, the concurrency and a known digest for a file do not
	// change the key.
	e, o = base()
	e[0], e[2] = e[2], e[0]
	o.Concurrency = 7
	if k, _ := Key(e, o, "w1"); k != k0 {
		t.Error("entry order or concurrency changes the key")
	}
	e, o = base()
	e[0].SHA256 = checksum.Bytes([]byte("wheel bytes"))
	if k, _ := Key(e, o, "w1"); k != k0 {
		t.Error("a known digest gives another key than reading the file")
	}
	for _, tt := range []struct {
		name   string
		change func(e []Entry, o *Options) string
	}{
		{"writer", func([]Entry, *Options) string { return "w2" }},
		{"root", func(_ []Entry, o *Options) string { o.Root = "demo-1.0-t2"; return "w1" }},
		{"time", func(_ []Entry, o *Options) string { o.MTime++; return "w1" }},
		{"a path", func(e []Entry, _ *Options) string { e[0].Path = "dependencies/a.whl"; return "w1" }},
		{"a mode", func(e []Entry, _ *Options) string { e[2].Mode = 0o644; return "w1" }},
		{"data", func(e []Entry, _ *Options) string { e[2].Data = []byte("#!/bin/bash\n"); return "w1" }},
		{"a known digest", func(e []Entry, _ *Options) string { e[0].SHA256 = checksum.Bytes(nil); return "w1" }},
		{"a directory added", func(e []Entry, _ *Options) string {
			e[1].Path = "dependencies"
			return "w1"
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, o := base()
			w := tt.change(e, &o)
			if k, err := Key(e, o, w); err != nil || k == k0 {
				t.Errorf("changing %s: key %s (the same: %v), %v", tt.name, k, k == k0, err)
			}
		})
	}
	// A changed file is read again when no digest is given.
	os.WriteFile(whl, []byte("other bytes"), 0o644)
	e, o = base()
	if k, _ := Key(e, o, "w1"); k == k0 {
		t.Error("a changed file keeps the key")
	}
	// Refusals.
	e, o = base()
	if _, err := Key(e, o, ""); err == nil {
		t.Error("a key without the writer")
	}
	e[0].SHA256 = "xyz"
	if _, err := Key(e, o, "w"); err == nil || !strings.Contains(err.Error(), "wheels/a.whl") {
		t.Errorf("a bad digest: %v", err)
	}
	e, o = base()
	e[0].File = filepath.Join(dir, "missing")
	if _, err := Key(e, o, "w"); err == nil {
		t.Error("a missing file has a key")
	}
}
