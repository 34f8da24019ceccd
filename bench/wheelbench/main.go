// Command wheelbench measures mkrelease's wheel writer against Debian's
// `python3 -m wheel pack` on the same tree of real binaries, in one run.
//
//	go run ./bench/wheelbench [-mib 420] [-runs 3] [-out bench/out]
//
// It copies ELF files from the machine's library folders into an unpacked
// wheel (at least -mib MiB), packs it alternately with both tools (-runs
// times each), and reports the median wall time, the peak RSS of each
// process, the wheel sizes and the ratios; then it checks the mkrelease
// wheel with the validator and installs it with pip into a fresh virtualenv
// with no index. Results go to stdout (a Markdown table) and OUT/results.json.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/mkrelease/mkrelease/bench/internal/measure"
	"github.com/mkrelease/mkrelease/bench/internal/payload"
	"github.com/mkrelease/mkrelease/wheel"
)

type result struct {
	Seconds []float64 `json:"seconds"`
	Median  float64   `json:"median_seconds"`
	PeakRSS int64     `json:"peak_rss_bytes"`
	Size    int64     `json:"wheel_bytes"`
}

type results struct {
	PayloadBytes int64   `json:"payload_bytes"`
	PayloadFiles int     `json:"payload_files"`
	CPUs         int     `json:"cpus"`
	Mkrelease    result  `json:"mkrelease"`
	WheelPack    result  `json:"wheel_pack"`
	Speedup      float64 `json:"speedup"`
	SizeRatio    float64 `json:"size_ratio"`
	PipInstalled bool    `json:"pip_installed"`
}

func main() {
	mib := flag.Int("mib", 420, "payload size in MiB")
	runs := flag.Int("runs", 3, "runs per tool")
	out := flag.String("out", "bench/out", "work folder")
	python := flag.String("python", "/usr/bin/python3", "Python with the wheel package (Debian python3-wheel)")
	check := flag.Bool("check", false, "exit 1 unless the targets hold: >= 4x faster, size within 5 %, peak RSS <= 200 MiB")
	flag.Parse()
	if err := run(*mib, *runs, *out, *python, *check); err != nil {
		fmt.Fprintln(os.Stderr, "wheelbench:", err)
		os.Exit(1)
	}
}

