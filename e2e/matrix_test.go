package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/testnginx"
	"github.com/mkrelease/mkrelease/provenance"
)

// checkReleaseMatrix runs the steps of .github/workflows/release.yml
// locally: every leg in its own fresh copy of the project, with its own
// HOME and an empty local cache, sharing only a remote action cache (nginx,
// srv) and the release's signing key (a CI secret in the workflow).
//
// srv already holds every action of the embedded default: the build of
// TestEmbeddedDefault's second user ran them all on empty caches and
// uploaded them, as a workflow's first run on a new commit does, signed by
// its key, whose public key is writer: the legs trust it
// (--remote-cache-trusted-writer), as a workflow's legs trust the key its
// runners sign with. (Its bytes are a's, which the reproducible check
// compares.) So the legs here compile nothing; what they show is what a
// workflow run adds:
//
//   - build legs: linux-x86_64 (`build --target linux-x86_64 --part`) and
//     one for the three other targets (`build --target A --target B
//     --target C --part`), with --remote-cache, each served every action
//     from it (the same action keys whichever targets a leg builds); then a
//     second x86_64 leg, whose part is the first's byte for byte;
//   - a reference leg building every target, as one machine would;
//   - a merge leg: `merge` of the two parts, whose every reproducible file
//     is the reference's (SHA256SUMS first), and whose provenance names the
//     parts and their builders;
//   - the evidence leg is the evidence `release` gathered on a's build
//     (the same bytes: a's release.toml and lock): it is imported into the
//     merged folder, as the workflow imports evidence from a self-hosted
//     runner, and the merged release publishes.
//
// evidence holds the x86_64 evidence archive and statements of a.
func checkReleaseMatrix(t *testing.T, a run, srv *testnginx.Server, writer, evidence string) {
	if srv == nil {
		t.Skip("nginx is not installed (/usr/sbin/nginx): scripts/bootstrap installs it")
	}
	keyDir := t.TempDir()
	key, pub := filepath.Join(keyDir, "release.key"), filepath.Join(keyDir, "release.pub")
	if err := provenance.Keygen(key, pub, []byte("matrix")); err != nil {
		t.Fatal(err)
	}
	leg := func() run {
		r := run{dir: project(t, t.TempDir()), umask: "022"}
		r.env = []string{"HOME=" + t.TempDir(), "TZ=UTC", "LANG=C.UTF-8", "MKRELEASE_CACHE=" + t.TempDir(), "MKRELEASE_KEY_PASSWORD=matrix"}
		// a's release.toml: the default part shortened its throughput lane
		copyFile(t, filepath.Join(a.dir, "release.toml"), filepath.Join(r.dir, "release.toml"))
		return r
	}
	type buildReport struct {
		Run    int `json:"actions_run"`
		Remote int `json:"actions_remote"`
		Total  int `json:"actions_total"`
	}
	buildPart := func(r run, part string, targets ...string) buildReport {
		t.Helper()
		args := []string{"build"}
		for _, tg := range targets {
			args = append(args, "--target", tg)
		}
		out := r.mustMkrelease(t, append(args, "--part", "--out", part, "--remote-cache", srv.CacheURL, "--remote-cache-trusted-writer", writer, "--key", "file://"+key, "--json")...)
		var rep buildReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("build --json: %v\n%s", err, out)
		}
		return rep
	}

	// The part of the three targets this machine cross-builds but cannot
	// run.
	var others []string
	for _, tg := range targets[1:] {
		others = append(others, tg.name)
	}
	x86, oth, again := leg(), leg(), leg()
	if rep := buildPart(x86, "part-linux-x86_64", "linux-x86_64"); rep.Run != 0 || rep.Remote != 3 || rep.Total != 3 {
		t.Errorf("x86_64 leg, empty local cache, warm remote cache: %+v, want 0 actions run and 3 from the remote cache", rep)
	}
	if rep := buildPart(oth, "part-others", others...); rep.Run != 0 || rep.Remote != rep.Total || rep.Total != 2*len(others) {
		t.Errorf("leg of %v: %+v, want its %d actions from the remote cache", others, rep, 2*len(others))
	}
	if rep := buildPart(again, "part-linux-x86_64", "linux-x86_64"); rep.Run != 0 || rep.Remote != 3 {
		t.Errorf("second x86_64 leg, empty local cache, warm remote cache: %+v, want 0 actions run and 3 from the remote cache", rep)
	}
	partX86, partOthers := filepath.Join(x86.dir, "part-linux-x86_64"), filepath.Join(oth.dir, "part-others")
	t.Run("a part is the same on every machine but for its record", func(t *testing.T) {
		ta, tb := tree(t, partX86), tree(t, filepath.Join(again.dir, "part-linux-x86_64"))
		for _, m := range []map[string][]byte{ta, tb} {
			delete(m, dist.PartFile)
			delete(m, dist.PartStatementFile)
		}
		if !slices.Equal(keys(ta), keys(tb)) {
			t.Fatalf("file sets differ:\n%v\n%v", keys(ta), keys(tb))
		}
		for _, k := range keys(ta) {
			if !bytes.Equal(ta[k], tb[k]) {
				t.Errorf("%s differs between two x86_64 legs", k)
			}
		}
	})

	// The merge leg gets the parts as the workflow's download step would.
	merger := leg()
	parts := filepath.Join(merger.dir, "parts")
	copyTree(t, partX86, filepath.Join(parts, "part-linux-x86_64"))
	copyTree(t, partOthers, filepath.Join(parts, "part-others"))
	mergeArgs := []string{"merge", "parts/part-others", "parts/part-linux-x86_64", "--key", "file://" + key, "--trusted-key", pub}

	t.Run("merge refuses a missing target and writes nothing", func(t *testing.T) {
		_, errOut, code := merger.mkrelease(t, "merge", "parts/part-others", "--out", "dist-refused", "--key", "file://"+key, "--trusted-key", pub)
		want := "release.toml: targets: linux-x86_64: no part holds it: build it with mkrelease build --target linux-x86_64 --part, and pass that part too"
		if code != 1 || !strings.Contains(errOut, "merge: 1 problem with the parts; nothing was written:") || !strings.Contains(errOut, "\n    "+want+"\n") {
			t.Errorf("merge of one part: exit %d, want 1 naming the missing target\n%s", code, errOut)
		}
		if _, err := os.Stat(filepath.Join(merger.dir, "dist-refused")); err == nil {
			t.Errorf("a refused merge wrote its output folder")
		}
	})
	t.Run("merge refuses a part signed by an untrusted key", func(t *testing.T) {
		// Trusting another key than the one the parts were signed with.
		other := t.TempDir()
		if err := provenance.Keygen(filepath.Join(other, "k.key"), filepath.Join(other, "k.pub"), []byte("other")); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := merger.mkrelease(t, "merge", "parts/part-others", "parts/part-linux-x86_64", "--out", "dist-refused",
			"--key", "file://"+key, "--trusted-key", filepath.Join(other, "k.pub"))
		if code != 1 || strings.Count(errOut, "part.intoto.jsonl: not signed by a trusted key") != 2 {
			t.Errorf("merge with the parts' key untrusted: exit %d, want 1 naming both statements\n%s", code, errOut)
		}
		if _, err := os.Stat(filepath.Join(merger.dir, "dist-refused")); err == nil {
			t.Errorf("a refused merge wrote its output folder")
		}
	})

	out := merger.mustMkrelease(t, mergeArgs...)
	if !strings.Contains(out, "merged 2 parts of vexl 0.3.0 into dist") {
		t.Errorf("merge output:\n%s", out)
	}
	merged := filepath.Join(merger.dir, "dist")

	one := leg()
	one.mustMkrelease(t, "build", "--remote-cache", srv.CacheURL, "--remote-cache-trusted-writer", writer, "--key", "file://"+key)
	t.Run("the merged folder is a one-machine build", func(t *testing.T) {
		if m, o := mustRead(t, filepath.Join(merged, dist.ChecksumsFile)), mustRead(t, filepath.Join(one.dir, "dist", dist.ChecksumsFile)); !bytes.Equal(m, o) {
			t.Fatalf("SHA256SUMS of the merged folder differs from a one-machine build's:\n%s\n%s", m, o)
		}
		tm, to := tree(t, merged), tree(t, filepath.Join(one.dir, "dist"))
		for _, m := range []map[string][]byte{tm, to} {
			for k := range m {
				if strings.Contains(k, ".intoto.jsonl") || strings.Contains(k, ".sigstore.json") {
					delete(m, k) // signed: run facts and a signature
				}
			}
		}
		if !slices.Equal(keys(tm), keys(to)) {
			t.Fatalf("file sets differ:\nmerged: %v\none:    %v", keys(tm), keys(to))
		}
		for _, k := range keys(tm) {
			if !bytes.Equal(tm[k], to[k]) {
				t.Errorf("%s differs between the merged folder and a one-machine build", k)
			}
		}
		// And a's build, made without a remote cache in another folder.
		if m, o := mustRead(t, filepath.Join(merged, dist.ChecksumsFile)), mustRead(t, filepath.Join(a.dir, "dist", dist.ChecksumsFile)); !bytes.Equal(m, o) {
			t.Errorf("SHA256SUMS of the merged folder differs from the embedded default's build")
		}
		if vout, verr, code := merger.mkrelease(t, "verify", "dist", "--key", pub); code != 0 {
			t.Errorf("verify of the merged folder: exit %d\n%s\n%s", code, vout, verr)
		}
	})

	t.Run("the provenance names the parts and their builders", func(t *testing.T) {
		line := bytes.SplitN(mustRead(t, filepath.Join(merged, "vexl-0.3.0.intoto.jsonl")), []byte("\n"), 2)[0]
		var env struct {
			Payload string `json:"payload"`
		}
		if err := json.Unmarshal(line, &env); err != nil {
			t.Fatal(err)
		}
		payload, _ := base64.StdEncoding.DecodeString(env.Payload)
		var st struct {
			Predicate struct {
				BuildDefinition struct {
					Deps []struct {
						Name   string            `json:"name"`
						Digest map[string]string `json:"digest"`
					} `json:"resolvedDependencies"`
				} `json:"buildDefinition"`
				RunDetails struct {
					Byproducts []struct {
						Name        string         `json:"name"`
						Annotations map[string]any `json:"annotations"`
					} `json:"byproducts"`
				} `json:"runDetails"`
			} `json:"predicate"`
		}
		if err := json.Unmarshal(payload, &st); err != nil {
			t.Fatal(err)
		}
		// A part is named by its targets, in release.toml's order.
		for _, p := range []struct{ dir, target string }{{partX86, "linux-x86_64"}, {partOthers, strings.Join(others, ",")}} {
			sha := checksum.Bytes(mustRead(t, filepath.Join(p.dir, dist.PartFile)))
			found := false
			for _, d := range st.Predicate.BuildDefinition.Deps {
				found = found || d.Name == "part:"+p.target && d.Digest["sha256"] == sha
			}
			if !found {
				t.Errorf("resolvedDependencies do not name part %s by its part.json digest %s", p.target, sha)
			}
			found = false
			for _, b := range st.Predicate.RunDetails.Byproducts {
				found = found || b.Name == "builder:"+p.target && b.Annotations["os"] == "linux" && b.Annotations["signed"] == true && b.Annotations["key"] != nil
			}
			if !found {
				t.Errorf("byproducts do not name the builder of %s: %+v", p.target, st.Predicate.RunDetails.Byproducts)
			}
		}
	})

	t.Run("the merged release takes the evidence and publishes", func(t *testing.T) {
		pubA := filepath.Join(a.dir, ".mkrelease", "dev.pub")
		name := evidenceRoot("vexl", "0.3.0", "linux-x86_64")
		merger.mustMkrelease(t, "evidence", "import", filepath.Join(evidence, name+".tar.gz"), "--key", pubA)
		out, errOut, code := merger.mkrelease(t, "publish", "--target", "linux-x86_64", "--to", "published", "--key", pub, "--key", pubA)
		if code != 0 || !strings.Contains(out, "published vexl 0.3.0 to ") {
			t.Fatalf("publish of the merged release: exit %d\n%s\n%s", code, out, errOut)
		}
		if vout, verr, code := merger.mkrelease(t, "verify", "published", "--key", pub); code != 0 {
			t.Errorf("verify of the channel: exit %d\n%s\n%s", code, vout, verr)
		}
	})
}
