package channel

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/internal/checksum"
)

// TestPipInstallsFromChannel serves a channel with python3 -m http.server
// and installs from it with pip in a fresh virtualenv, through the simple
// index and through the find-links page. Nothing else is reachable: every
// file must come from the channel.
func TestPipInstallsFromChannel(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("skipping the pip integration test: python3 is not on PATH")
	}
	if out, err := exec.Command(py, "-c", "import venv, ensurepip, http.server").CombinedOutput(); err != nil {
		t.Skipf("skipping the pip integration test: python3 has no working venv/ensurepip (%v: %s); on Debian install python3-venv", err, strings.TrimSpace(string(out)))
	}
	tmp := t.TempDir()
	venv := filepath.Join(tmp, "venv")
	if out, err := exec.Command(py, "-m", "venv", venv).CombinedOutput(); err != nil {
		t.Fatalf("python3 -m venv: %v\n%s", err, out)
	}

	dest := filepath.Join(tmp, "channel")
	r2, r3 := release(t, "0.2.0", ""), release(t, "0.3.0", "")
	mustPublish(t, dest, r2)
	mustPublish(t, dest, r3)

	base, serverLog := serve(t, py, dest)
	env := pipEnv()
	pip := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(venv, "bin", "python"), append([]string{"-m", "pip"}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("pip %s: %v\n%s\nserver log:\n%s", strings.Join(args, " "), err, out, readLog(serverLog))
		}
		return string(out)
	}
	version := strings.TrimSpace(pip("--version"))
	common := []string{"--no-cache-dir", "--timeout", "10", "--retries", "0"}

	// The simple index: the plugin pulls the compiler through its pin.
	pip(append([]string{"install", "--index-url", base + "/simple/", "vexl-plugin==0.3.0"}, common...)...)
	cmd := exec.Command(filepath.Join(venv, "bin", "python"), "-c", "import vexl, vexl_plugin; print(vexl.VERSION, vexl_plugin.VERSION)")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "0.3.0 0.3.0" {
		t.Fatalf("importing the installed pair: %v: %s", err, out)
	}

	// The find-links page, no index at all.
	dl := filepath.Join(tmp, "dl")
	pip(append([]string{"download", "--no-index", "--find-links", base + "/find-links.html", "-d", dl, "vexl-plugin==0.2.0"}, common...)...)
	want := map[string]string{}
	for _, w := range wheelsOf(r2.Assets) {
		sha, _, _ := checksum.File(w)
		want[filepath.Base(w)] = sha
	}
	got := listDir(t, dl)
	if !slices.Equal(got, []string{"vexl-0.2.0-py3-none-any.whl", "vexl_plugin-0.2.0-py3-none-any.whl"}) {
		t.Fatalf("pip downloaded %v", got)
	}
	for _, name := range got {
		if sha, _, _ := checksum.File(filepath.Join(dl, name)); sha != want[name] {
			t.Errorf("%s downloaded with sha256 %s, published %s", name, sha, want[name])
		}
	}

	log := readLog(serverLog)
	var metadata []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, ".whl.metadata") {
			metadata = append(metadata, line)
		}
	}
	t.Logf("%s fetched %d .metadata file(s) (PEP 658/714) from the channel:\n%s", version, len(metadata), strings.Join(metadata, "\n"))
}

// serve runs python3 -m http.server on a free loopback port for dir until
// the test ends; it returns the base URL and the file the server logs to.
func serve(t *testing.T, py, dir string) (string, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	logFile := filepath.Join(t.TempDir(), "server.log")
	f, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-m", "http.server", "--bind", "127.0.0.1", "--directory", dir, fmt.Sprint(port))
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		f.Close()
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{Proxy: nil}}
	for deadline := time.Now().Add(15 * time.Second); ; {
		resp, err := client.Get(base + "/simple/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, logFile
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("python3 -m http.server did not answer on %s: %v\n%s", base, err, readLog(logFile))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// pipEnv is the environment without pip configuration or proxies, so
// that pip reaches nothing but the channel.
func pipEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PIP_") || strings.HasSuffix(strings.ToLower(k), "_proxy") || k == "PYTHONPATH" || k == "VIRTUAL_ENV" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PIP_CONFIG_FILE=/dev/null", "PIP_NO_INPUT=1", "PIP_DISABLE_PIP_VERSION_CHECK=1", "NO_PROXY=*")
}

func readLog(p string) string {
	data, _ := os.ReadFile(p)
	return string(data)
}
