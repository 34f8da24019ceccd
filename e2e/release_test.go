package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/testpart"
	"github.com/mkrelease/mkrelease/provenance"
)

// releaseDefault runs the README's main command, `mkrelease release`, in
// a's project: build, evidence run (the targets but linux-x86_64 left out
// with a warning: this machine cannot run them), and publish into the
// channel of release.toml, under the default noise bound (10 %). A refusal
// whose every reason is [evidence.noise] would mean the host slowed the
// vCPU through all of a throughput worker's extra rounds (up to 180 s of
// timings): rare (docs/evidence.md, "Noise: the robust CV bound"), and .ci/run's main command runs once
// with no retry. This test is about the release flow, not the host, so on
// such a refusal it gathers the evidence again (logged), and only a fourth
// refusal, or any other, is a failure.
// It returns release's standard output and standard error.
func releaseDefault(t *testing.T, a run) (string, string) {
	t.Helper()
	var out, errOut string
	var code int
	const attempts = 4
	for attempt := 1; attempt <= attempts; attempt++ {
		out, errOut, code = a.mkrelease(t, "release")
		if code == 0 {
			break
		}
		if code == 1 && onlyNoise(errOut) && attempt < attempts {
			t.Logf("release refused for noise only (the host slowed a worker); gathering the evidence again:\n%s", errOut)
			continue
		}
		t.Fatalf("mkrelease release: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, tg := range targets[1:] {
		if !strings.Contains(errOut, "NOT RELEASING a target without verifier evidence target="+tg.name) {
			t.Errorf("release did not warn that %s is left out:\n%s", tg.name, errOut)
		}
	}
	return out, errOut
}

// onlyNoise reports whether a refusal lists reasons and all are
// [evidence.noise] (what it says to do is then about that rule alone).
func onlyNoise(errOut string) bool {
	n := 0
	for _, l := range strings.Split(errOut, "\n") {
		if strings.HasPrefix(l, "  [") {
			if !strings.HasPrefix(l, "  [evidence.noise] ") {
				return false
			}
			n++
		}
	}
	return n > 0
}

// checkRelease checks what `mkrelease release` published: the channel
// verifies, and pip installs the pair from it served over HTTP by
// python3 -m http.server, in a fresh virtualenv, and the plugin runs.
func checkRelease(t *testing.T, a run, out string) {
	ch := filepath.Join(a.dir, "published")
	if !strings.Contains(out, "published vexl 0.3.0 to "+ch+" (generation 1,") {
		t.Errorf("release output does not say where it published:\n%s", out)
	}
	wantPip := "install: python3 -m pip install --index-url file://" + ch + "/simple/ vexl-compiler==0.3.0 vexl-plugin==0.3.0"
	if !strings.Contains(out, wantPip) {
		t.Errorf("release output lacks the pip command %q:\n%s", wantPip, out)
	}
	pub := filepath.Join(a.dir, ".mkrelease", "dev.pub")
	if vout, verr, code := a.mkrelease(t, "verify", ch, "--key", pub); code != 0 {
		t.Fatalf("verify CHANNEL: exit %d\n%s\n%s", code, vout, verr)
	}
	for _, f := range []string{"releases/0.3.0/vexl-0.3.0.vsa.intoto.jsonl", "simple/vexl-plugin/index.html", "find-links.html",
		"releases/0.3.0/" + wheelName("vexl_plugin", "linux-x86_64") + ".metadata"} {
		if _, err := os.Stat(filepath.Join(ch, f)); err != nil {
			t.Errorf("channel: %v", err)
		}
	}
	for _, tg := range targets[1:] {
		for _, pat := range []string{"*" + tg.tag + "*", "*" + tg.name + "*"} {
			if m, _ := filepath.Glob(filepath.Join(ch, "releases", "0.3.0", pat)); len(m) != 0 {
				t.Errorf("%s files published without evidence: %v", tg.name, m)
			}
		}
	}

	rel := filepath.Join(ch, "releases", "0.3.0")
	t.Run("cosign verifies the verification summary for every subject, offline", func(t *testing.T) {
		cosign := testpart.Cosign(t)
		requireNetns(t)
		for _, s := range []string{wheelName("vexl_plugin", "linux-x86_64"), wheelName("vexl_compiler", "linux-x86_64"),
			"vexl-0.3.0-linux-x86_64.tar.gz", "vexl-0.3.0.spdx.json", "vexl-0.3.0.cdx.json", dist.NotesFile} {
			cmd := exec.Command("unshare", "-n", cosign, "verify-blob-attestation", "--key", pub,
				"--signature", filepath.Join(rel, "vexl-0.3.0.vsa.intoto.jsonl"), "--type", "https://slsa.dev/verification_summary/v1",
				"--insecure-ignore-tlog=true", filepath.Join(rel, s))
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
			if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "Verified OK") {
				t.Errorf("cosign does not verify the VSA for %s: %v\n%s", s, err, out)
			}
		}
	})

	// Serve the channel and install from it over HTTP.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := exec.CommandContext(ctx, "python3", "-u", "-m", "http.server", "--bind", "127.0.0.1", "--directory", ch, "0")
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	srv.Stderr = nil
	if err := srv.Start(); err != nil {
		t.Fatalf("python3 -m http.server: %v", err)
	}
	defer func() { cancel(); srv.Wait() }()
	portc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`port (\d+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				portc <- m[1]
				break
			}
		}
		for sc.Scan() { // drain
		}
	}()
	var port string
	select {
	case port = <-portc:
	case <-time.After(20 * time.Second):
		t.Fatal("http.server did not say which port it serves")
	}
	py := pythonFor(t, 12)
	venv := filepath.Join(t.TempDir(), "venv")
	must(t, "", nil, py, "-m", "venv", venv)
	vpy := filepath.Join(venv, "bin", "python")
	env := append(cleanEnv(), "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_CACHE_DIR=1", "PYTHONDONTWRITEBYTECODE=1")
	must(t, "", env, vpy, "-m", "pip", "install", "--index-url", "http://127.0.0.1:"+port+"/simple/", "vexl-plugin==0.3.0")
	must(t, "", env, vpy, "-m", "pip", "check")
	work := t.TempDir()
	prog := filepath.Join(work, "axpy.vx")
	write(t, prog, "in x, y\nout 2.5 * x + y\n")
	must(t, work, env, filepath.Join(venv, "bin", "vexlc"), prog, "-o", filepath.Join(work, "axpy.vxb"))
	script := `import array, sys, vexl_plugin
p = vexl_plugin.Program.load(open(sys.argv[1], "rb").read())
print(vexl_plugin.profile(), list(p.run(array.array("d", [1, 2, 4]), array.array("d", [10, 20, 40]))))`
	if got := strings.TrimSpace(must(t, work, env, vpy, "-c", script, filepath.Join(work, "axpy.vxb"))); got != "fused [12.5, 25.0, 50.0]" {
		t.Errorf("plugin installed from the channel: got %q", got)
	}

	// The summary records the policies and the thresholds the release
	// passed, the default noise bound of 10 % included.
	var dsse struct{ Payload string }
	if err := json.Unmarshal(bytes.TrimSpace(mustRead(t, filepath.Join(rel, "vexl-0.3.0.vsa.intoto.jsonl"))), &dsse); err != nil {
		t.Fatal(err)
	}
	payload, _ := base64.StdEncoding.DecodeString(dsse.Payload)
	var st struct {
		Predicate struct {
			VerificationResult string `json:"verificationResult"`
			Policy             struct {
				Annotations struct {
					Modules    map[string]string `json:"modules"`
					Parameters map[string]any    `json:"parameters"`
				} `json:"annotations"`
			} `json:"policy"`
			InputAttestations []struct {
				URI string `json:"uri"`
			} `json:"inputAttestations"`
		} `json:"predicate"`
	}
	if err := json.Unmarshal(payload, &st); err != nil {
		t.Fatal(err)
	}
	p := st.Predicate
	if p.VerificationResult != "PASSED" || p.Policy.Annotations.Parameters["max_robust_cv"] != 0.1 ||
		p.Policy.Annotations.Modules["default/throughput.rego"] == "" || len(p.InputAttestations) != 2 {
		t.Errorf("verification summary predicate: %s", payload)
	}

	t.Run("verify CHANNEL names what was tampered with", func(t *testing.T) { tamperChannel(t, a, ch, pub) })

	// Releasing again changes nothing: same bytes, no new generation.
	again, errOut, code := a.mkrelease(t, "publish", "--target", "linux-x86_64")
	if code != 0 || !strings.Contains(again, "vexl 0.3.0 is already published in") {
		t.Errorf("second publish: exit %d, want a no-op\n%s\n%s", code, again, errOut)
	}
	if target, _ := os.Readlink(ch); !strings.HasSuffix(target, "g-000001") {
		t.Errorf("channel moved to %s after a no-op publish", target)
	}
}

// tamperChannel copies the channel (its link, generations and lock) and
// checks that verify CHANNEL fails, naming the culprit, for each fault.
func tamperChannel(t *testing.T, a run, ch, pub string) {
	untrusted := untrustedSigner(t)
	whl := wheelName("vexl_plugin", "linux-x86_64")
	const vsa = "vexl-0.3.0.vsa.intoto.jsonl"
	for _, tc := range []struct {
		name, culprit string
		fault         func(t *testing.T, rel string)
	}{
		{"a flipped byte in a wheel", "releases/0.3.0/" + whl, func(t *testing.T, rel string) {
			b := mustRead(t, filepath.Join(rel, whl))
			b[len(b)/2] ^= 0x01
			os.WriteFile(filepath.Join(rel, whl), b, 0o644)
		}},
		{"the release notes changed", "releases/0.3.0/" + dist.NotesFile, func(t *testing.T, rel string) {
			b := mustRead(t, filepath.Join(rel, dist.NotesFile))
			os.WriteFile(filepath.Join(rel, dist.NotesFile), append(b, "\nEvery case passed, trust us.\n"...), 0o644)
		}},
		{"the summary missing", "releases/0.3.0/", func(t *testing.T, rel string) {
			os.Remove(filepath.Join(rel, vsa))
		}},
		{"the summary re-signed by an untrusted key", vsa, func(t *testing.T, rel string) {
			var env struct{ Payload string }
			if err := json.Unmarshal(bytes.TrimSpace(mustRead(t, filepath.Join(rel, vsa))), &env); err != nil {
				t.Fatal(err)
			}
			st, _ := base64.StdEncoding.DecodeString(env.Payload)
			out, err := provenance.SignStatement(context.Background(), untrusted, st)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(rel, vsa), out, 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			for _, n := range []string{"published", ".published.generations", ".published.lock"} {
				if out, err := exec.Command("cp", "-a", filepath.Join(filepath.Dir(ch), n), parent).CombinedOutput(); err != nil {
					t.Fatalf("cp -a: %v\n%s", err, out)
				}
			}
			dup := filepath.Join(parent, "published")
			target, _ := os.Readlink(dup)
			tc.fault(t, filepath.Join(parent, target, "releases", "0.3.0"))
			out, errOut, code := a.mkrelease(t, "verify", dup, "--key", pub)
			if code != 1 || !strings.Contains(out, "FAIL") || !strings.Contains(out, tc.culprit) {
				t.Errorf("verify after %s: exit %d, want 1 naming %s\n%s\n%s", tc.name, code, tc.culprit, out, errOut)
			}
		})
	}
}
