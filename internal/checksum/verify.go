package checksum

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/mkrelease/mkrelease/internal/finding"
	"github.com/mkrelease/mkrelease/internal/fsmode"
	"github.com/mkrelease/mkrelease/internal/testhook"
)

// Problem is the kind of a verification finding: the [Finding]'s Check
// is one of these IDs.
type Problem string

// The problems Verify and VerifySidecar report, in the order findings of
// one name are sorted.
const (
	// Missing: a listed file does not exist.
	Missing Problem = "missing"
	// Mismatch: a listed file's sha256 differs from the listed one.
	Mismatch Problem = "mismatch"
	// Unlisted: a file is present but not listed (reported only when
	// VerifyOptions.Unlisted is set).
	Unlisted Problem = "unlisted"
	// UnsafeName: a listed name is not a clean relative path (see
	// CheckName); the file system is not consulted.
	UnsafeName Problem = "unsafe-name"
	// NotRegular: a listed name is a directory, symlink, device or other
	// non-regular file.
	NotRegular Problem = "not-regular"
	// Unreadable: a listed file (or a folder being searched for unlisted
	// files) cannot be read.
	Unreadable Problem = "unreadable"
	// WrongName: a sidecar names a file other than the one beside it.
	WrongName Problem = "wrong-name"
)

// problems lists the problems in sort order.
var problems = []Problem{Missing, Mismatch, Unlisted, UnsafeName, NotRegular, Unreadable, WrongName}

// String describes the problem, as a finding's message starts.
func (p Problem) String() string {
	switch p {
	case Missing:
		return "missing"
	case Mismatch:
		return "sha256 mismatch"
	case Unlisted:
		return "not listed"
	case UnsafeName:
		return "unsafe name"
	case NotRegular:
		return "not a regular file"
	case Unreadable:
		return "unreadable"
	case WrongName:
		return "sidecar names another file"
	}
	return fmt.Sprintf("Problem(%q)", string(p))
}

// remedy says what to do about the problem.
func (p Problem) remedy() string {
	switch p {
	case Missing:
		return "restore the file or rebuild the release"
	case Mismatch:
		return "the file was changed, truncated or replaced: rebuild or download it again"
	case Unlisted:
		return "remove it, or regenerate the checksums if it belongs to the release"
	case UnsafeName:
		return "the checksum file may be malicious: do not use it"
	case NotRegular:
		return "listed files must be regular files"
	case Unreadable:
		return "check the file's permissions and the disk"
	case WrongName:
		return "the sidecar belongs to another file: regenerate it"
	}
	return ""
}

// Finding is one problem found by verification: Check is its [Problem]'s
// ID, File the file concerned, as listed (or, for Unlisted, its
// slash-separated path relative to the folder), Want the listed sha256
// and Got the file's (for Mismatch), and Msg the problem, the values
// compared, the details (the reason a name is unsafe, an I/O error, the
// file a mismatching content belongs to) and what to do. [Describe]
// renders it as Report.Err lists it.
type Finding = finding.Finding

// NewFinding returns the finding of problem p about name, with detail
// (may be ""); use [NewMismatch] for Mismatch.
func NewFinding(name string, p Problem, detail string) Finding {
	return Finding{Check: string(p), File: name, Msg: message(p, "", "", detail)}
}

// NewMismatch returns the Mismatch finding about name: want is the listed
// sha256, got the file's, detail says more (may be "").
func NewMismatch(name, want, got, detail string) Finding {
	return Finding{Check: string(Mismatch), File: name, Want: want, Got: got, Msg: message(Mismatch, want, got, detail)}
}

// message is a finding's Msg: the problem, the digests compared, the
// detail and the remedy.
func message(p Problem, want, got, detail string) string {
	var b strings.Builder
	b.WriteString(p.String())
	if p == Mismatch {
		fmt.Fprintf(&b, ": listed %s, file has %s", want, got)
	}
	if detail != "" {
		fmt.Fprintf(&b, " (%s)", detail)
	}
	if r := p.remedy(); r != "" {
		b.WriteString("; " + r)
	}
	return b.String()
}

// Describe renders f as "name: problem: details; what to do", the line
// Report.Err lists for it.
func Describe(f Finding) string { return f.File + ": " + f.Msg }

// Report is the outcome of a verification.
type Report struct {
	// Verified are the names whose content matched, sorted.
	Verified []string `json:"verified"`
	// Findings are every problem found, sorted by name then problem.
	Findings []Finding `json:"findings"`
}

// OK reports whether verification found nothing wrong.
func (r Report) OK() bool { return len(r.Findings) == 0 }

// Err returns nil when verification found nothing wrong, else an error
// (a *finding.Error) listing every finding, one per line, as [Describe]
// renders it.
func (r Report) Err() error {
	fr := finding.Report{Findings: r.Findings}
	return fr.Err(fmt.Sprintf("checksum verification failed, %d problem(s):", len(r.Findings)), Describe, "")
}

// VerifyOptions tune Verify.
type VerifyOptions struct {
	// Unlisted reports regular files and symlinks under the folder that
	// the sums do not list.
	Unlisted bool
	// Ignore are path.Match patterns of slash-separated paths relative to
	// the folder that are never reported as unlisted ("SHA256SUMS",
	// "*.sha256").
	Ignore []string
	// Known are digests the caller already computed, by listed name (a
	// release folder loaded once): a listed regular file Known holds is
	// compared with that digest instead of being hashed again.
	Known map[string]string
}

