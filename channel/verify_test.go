package channel

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// replace rewrites a file of the generation as a new file (breaking the
// hard link to the previous generation), through f.
func replace(t *testing.T, file string, f func(string) string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.Remove(file))
	must(t, os.WriteFile(file, []byte(f(string(data))), 0o644))
}

const w030 = "releases/0.3.0/vexl-0.3.0-py3-none-any.whl"

// verifyTampers damage a channel holding 0.2.0 and 0.3.0 in one way each;
// Verify must report the file and the check given.
var verifyTampers = []struct {
	name   string
	tamper func(t *testing.T, dest string)
	file   string // the finding's File
	check  string
}{
	{"wheel changed", func(t *testing.T, dest string) {
		replace(t, filepath.Join(dest, w030), func(s string) string { return s + "x" })
	}, w030, CheckAsset},
	{"wheel removed", func(t *testing.T, dest string) { must(t, os.Remove(filepath.Join(dest, w030))) }, w030, CheckAsset},
	{"wheel swapped for a link", func(t *testing.T, dest string) {
		must(t, os.Remove(filepath.Join(dest, w030)))
		must(t, os.Symlink("vexl_plugin-0.3.0-py3-none-any.whl", filepath.Join(dest, w030)))
	}, w030, CheckAsset},
	{"stray file", func(t *testing.T, dest string) {
		must(t, os.WriteFile(filepath.Join(dest, "releases/0.3.0/extra.txt"), nil, 0o644))
	}, "releases/0.3.0/extra.txt", CheckStray},
	{"stray folder", func(t *testing.T, dest string) {
		must(t, os.Mkdir(filepath.Join(dest, "releases/0.9.0"), 0o755))
	}, "releases/0.9.0", CheckStray},
	{"stray page", func(t *testing.T, dest string) {
		must(t, os.WriteFile(filepath.Join(dest, "simple/vexl/old.html"), nil, 0o644))
	}, "simple/vexl/old.html", CheckStray},
	{"metadata changed", func(t *testing.T, dest string) {
		replace(t, filepath.Join(dest, w030+".metadata"), func(s string) string { return s + "Requires-Dist: evil\n" })
	}, w030 + ".metadata", CheckMetadata},
	{"sidecar wrong", func(t *testing.T, dest string) {
		replace(t, filepath.Join(dest, w030+".sha256"), func(s string) string { return strings.Repeat("0", 64) + s[64:] })
	}, w030, CheckSidecar},
	{"SHA256SUMS wrong", func(t *testing.T, dest string) {
		// The first line is the bundle's (lines are sorted by name).
		replace(t, filepath.Join(dest, "releases/0.3.0/SHA256SUMS"), func(s string) string { return strings.Repeat("0", 64) + s[64:] })
	}, "releases/0.3.0/vexl-0.3.0-linux-x86_64.tar.gz", CheckSums},
	{"project page fragment", func(t *testing.T, dest string) {
		replace(t, filepath.Join(dest, "simple/vexl/index.html"), func(s string) string {
			return strings.Replace(s, "#sha256=", "#sha256=0", 1)
		})
	}, "simple/vexl/index.html", CheckSimple},
	{"project page core metadata", func(t *testing.T, dest string) {
		replace(t, filepath.Join(dest, "simple/vexl-plugin/index.html"), func(s string) string {
			return strings.Replace(s, `data-core-metadata="sha256=`, `data-core-metadata="sha256=1`, 1)
		})
	}, "simple/vexl-plugin/index.html", CheckSimple},
	{"project page requires-python", func(t *testing.T, dest string) {
		replace(t, filepath.Join(dest, "simple/vexl-plugin/index.html"), func(s string) string {
			return strings.Replace(s, `&gt;=3.8,&lt;4`, `&gt;=3.9`, 1)
		})
	}, "simple/vexl-plugin/index.html", CheckSimple},
	{"project page link dropped", func(t *testing.T, dest string) {
		replace(t, filepath.Join(dest, "simple/vexl/index.html"), func(s string) string {
			i := strings.Index(s, "<a ")
			j := strings.Index(s[i:], "<br>\n")
			return s[:i] + s[i+j+5:]
		})
	}, "simple/vexl/index.html", CheckSimple},
	{"project page absolute link", func(t *testing.T, dest string) {
		replace(t, filepath.Join(dest, "simple/vexl/index.html"), func(s string) string {
			return strings.Replace(s, `href="../../`, `href="/`, 1)
		})
	}, "simple/vexl/index.html", CheckSimple},
	{"project page title", func(t *testing.T, dest string) {
		replace(t, filepath.Join(dest, "simple/vexl/index.html"), func(s string) string {
			return strings.Replace(s, "<title>Links for vexl", "<title>Links for someone", 1)
		})
	}, "simple/vexl/index.html", CheckSimple},
	{"root page project dropped", func(t *testing.T, dest string) {
		replace(t, filepath.Join(dest, "simple/index.html"), func(s string) string {
			return strings.Replace(s, `<a href="vexl-plugin/">vexl-plugin</a><br>`, "", 1)
		})
	}, "simple/index.html", CheckSimple},
	{"project page removed", func(t *testing.T, dest string) {
		must(t, os.Remove(filepath.Join(dest, "simple/vexl-plugin/index.html")))
	}, "simple/vexl-plugin/index.html", CheckSimple},
	{"find-links link dropped", func(t *testing.T, dest string) {
		replace(t, filepath.Join(dest, "find-links.html"), func(s string) string {
			i := strings.LastIndex(s, "<a ")
			j := strings.Index(s[i:], "<br>\n")
			return s[:i] + s[i+j+5:]
		})
	}, "find-links.html", CheckFindLinks},
	{"index link wrong", func(t *testing.T, dest string) {
		replace(t, filepath.Join(dest, "index.html"), func(s string) string {
			return strings.Replace(s, `href="releases/0.3.0/SHA256SUMS`, `href="releases/0.3.0/SHA256SUMZ`, 1)
		})
	}, "index.html", CheckIndex},
	{"channel.json garbage", func(t *testing.T, dest string) {
		replace(t, filepath.Join(dest, StateFile), func(s string) string { return s[:len(s)/2] })
	}, StateFile, CheckState},
	{"channel.json inconsistent", func(t *testing.T, dest string) {
		replace(t, filepath.Join(dest, StateFile), func(s string) string {
			return strings.Replace(s, `"newest": "0.3.0"`, `"newest": "0.2.0"`, 1)
		})
	}, StateFile, CheckState},
	{"channel.json unknown field", func(t *testing.T, dest string) {
		replace(t, filepath.Join(dest, StateFile), func(s string) string {
			return strings.Replace(s, `"newest"`, `"extra": 1, "newest"`, 1)
		})
	}, StateFile, CheckState},
	{"DEST links to a missing generation", func(t *testing.T, dest string) {
		must(t, os.Remove(dest))
		must(t, os.Symlink(".ch.generations/g-000009", dest))
	}, ".", CheckDest},
	{"DEST links elsewhere", func(t *testing.T, dest string) {
		must(t, os.Remove(dest))
		must(t, os.Symlink(".ch.generations/../x", dest))
	}, ".", CheckDest},
	{"DEST a real folder", func(t *testing.T, dest string) {
		target, _ := filepath.EvalSymlinks(dest)
		must(t, os.Remove(dest))
		must(t, os.Rename(target, dest))
	}, ".", CheckDest},
}

