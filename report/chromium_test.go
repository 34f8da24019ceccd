package report

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/internal/testpart"
)

// screenshot, when set, is where TestChromiumRendersReport also writes a
// 1200×1600 screenshot of the fixture release's page: docs/report.png is
// made with go test ./report -run TestChromiumRendersReport
// -screenshot=$PWD/docs/report.png.
var screenshot = flag.String("screenshot", "", "also write a PNG screenshot of the fixture release's page to this file")

// chromium returns the headless browser the page tests run in.
// scripts/bootstrap installs it; without it the tests skip in the default
// part of the suite and fail in the whole suite (testpart.Missing).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testpart.Missing(t, "chromium", "scripts/bootstrap, or apt-get install -y chromium")
	return ""
}

// shoot writes a screenshot of page, 1200×1600 pixels, to out.
func shoot(t *testing.T, browser, page, out string) {
	t.Helper()
	dir := t.TempDir()
	abs, err := filepath.Abs(out)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--disable-background-networking", "--no-first-run", "--disable-default-apps",
		"--window-size=1200,1600", "--screenshot="+abs, (&url.URL{Scheme: "file", Path: page}).String())
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, b)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("chromium wrote no screenshot: %v", err)
	}
	t.Logf("wrote %s", abs)
}

// render loads page in headless Chromium and returns the DOM it built and
// every URL the page made the browser request, read from its NetLog.
func render(t *testing.T, browser, page string) (dom string, requests []string) {
	t.Helper()
	dir := t.TempDir()
	netlog := filepath.Join(dir, "netlog.json")
	pageURL := (&url.URL{Scheme: "file", Path: page}).String()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--log-net-log="+netlog, "--net-log-capture-mode=Everything",
		"--disable-background-networking", "--no-first-run", "--disable-default-apps",
		"--dump-dom", pageURL)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	data, err := os.ReadFile(netlog)
	if err != nil {
		t.Fatalf("chromium wrote no NetLog: %v\n%s", err, stderr.String())
	}
	requests, own, err := pageRequests(data)
	if err != nil {
		t.Fatalf("%s: %v", netlog, err)
	}
	if len(own) > 0 {
		t.Logf("the browser's own requests, not the page's: %q", own)
	}
	return stdout.String(), requests
}

// notAnOrigin is the initiator of a request no page started (the
// browser's own: component updates, time, sign-in).
const notAnOrigin = "not an origin"

