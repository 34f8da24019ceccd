package channel

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/checksum"
)

// knownOf hashes every asset, as a caller that loaded the release folder
// would have.
func knownOf(t testing.TB, assets []string) map[string]Asset {
	t.Helper()
	known := map[string]Asset{}
	for _, a := range assets {
		sha, size, err := checksum.File(a)
		if err != nil {
			t.Fatal(err)
		}
		known[a] = Asset{Name: filepath.Base(a), SHA256: sha, Size: size}
	}
	return known
}

// bundleOf returns the bundle among assets.
func bundleOf(t testing.TB, assets []string) string {
	t.Helper()
	for _, a := range assets {
		if strings.HasSuffix(a, ".tar.gz") {
			return a
		}
	}
	t.Fatal("no bundle among the assets")
	return ""
}

// TestPublishKnown publishes 0.3.0 onto a channel showing 0.2.0 with
// digests handed over in Release.Known: they are what the plan reports
// (the assets are not hashed again), a digest that is not the file's is
// refused when the copy checks it, and a size that is not the file's, a
// malformed digest or one for another name are refused before anything is
// written. Every refusal leaves the channel as it was.
func TestPublishKnown(t *testing.T) {
	wrong := checksum.Bytes([]byte("not the bundle"))
	for _, tc := range []struct {
		name string
		// edit changes the Known of release r, whose bundle is at bundle.
		edit func(known map[string]Asset, bundle string)
		// planErr and publishErr are in the messages of the expected
		// usage error of Plan and the error of Publish ("" for none).
		planErr, publishErr string
		// bundleSHA is the bundle's digest the plan must report ("" for
		// the file's own).
		bundleSHA string
	}{
		{name: "all known", edit: func(map[string]Asset, string) {}},
		{name: "some known", edit: func(k map[string]Asset, b string) {
			for p := range k {
				if p != b {
					delete(k, p)
				}
			}
		}},
		{name: "name left empty", edit: func(k map[string]Asset, b string) {
			a := k[b]
			a.Name = ""
			k[b] = a
		}},
		{name: "entries for other paths ignored", edit: func(k map[string]Asset, b string) {
			k[b+".elsewhere"] = Asset{SHA256: "bad"}
		}},
		{name: "wrong digest", edit: func(k map[string]Asset, b string) {
			a := k[b]
			a.SHA256 = wrong
			k[b] = a
		}, publishErr: "changed while being published", bundleSHA: wrong},
		{name: "wrong size", edit: func(k map[string]Asset, b string) {
			a := k[b]
			a.Size++
			k[b] = a
		}, planErr: "changed since its digest was computed", publishErr: "changed since its digest was computed"},
		{name: "upper-case digest", edit: func(k map[string]Asset, b string) {
			a := k[b]
			a.SHA256 = strings.ToUpper(a.SHA256)
			k[b] = a
		}, planErr: "not 64 lower-case hex digits", publishErr: "not 64 lower-case hex digits"},
		{name: "short digest", edit: func(k map[string]Asset, b string) {
			a := k[b]
			a.SHA256 = a.SHA256[:63]
			k[b] = a
		}, planErr: "not 64 lower-case hex digits", publishErr: "not 64 lower-case hex digits"},
		{name: "other name", edit: func(k map[string]Asset, b string) {
			a := k[b]
			a.Name = "other.tar.gz"
			k[b] = a
		}, planErr: "for the name", publishErr: "for the name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dest := filepath.Join(parent, "ch")
			mustPublish(t, dest, release(t, "0.2.0", ""))
			r := release(t, "0.3.0", "")
			bundle := bundleOf(t, r.Assets)
			r.Known = knownOf(t, r.Assets)
			tc.edit(r.Known, bundle)
			before := snapshot(t, parent)

			c, err := Open(dest)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := c.Plan(context.Background(), r)
			if tc.planErr != "" {
				var use *UsageError
				if !errors.As(err, &use) || !strings.Contains(err.Error(), tc.planErr) || !strings.Contains(err.Error(), bundle) {
					t.Fatalf("Plan = %v, want a usage error naming %s and saying %q", err, bundle, tc.planErr)
				}
			} else {
				if err != nil {
					t.Fatalf("Plan = %v", err)
				}
				want := tc.bundleSHA
				if want == "" {
					want, _, _ = checksum.File(bundle)
				}
				if got := assetSHA(plan.Assets, filepath.Base(bundle)); got != want {
					t.Errorf("the plan gives the bundle sha256 %s, want %s", got, want)
				}
				if len(plan.Assets) != len(r.Assets) || plan.SameVersionPublished {
					t.Errorf("plan: %d assets (want %d), same version published %v", len(plan.Assets), len(r.Assets), plan.SameVersionPublished)
				}
			}

			res, err := Publish(context.Background(), dest, r)
			if tc.publishErr == "" {
				if err != nil {
					t.Fatalf("Publish = %v", err)
				}
				if got := versions(t, dest); !slices.Equal(got, []string{"0.2.0", "0.3.0"}) {
					t.Errorf("versions %v", got)
				}
				if res.NoOp || res.GenerationNumber != 2 {
					t.Errorf("result %+v", res)
				}
				mustVerify(t, dest)
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.publishErr) || !strings.Contains(err.Error(), bundle) {
				t.Fatalf("Publish = %v, want an error naming %s and saying %q", err, bundle, tc.publishErr)
			}
			if tc.planErr != "" {
				// Refused before the lock: nothing at all is written.
				if after := snapshot(t, parent); !slices.Equal(after, before) {
					t.Errorf("a refused publish changed DEST's folder:\nbefore %v\nafter  %v", before, after)
				}
			}
			if got := versions(t, dest); !slices.Equal(got, []string{"0.2.0"}) {
				t.Errorf("versions %v after a refused publish", got)
			}
			if got := listDir(t, filepath.Join(parent, ".ch.generations")); !slices.Equal(got, []string{"g-000001"}) {
				t.Errorf("generations %v after a refused publish", got)
			}
			if rep := mustVerify(t, dest); len(rep.Leftovers) != 0 {
				t.Errorf("leftovers after a refused publish: %v", rep.Leftovers)
			}
			// The same release with its digests hashed afresh publishes.
			r.Known = nil
			mustPublish(t, dest, r)
			mustVerify(t, dest)
		})
	}
}

// assetSHA returns the digest of the asset called name among as.
func assetSHA(as []Asset, name string) string {
	for _, a := range as {
		if a.Name == name {
			return a.SHA256
		}
	}
	return ""
}

// snapshot lists every path under dir (links not followed) with its mode.
func snapshot(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel+" "+fi.Mode().String())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
