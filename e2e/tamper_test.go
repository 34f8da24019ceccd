package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/provenance"
)

// TestVerifyTamperMatrix applies every fault to every kind of artifact of a
// built release (wheel, bundle, SBOM, provenance, sidecar, SHA256SUMS):
// mkrelease verify exits 1 and names the culprit; the untouched release
// exits 0.
func TestVerifyTamperMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a release")
	}
	t.Parallel() // see parallelTests in e2e_test.go
	r := closureProject(t)
	example := realWheel(t, "example-21.12-py3-none-any.whl")
	r.mustMkrelease(t, "build")
	dist := filepath.Join(r.dir, "dist")
	pub := filepath.Join(r.dir, ".mkrelease", "dev.pub")
	trusted, _, err := provenance.DevKey(filepath.Join(r.dir, ".mkrelease"))
	if err != nil {
		t.Fatal(err)
	}
	untrusted := untrustedSigner(t)

	verify := func(t *testing.T, dir string) (string, int) {
		t.Helper()
		out, errOut, code := r.mkrelease(t, "verify", dir, "--key", pub)
		return out + errOut, code
	}
	if out, code := verify(t, dist); code != 0 {
		t.Fatalf("the untouched release does not verify (exit %d):\n%s", code, out)
	}

	const (
		wheel    = "demo_app-2.0-py3-none-any.whl"
		bundle   = "demo-app-2.0-linux-x86_64.tar.gz"
		sbomFile = "demo-app-2.0.spdx.json"
		cdxFile  = "demo-app-2.0.cdx.json"
		envFile  = "demo-app-2.0.intoto.jsonl"
		bndFile  = "demo-app-2.0.sigstore.json"
		sidecar  = wheel + ".sha256"
		sums     = "SHA256SUMS"
	)
	// the extra file of each kind, for "extra file" (the culprit then)
	extra := map[string]string{wheel: "extra-1.0-py3-none-any.whl", bundle: "extra-1.0-linux-x86_64.tar.gz", sbomFile: "extra-1.0.spdx.json", cdxFile: "extra-1.0.cdx.json",
		envFile: "extra-1.0.intoto.jsonl", sidecar: "extra-1.0.tar.gz.sha256", sums: "EXTRA.txt"}
	// another valid file of the same kind, for "replaced"
	another := map[string]func(t *testing.T, dir string) []byte{
		wheel: func(t *testing.T, dir string) []byte { b, _ := os.ReadFile(example); return b },
		bundle: func(t *testing.T, dir string) []byte {
			return retar(t, readTarGz(t, mustRead(t, filepath.Join(dir, bundle))), func(e []tarEntry) []tarEntry { return e[:len(e)-1] })
		},
		sbomFile: func(t *testing.T, dir string) []byte {
			b := mustRead(t, filepath.Join(dir, sbomFile))
			return bytes.Replace(b, []byte(`"name": "demo-app"`), []byte(`"name": "demo-app-x"`), 1)
		},
		cdxFile: func(t *testing.T, dir string) []byte {
			b := mustRead(t, filepath.Join(dir, cdxFile))
			return bytes.Replace(b, []byte(`"name": "demo-app"`), []byte(`"name": "demo-app-x"`), 1)
		},
		envFile: func(t *testing.T, dir string) []byte {
			// a valid provenance, signed with the trusted key, of another release
			return resign(t, dir, trusted, func(st map[string]any) {
				st["subject"] = []any{map[string]any{"name": "other-1.0-py3-none-any.whl", "digest": map[string]any{"sha256": strings.Repeat("ab", 32)}}}
			})
		},
		sidecar: func(t *testing.T, dir string) []byte { return mustRead(t, filepath.Join(dir, bundle+".sha256")) },
		sums: func(t *testing.T, dir string) []byte {
			return []byte(strings.SplitN(string(mustRead(t, filepath.Join(dir, sums))), "\n", 2)[0] + "\n")
		},
	}
	faults := []struct {
		name  string
		apply func(t *testing.T, dir, file string)
	}{
		{"one flipped byte", func(t *testing.T, dir, file string) {
			b := mustRead(t, filepath.Join(dir, file))
			i := len(b) / 2
			if b[i] == '\n' {
				i++
			}
			b[i] ^= 0x01
			os.WriteFile(filepath.Join(dir, file), b, 0o644)
		}},
		{"truncation", func(t *testing.T, dir, file string) {
			b := mustRead(t, filepath.Join(dir, file))
			os.WriteFile(filepath.Join(dir, file), b[:len(b)/2], 0o644)
		}},
		{"replaced by another valid file", func(t *testing.T, dir, file string) {
			os.WriteFile(filepath.Join(dir, file), another[file](t, dir), 0o644)
		}},
		{"extra file", func(t *testing.T, dir, file string) {
			os.WriteFile(filepath.Join(dir, extra[file]), mustRead(t, filepath.Join(dir, file)), 0o644)
		}},
		{"missing file", func(t *testing.T, dir, file string) { os.Remove(filepath.Join(dir, file)) }},
		{"re-signed with an untrusted key", func(t *testing.T, dir, file string) {
			// An attacker who rewrites the artifact, every checksum and the
			// provenance, but has no trusted key.
			if file != envFile {
				b := mustRead(t, filepath.Join(dir, file))
				b = append(b, '\n')
				os.WriteFile(filepath.Join(dir, file), b, 0o644)
				fixChecksums(t, dir, file)
			}
			env := resign(t, dir, untrusted, func(st map[string]any) { setSubject(t, st, file, dir) })
			os.WriteFile(filepath.Join(dir, envFile), env, 0o644)
			fixChecksums(t, dir, envFile)
		}},
		{"a subject removed", func(t *testing.T, dir, file string) {
			subject := file
			if file == envFile || file == sidecar || file == sums {
				subject = wheel
			}
			env := resign(t, dir, trusted, func(st map[string]any) { removeSubject(st, subject) })
			os.WriteFile(filepath.Join(dir, envFile), env, 0o644)
			fixChecksums(t, dir, envFile)
		}},
	}
	for _, kind := range []string{wheel, bundle, sbomFile, cdxFile, envFile, sidecar, sums} {
		for _, f := range faults {
			t.Run(kind+"/"+f.name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "dist")
				copyTree(t, dist, dir)
				f.apply(t, dir, kind)
				out, code := verify(t, dir)
				// The temporary folder's name contains the subtest's name:
				// take it out, so only what verify says can name the culprit.
				out = strings.ReplaceAll(out, dir, "DIST")
				culprit := kind
				switch {
				case f.name == "a subject removed" && (kind == envFile || kind == sidecar || kind == sums):
					culprit = wheel
				case f.name == "extra file":
					culprit = extra[kind]
				}
				if os.Getenv("TAMPER_SHOW") != "" {
					for _, l := range strings.Split(out, "\n") {
						if strings.HasPrefix(l, "FAIL") {
							t.Log(l)
						}
					}
				}
				if code != 1 || !strings.Contains(out, "FAIL") || !failNames(out, culprit) {
					t.Errorf("verify exited %d, want 1 with a FAIL naming %s:\n%s", code, culprit, out)
				}
			})
		}
	}
}