func run(mib, runs int, out, python string, check bool) error {
	out, _ = filepath.Abs(out)
	os.RemoveAll(out)
	payload := filepath.Join(out, "payload")
	var res results
	var err error
	res.PayloadBytes, res.PayloadFiles, err = makePayload(payload, int64(mib)<<20)
	if err != nil {
		return err
	}
	res.CPUs = runtime.NumCPU()
	packer := filepath.Join(out, "packwheel")
	if b, err := exec.Command("go", "build", "-o", packer, "./bench/packwheel").CombinedOutput(); err != nil {
		return fmt.Errorf("build packwheel: %v\n%s", err, b)
	}
	for i := 0; i < runs; i++ {
		for _, tool := range []string{"mkrelease", "wheel"} {
			dst := filepath.Join(out, tool+"-out")
			os.RemoveAll(dst)
			os.MkdirAll(dst, 0o755)
			var cmd *exec.Cmd
			if tool == "mkrelease" {
				cmd = exec.Command(packer, payload, dst)
			} else {
				cmd = exec.Command(python, "-m", "wheel", "pack", "-d", dst, payload)
			}
			cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH=1793491200")
			secs, rss, err := measure.Timed(cmd)
			if err != nil {
				return fmt.Errorf("%s: %w", tool, err)
			}
			m := &res.Mkrelease
			if tool == "wheel" {
				m = &res.WheelPack
			}
			m.Seconds = append(m.Seconds, secs)
			m.PeakRSS = max(m.PeakRSS, rss)
			whl := wheels(dst, "")
			if len(whl) != 1 {
				return fmt.Errorf("%s wrote %v", tool, whl)
			}
			st, _ := os.Stat(whl[0])
			m.Size = st.Size()
		}
	}
	res.Mkrelease.Median, res.WheelPack.Median = measure.Median(res.Mkrelease.Seconds), measure.Median(res.WheelPack.Seconds)
	res.Speedup = res.WheelPack.Median / res.Mkrelease.Median
	res.SizeRatio = float64(res.Mkrelease.Size) / float64(res.WheelPack.Size)

	whl := wheels(filepath.Join(out, "mkrelease-out"), "")
	rep, err := wheel.Check(whl[0])
	if err != nil {
		return err
	}
	if err := rep.Err(); err != nil {
		return err
	}
	venv := filepath.Join(out, "venv")
	if b, err := exec.Command(python, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		return fmt.Errorf("venv: %v\n%s", err, b)
	}
	// Debian's python3 has no ensurepip; install with the pip wheel Debian
	// ships, run from its wheel file, into the venv.
	pipWheel := wheels("/usr/share/python-wheels", "pip")
	if len(pipWheel) == 0 {
		return fmt.Errorf("no pip wheel in /usr/share/python-wheels (install python3-pip-whl)")
	}
	vpy := filepath.Join(venv, "bin", "python")
	inst := exec.Command(vpy, filepath.Join(pipWheel[0], "pip"), "install", "--no-index", "--no-cache-dir", "-q", whl[0])
	if b, err := inst.CombinedOutput(); err != nil {
		return fmt.Errorf("pip install: %v\n%s", err, b)
	}
	res.PipInstalled = true

	b, _ := json.MarshalIndent(res, "", "  ")
	os.WriteFile(filepath.Join(out, "results.json"), append(b, '\n'), 0o644)
	fmt.Printf("payload: %d files, %.0f MiB of ELF binaries from this machine; %d CPUs; median of %d runs\n\n",
		res.PayloadFiles, float64(res.PayloadBytes)/(1<<20), res.CPUs, runs)
	fmt.Println("| tool | wall time (s) | peak RSS (MiB) | wheel size (MiB) |")
	fmt.Println("| --- | --- | --- | --- |")
	for _, row := range []struct {
		name string
		m    result
	}{{"mkrelease (wheel.Write)", res.Mkrelease}, {"python3 -m wheel pack", res.WheelPack}} {
		fmt.Printf("| %s | %.2f | %.0f | %.1f |\n", row.name, row.m.Median, float64(row.m.PeakRSS)/(1<<20), float64(row.m.Size)/(1<<20))
	}
	fmt.Printf("\nspeed-up %.2fx, size ratio %.3f, pip installs the mkrelease wheel: %v\n", res.Speedup, res.SizeRatio, res.PipInstalled)
	if check && (res.Speedup < 4 || res.SizeRatio > 1.05 || res.Mkrelease.PeakRSS > 200<<20) {
		return fmt.Errorf("targets missed: speed-up %.2fx (>= 4), size ratio %.3f (<= 1.05), peak RSS %d MiB (<= 200)",
			res.Speedup, res.SizeRatio, res.Mkrelease.PeakRSS>>20)
	}
	return nil
}

// makePayload builds an unpacked wheel of real ELF files of at least
// limit bytes.
func makePayload(dir string, limit int64) (int64, int, error) {
	total, n, err := payload.Copy(filepath.Join(dir, "bench_payload", "lib"), limit, nil)
	if err != nil {
		return 0, 0, err
	}
	di := filepath.Join(dir, "bench_payload-1.0.dist-info")
	os.MkdirAll(di, 0o755)
	os.WriteFile(filepath.Join(di, "METADATA"), []byte("Metadata-Version: 2.1\nName: bench-payload\nVersion: 1.0\n"), 0o644)
	os.WriteFile(filepath.Join(di, "WHEEL"), []byte("Wheel-Version: 1.0\nGenerator: wheelbench\nRoot-Is-Purelib: false\nTag: py3-none-any\n"), 0o644)
	return total, n, nil
}

// wheels lists the wheels in dir, by file name, of the distribution
// distribution (of any when ""), sorted by name; none when dir cannot be
// read.
func wheels(dir, distribution string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if fn, err := wheel.ParseFilename(e.Name()); err == nil && (distribution == "" || fn.Distribution == distribution) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}