// pageRequests reads a NetLog and returns every URL the page requested:
// each URL request a page started (it has an initiator origin, or a
// network isolation key of the file:// page), and any other URL the log
// names (a preconnect, a socket) that is not the browser's own. A file://
// page's own load does not go through the network stack and is not in
// the log. own are the browser's own requests. A log cut short at exit is
// closed first.
func pageRequests(data []byte) (page, own []string, err error) {
	var log struct {
		Constants struct {
			EventTypes map[string]int `json:"logEventTypes"`
		} `json:"constants"`
		Events []struct {
			Type   int            `json:"type"`
			Params map[string]any `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(data, &log); err != nil {
		trimmed := bytes.TrimRight(bytes.TrimSpace(data), ",")
		if err2 := json.Unmarshal(append(trimmed, "]}"...), &log); err2 != nil {
			return nil, nil, fmt.Errorf("not a NetLog: %w", err)
		}
	}
	start, ok := log.Constants.EventTypes["URL_REQUEST_START_JOB"]
	if !ok || len(log.Events) == 0 {
		return nil, nil, fmt.Errorf("a NetLog without URL_REQUEST_START_JOB events or without events: it can show nothing")
	}
	add := func(list *[]string, u string) {
		if !slices.Contains(*list, u) {
			*list = append(*list, u)
		}
	}
	ownHosts := map[string]bool{}
	for _, e := range log.Events {
		u, _ := e.Params["url"].(string)
		if e.Type != start || u == "" {
			continue
		}
		initiator, _ := e.Params["initiator"].(string)
		nik, _ := e.Params["network_isolation_key"].(string)
		if initiator == notAnOrigin && !strings.Contains(nik, "file://") {
			add(&own, u)
			if p, err := url.Parse(u); err == nil {
				ownHosts[p.Host] = true
			}
		} else {
			add(&page, u)
		}
	}
	for _, e := range log.Events {
		u, _ := e.Params["url"].(string)
		if u == "" || slices.Contains(own, u) || slices.Contains(page, u) {
			continue
		}
		if p, err := url.Parse(u); err == nil && ownHosts[p.Host] {
			continue
		}
		add(&page, u)
	}
	return page, own, nil
}

// TestChromiumRendersReport loads the fixture release's page in headless
// Chromium: the DOM it builds has every plot and element the page
// promises, and the browser requested nothing but the page.
func TestChromiumRendersReport(t *testing.T) {
	browser := chromium(t)
	page := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(page, renderHTML(t, fixtureReport(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, requests := render(t, browser, page)
	if *screenshot != "" {
		shoot(t, browser, page, *screenshot)
	}
	if len(requests) > 0 {
		t.Errorf("the page made requests: %q", requests)
	}
	count := func(re string) int { return len(regexp.MustCompile(re).FindAllString(dom, -1)) }
	for _, c := range []struct {
		what string
		re   string
		want int
	}{
		{"dot plots", `<svg class="dot-plot"`, 1},
		{"r dots (one per usable workload)", `<circle class="r-dot" data-workload="`, 3},
		{"board dots (two phases, overall)", `<circle class="board-dot" data-board="`, 3},
		{"board intervals", `<line class="interval( open)?"`, 3},
		{"trace plots (one per workload)", `<svg class="trace-plot" data-workload="`, 3},
		{"traces (one per worker attempt)", `<g class="trace (candidate|reference)( failed)?" data-worker="`, 13},
		{"trace lines", `<polyline points="[0-9., ]*">`, 13},
		{"dropped steps (3 warm-ups and the slowest, per ok worker)", `<circle class="step dropped"`, 12 * 4},
		{"CV plots", `<svg class="cv-plot" data-workload="`, 3},
		{"CV bars (one per chosen worker)", `<rect class="cv-bar (candidate|reference)( over)?" data-worker="`, 12},
		{"CV bounds", `<line class="cv-bound"`, 3},
		{"denials", `<li class="denial" data-rule="`, 2},
		{"remedies", `<li class="remedy" data-rule="`, 1},
		{"commands in remedies", `<li class="remedy" [^>]*><code>\[evidence.present\]</code> gather it \(<code>mkrelease evidence run`, 1},
		{"artifacts", `<tr class="artifact" data-name="`, 3},
		{"cases", `<tr class="case" data-case="`, 4},
		{"scripts", `<script`, 0},
	} {
		if got := count(c.re); got != c.want {
			t.Errorf("%s: %d in the rendered DOM, want %d", c.what, got, c.want)
		}
	}
	if !strings.Contains(dom, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the denial with markup in it is not shown as text")
	}
	if !strings.Contains(dom, "&lt;b&gt;here&lt;/b&gt;") {
		t.Error("the remedy with markup in it is not shown as text")
	}
}

// TestChromiumSeesRequests is the negative control of the check above: a
// page that loads an image from a local server is caught, and the server
// saw the request, so a page that requests nothing passes for the right
// reason.
func TestChromiumSeesRequests(t *testing.T) {
	browser := chromium(t)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "image/gif")
		w.Write([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"))
	}))
	defer srv.Close()
	page := filepath.Join(t.TempDir(), "leaky.html")
	img := srv.URL + "/x.gif"
	html := `<!DOCTYPE html><html><body><svg class="dot-plot"></svg><img src="` + img + `"></body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, requests := render(t, browser, page)
	if !strings.Contains(dom, `<svg class="dot-plot">`) {
		t.Errorf("the rendered DOM lacks the page's element:\n%s", dom)
	}
	if !slices.Contains(requests, img) {
		t.Errorf("the NetLog check missed the image request %s (it found %q)", img, requests)
	}
	if hits.Load() == 0 {
		t.Errorf("the local server saw no request: the page did not load its image, so the control shows nothing")
	}
}
