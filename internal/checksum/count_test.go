//go:build mkrelease_testhooks

package checksum

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/testhook"
)

// TestHashesCounted: with the test hooks, File and Verify count one "hash"
// per file they read whole, keyed by its absolute path; a file Verify does
// not open (missing, not regular, unsafe name) is not counted.
func TestHashesCounted(t *testing.T) {
	dir, s := release(t)
	t.Chdir(filepath.Dir(dir))
	rel := filepath.Base(dir) // Verify and File given a relative path
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(filepath.Join(dir, "a-folder"), 0o755))
	listed := append(Sums{}, s...)
	listed = append(listed, Sum{Name: "gone", SHA256: hexSum("x")}, Sum{Name: "a-folder", SHA256: hexSum("x")}, Sum{Name: "../escape", SHA256: hexSum("x")})
	for _, tc := range []struct {
		name string
		run  func()
		want map[string]int
	}{
		{"File", func() {
			_, _, err := File(filepath.Join(rel, "empty.txt"))
			must(err)
		}, map[string]int{"hash\t" + filepath.Join(dir, "empty.txt"): 1}},
		{"Verify", func() {
			rep, err := Verify(context.Background(), rel, listed, VerifyOptions{})
			must(err)
			if len(rep.Verified) != len(s) {
				t.Fatalf("verified %v", rep.Verified)
			}
		}, func() map[string]int {
			m := map[string]int{}
			for _, sum := range s {
				m[testhook.CountHash+"\t"+filepath.Join(dir, filepath.FromSlash(sum.Name))] = 1
			}
			return m
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "counts")
			t.Setenv("MKRELEASE_TEST_COUNT", file)
			tc.run()
			data, err := os.ReadFile(file)
			must(err)
			got := map[string]int{}
			for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
				got[l]++
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("counted %v, want %v", got, tc.want)
			}
		})
	}
}