// job is one file to hash.
type job struct {
	name string
	want string
	size int64
	got  string
	err  error
	// known says got came from VerifyOptions.Known.
	known bool
}

// Verify checks every sum against the files in dir: each listed file must
// exist, be a regular file and have the listed digest. It returns a
// Report with every finding, each naming the file; the error is only for
// what prevents verification itself (dir cannot be opened, ctx done, a bad
// Ignore pattern, a name listed twice). Files are hashed in parallel on all cores.
func Verify(ctx context.Context, dir string, s Sums, o VerifyOptions) (Report, error) {
	for _, p := range o.Ignore {
		if _, err := path.Match(p, ""); err != nil {
			return Report{}, fmt.Errorf("verify %s: ignore pattern %q: %w", dir, p, err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return Report{}, fmt.Errorf("verify: %w", err)
	}
	defer root.Close()

	var rep Report
	var jobs []*job
	listed := map[string]bool{}
	owner := map[string]string{} // digest -> a name listing it
	for _, sum := range s {
		if listed[sum.Name] {
			return Report{}, fmt.Errorf("verify %s: the sums list %s twice; list each file once", dir, sum.Name)
		}
		listed[sum.Name] = true
		sum.SHA256 = strings.ToLower(sum.SHA256)
		if _, ok := owner[sum.SHA256]; !ok {
			owner[sum.SHA256] = sum.Name
		}
		if err := CheckName(sum.Name); err != nil {
			rep.Findings = append(rep.Findings, NewFinding(sum.Name, UnsafeName, err.Error()))
			continue
		}
		st, err := root.Lstat(sum.Name)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			rep.Findings = append(rep.Findings, NewFinding(sum.Name, Missing, ""))
		case err != nil:
			rep.Findings = append(rep.Findings, NewFinding(sum.Name, Unreadable, err.Error()))
		case !st.Mode().IsRegular():
			rep.Findings = append(rep.Findings, NewFinding(sum.Name, NotRegular, "a "+fsmode.Name(st.Mode())))
		default:
			j := &job{name: sum.Name, want: sum.SHA256, size: st.Size()}
			if sha, ok := o.Known[sum.Name]; ok {
				j.got, j.known = sha, true
			}
			jobs = append(jobs, j)
		}
	}

	// Largest first, one file per worker; known digests need no worker.
	hashed := slices.DeleteFunc(slices.Clone(jobs), func(j *job) bool { return j.known })
	sort.SliceStable(hashed, func(i, j int) bool { return hashed[i].size > hashed[j].size })
	workers := min(runtime.GOMAXPROCS(0), len(hashed))
	next := make(chan *job)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, readBufSize)
			for j := range next {
				j.got, j.err = hashIn(ctx, root, dir, j.name, buf)
			}
		}()
	}
feed:
	for _, j := range hashed {
		select {
		case next <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Report{}, fmt.Errorf("verify %s: %w", dir, err)
	}
	for _, j := range jobs {
		switch {
		case j.err != nil:
			rep.Findings = append(rep.Findings, NewFinding(j.name, Unreadable, j.err.Error()))
		case j.got != j.want:
			detail := ""
			if other, ok := owner[j.got]; ok && other != j.name {
				detail = "its content is the one listed for " + other + ": files swapped or copied?"
			} else if j.got == emptySHA256 {
				detail = "the file is empty"
			}
			rep.Findings = append(rep.Findings, NewMismatch(j.name, j.want, j.got, detail))
		default:
			rep.Verified = append(rep.Verified, j.name)
		}
	}

	if o.Unlisted {
		err := fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				rep.Findings = append(rep.Findings, NewFinding(p, Unreadable, err.Error()))
				return nil
			}
			if d.IsDir() || listed[p] || ignored(p, o.Ignore) {
				return nil
			}
			detail := ""
			if !d.Type().IsRegular() {
				detail = "a " + fsmode.Name(d.Type())
			}
			rep.Findings = append(rep.Findings, NewFinding(p, Unlisted, detail))
			return nil
		})
		if err != nil {
			return Report{}, fmt.Errorf("verify %s: %w", dir, err)
		}
	}
	sort.Strings(rep.Verified)
	sort.SliceStable(rep.Findings, func(i, j int) bool {
		a, b := rep.Findings[i], rep.Findings[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return slices.Index(problems, Problem(a.Check)) < slices.Index(problems, Problem(b.Check))
	})
	return rep, nil
}

// emptySHA256 is the sha256 of no bytes.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// hashIn hashes the regular file name under root, which is open on dir.
func hashIn(ctx context.Context, root *os.Root, dir, name string, buf []byte) (string, error) {
	f, err := root.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("became %s while being verified", "a "+fsmode.Name(st.Mode()))
	}
	testhook.Count(testhook.CountHash, filepath.Join(dir, filepath.FromSlash(name)))
	sha, _, err := hashReader(f, buf, ctx.Err)
	return sha, err
}

func ignored(p string, patterns []string) bool {
	for _, pat := range patterns {
		if ok, _ := path.Match(pat, p); ok {
			return true
		}
	}
	return false
}