func failNames(out, culprit string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "FAIL") && strings.Contains(l, culprit) {
			return true
		}
	}
	return false
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// resign re-signs the folder's statement after change, with s.
func resign(t *testing.T, dir string, s provenance.Signer, change func(map[string]any)) []byte {
	t.Helper()
	var env struct{ Payload string }
	if err := json.Unmarshal(bytes.TrimSpace(mustRead(t, filepath.Join(dir, "demo-app-2.0.intoto.jsonl"))), &env); err != nil {
		t.Fatal(err)
	}
	payload, _ := base64.StdEncoding.DecodeString(env.Payload)
	var st map[string]any
	if err := json.Unmarshal(payload, &st); err != nil {
		t.Fatal(err)
	}
	change(st)
	statement, _ := json.Marshal(st)
	out, _, err := provenance.Sign(context.Background(), s, statement)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func removeSubject(st map[string]any, name string) {
	var keep []any
	for _, s := range st["subject"].([]any) {
		if s.(map[string]any)["name"] != name {
			keep = append(keep, s)
		}
	}
	st["subject"] = keep
}

// setSubject makes the statement name file with its current digest (an
// attacker's consistent rewrite).
func setSubject(t *testing.T, st map[string]any, file, dir string) {
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return
	}
	for _, s := range st["subject"].([]any) {
		m := s.(map[string]any)
		if m["name"] == file {
			m["digest"] = map[string]any{"sha256": fmt.Sprintf("%x", sum(b))}
		}
	}
}

// fixChecksums rewrites file's sidecar and its SHA256SUMS line for its
// current content.
func fixChecksums(t *testing.T, dir, file string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return
	}
	sha := fmt.Sprintf("%x", sum(b))
	if _, err := os.Stat(filepath.Join(dir, file+".sha256")); err == nil {
		os.WriteFile(filepath.Join(dir, file+".sha256"), []byte(sha+"  "+file+"\n"), 0o644)
	}
	sums, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		return
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(string(sums), "\n"), "\n") {
		if strings.HasSuffix(l, "  "+file) {
			l = sha + "  " + file
		}
		lines = append(lines, l)
	}
	os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// untrustedSigner makes a signing key nobody trusts (an attacker's).
func untrustedSigner(t *testing.T) provenance.Signer {
	t.Helper()
	dir := t.TempDir()
	if err := provenance.Keygen(filepath.Join(dir, "k.key"), filepath.Join(dir, "k.pub"), []byte("attacker")); err != nil {
		t.Fatal(err)
	}
	s, err := provenance.LoadSigner(context.Background(), "file://"+filepath.Join(dir, "k.key"), provenance.StaticPassword([]byte("attacker")))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