func TestVerifyFindsTampering(t *testing.T) {
	base := filepath.Join(t.TempDir(), "base")
	mustPublish(t, filepath.Join(base, "ch"), release(t, "0.2.0", ""))
	mustPublish(t, filepath.Join(base, "ch"), release(t, "0.3.0", ""))
	for _, tc := range verifyTampers {
		t.Run(tc.name, func(t *testing.T) {
			parent := filepath.Join(t.TempDir(), "p")
			copyTree(t, base, parent)
			dest := filepath.Join(parent, "ch")
			mustVerify(t, dest)
			tc.tamper(t, dest)
			rep, err := Verify(context.Background(), dest, verifyOptions())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(rep.Findings, func(f Finding) bool { return f.File == tc.file && f.Check == tc.check }) {
				t.Errorf("Verify found\n%v\nwant a %s finding on %s", rep.Err(), tc.check, tc.file)
			}
			if rep.OK() || rep.Err() == nil {
				t.Error("OK() after tampering")
			}
		})
	}
}

// copyTree copies a folder with its links, as cp -a does.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		case fi.IsDir():
			return os.MkdirAll(dst, 0o755)
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(dst, data, fi.Mode().Perm())
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestVerifyEmpty(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "ch")
	rep, err := Verify(context.Background(), dest, verifyOptions())
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || rep.Findings[0].Check != CheckDest {
		t.Errorf("Verify(missing) = %+v", rep)
	}
	if _, err := Verify(context.Background(), "https://example.invalid/ch", verifyOptions()); err == nil {
		t.Error("Verify(https URL) succeeded")
	}
}
