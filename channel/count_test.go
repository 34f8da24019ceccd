//go:build mkrelease_testhooks

package channel

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/testhook"
)

// TestPublishReadsEachAssetOnce counts, with the test hooks, how often Plan
// and Publish hash and copy each asset of 0.3.0 published onto a channel
// showing 0.2.0: without Release.Known each hashes every asset once (and
// Publish copies it once); with it neither hashes anything and Publish only
// copies, once per asset. The files of 0.2.0 are hard-linked, not copied.
func TestPublishReadsEachAssetOnce(t *testing.T) {
	for _, tc := range []struct {
		name      string
		known     bool
		planHash  int // hashes of each asset by Plan
		totalHash int // by Plan then Publish
	}{
		{name: "digests not given", known: false, planHash: 1, totalHash: 2},
		{name: "digests given", known: true, planHash: 0, totalHash: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "ch")
			mustPublish(t, dest, release(t, "0.2.0", ""))
			r := release(t, "0.3.0", "")
			if tc.known {
				r.Known = knownOf(t, r.Assets)
			}
			counts := filepath.Join(t.TempDir(), "counts")
			t.Setenv("MKRELEASE_TEST_COUNT", counts)

			c, err := Open(dest)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Plan(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			want := map[string]int{}
			for _, a := range r.Assets {
				if tc.planHash > 0 {
					want[testhook.CountHash+"\t"+a] = tc.planHash
				}
			}
			if got := readCounts(t, counts); !maps.Equal(got, want) {
				t.Errorf("Plan counted %v, want %v", got, want)
			}

			mustPublish(t, dest, r)
			t.Setenv("MKRELEASE_TEST_COUNT", "")
			want = map[string]int{}
			for _, a := range r.Assets {
				if tc.totalHash > 0 {
					want[testhook.CountHash+"\t"+a] = tc.totalHash
				}
				want[testhook.CountCopy+"\t"+a] = 1
			}
			if got := readCounts(t, counts); !maps.Equal(got, want) {
				t.Errorf("Plan and Publish counted\n%v\nwant\n%v", got, want)
			}
			mustVerify(t, dest)
		})
	}
}

// readCounts returns how often each "point\tkey" line is in the count
// file (none when it does not exist).
func readCounts(t *testing.T, file string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return map[string]int{}
	}
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		got[l]++
	}
	return got
}
