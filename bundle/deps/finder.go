package deps

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pyname"
	"github.com/mkrelease/mkrelease/wheel"
)

// DefaultMaxFileSize bounds a downloaded or copied file when
// [Finder.MaxFileSize] is 0.
const DefaultMaxFileSize = 4 << 30

// Finder locates and fetches the files of locked packages: from the
// places the lock records (url, path), from find-links folders and from a
// simple repository index, into a cache keyed by sha256.
//
// A Finder holds configuration only; it may be used by several goroutines
// and several resolutions at once, and several processes may share its
// cache.
type Finder struct {
	// FindLinks are local folders (paths or file:// URLs) whose wheels are
	// candidates, as pip's --find-links; they are not searched
	// recursively.
	FindLinks []string
	// Index is the base URL of a simple repository (PEP 503 HTML or PEP
	// 691 JSON, negotiated with the Accept header), http(s):// or a
	// file:// folder holding PROJECT/index.html pages; "" for none.
	Index string
	// HTTP is the client for http(s) requests; nil means a client that
	// refuses redirects from https to http. Every request carries the
	// context given to Fetch or Resolve.
	HTTP *http.Client
	// CacheDir is the download cache: sha256/HEX/FILENAME holds a file
	// whose sha256 is HEX. It is required.
	CacheDir string
	// Offline forbids network access: files come from the cache, the
	// lock's local paths, find-links folders and file:// indexes only.
	Offline bool
	// MaxFileSize bounds every file read (0: DefaultMaxFileSize).
	MaxFileSize int64
}

// File is a verified wheel in the cache.
type File struct {
	// Name is the wheel's file name.
	Name string
	// Path is the file in the cache. Its bytes had SHA256 when Fetch
	// returned; copy it with verification.
	Path string
	// SHA256 is the file's digest, lower-case hex; always one of the
	// locked package's pinned digests.
	SHA256 string
	// Size is the file's size in bytes.
	Size int64
	// URL is where the file can be downloaded: the lock's url, or the
	// http(s) URL it was downloaded from (remembered in the cache); "" for
	// a file found only in local folders.
	URL string
	// Yanked is the index's yank reason ("yanked" when none is given) when
	// the index was consulted and marks the file yanked.
	Yanked string
	// MetadataHint is the sha256 of the core metadata file the index
	// advertises (PEP 658/714), "true" when it advertises one without a
	// hash, "" when none (or when the index was not consulted). It is a
	// hint: the metadata is always read from the verified wheel.
	MetadataHint string
}

// Preference ranks a wheel for the interpreter being served: 0 is best,
// larger is worse; ok is false when the wheel does not install there.
type Preference func(f wheel.Filename) (rank int, ok bool)

// Preference returns the ranking of wheels for Python python of the
// target (see [Tags.Rank]).
func (t Tags) Preference(python string) Preference {
	return func(f wheel.Filename) (int, bool) { return t.Rank(python, f) }
}

// Fetch returns a verified local copy of the wheel of p that pref ranks
// best among those whose bytes are pinned by the lock.
//
// Candidates are the wheels the lock names (pylock.toml) or, for a lock
// that pins only hashes (requirements files), every wheel of p's name and
// version in the cache, the find-links folders and the index. The cache
// alone answers when it holds every file the lock pins for p, so a second
// resolution needs no network. Candidates are ranked by pref, then by build
// tag (higher first); the best candidate that verifies is returned, and two
// equally ranked ones that both verify are an *AmbiguousError. A file is
// used only after its bytes were hashed and found to be pinned (and, where
// the lock records one, of the locked size): an index's #sha256= or
// metadata hash can make Fetch skip a file, never accept one.
//
// When the lock names its wheels, a named wheel that cannot be fetched or
// does not verify is an error (a *HashMismatchError, *NotFoundError or
// *FetchError), never a reason to choose another. When the lock pins only
// hashes, a candidate whose bytes are not pinned is just another file of
// the project and the next one is tried; if none verifies, the error is a
// *HashMismatchError naming what was found. Other errors:
// *SdistOnlyError when p has only sdists, *NoWheelError when it has wheels
// but none fits, *NotFoundError when nothing is found.
func (f *Finder) Fetch(ctx context.Context, p Locked, pref Preference) (File, error) {
	return f.search(p).fetch(ctx, pref)
}

func (f *Finder) client() *http.Client {
	if f.HTTP != nil {
		return f.HTTP
	}
	return &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if req.URL.Scheme == "http" && via[0].URL.Scheme == "https" {
			return fmt.Errorf("refusing redirect from https to %s", req.URL)
		}
		return nil
	}}
}

func (f *Finder) maxSize() int64 {
	if f.MaxFileSize > 0 {
		return f.MaxFileSize
	}
	return DefaultMaxFileSize
}

// pkgSearch finds and fetches the files of one locked package; Resolve
// keeps one per package so that sources are read once for all Pythons.
type pkgSearch struct {
	f        *Finder
	p        Locked
	gathered bool
	cands    []*candidate
	sdists   []string
	searched []string
	// results of verifying each candidate, by file name
	done map[string]result
	// index page, read at most once
	page      *projectPage
	pageErr   error
	pageTried bool
}

type result struct {
	file *File
	err  error
}

// candidate is one wheel file name of the package and where to get it.
type candidate struct {
	name string
	fn   wheel.Filename
	want []string // pinned digests its bytes may have
	size int64    // size the lock records, or 0
	url  string   // the lock's url
	locs []location
	// named is set when the lock names this file (pylock.toml).
	named bool
}

// location is one place a candidate's bytes can be read from.
type location struct {
	desc     string // URL or path, for messages
	local    string // local file path, or ""
	remote   string // http(s) URL, or ""
	hint     string // sha256 the source advertises, or ""
	yanked   string
	metaHint string
}

func (f *Finder) search(p Locked) *pkgSearch {
	return &pkgSearch{f: f, p: p, done: map[string]result{}}
}

// errNotHere reports a location that does not have the file.
var errNotHere = errors.New("not found")

func (s *pkgSearch) fetch(ctx context.Context, pref Preference) (File, error) {
	p := s.p
	if s.f.CacheDir == "" {
		return File{}, errors.New("fetch: Finder.CacheDir is not set")
	}
	if p.Source != "" {
		return File{}, fmt.Errorf("%s %s is locked as a %s source, which mkrelease does not bundle: lock its wheels", p.Name, p.Version, p.Source)
	}
	if err := s.gather(ctx); err != nil {
		return File{}, err
	}
	type ranked struct {
		c     *candidate
		rank  int
		build buildTag
	}
	var fitting []ranked
	var available []string
	for _, c := range s.cands {
		available = append(available, c.name)
		if r, ok := pref(c.fn); ok {
			fitting = append(fitting, ranked{c, r, parseBuildTag(c.fn.Build)})
		}
	}
	slices.Sort(available)
	available = slices.Compact(available)
	if len(fitting) == 0 {
		switch {
		case len(s.cands) == 0 && len(s.sdists) > 0:
			return File{}, &SdistOnlyError{Package: p.Name, Version: p.Version, Files: s.sdists}
		case len(s.cands) == 0:
			return File{}, &NotFoundError{Package: p.Name, Version: p.Version, Searched: s.searched}
		}
		return File{}, &NoWheelError{Package: p.Name, Version: p.Version, Available: available, Sdists: s.sdists}
	}
	slices.SortFunc(fitting, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), -compareBuild(a.build, b.build), strings.Compare(a.c.name, b.c.name))
	})
	var mismatch error
	for i := 0; i < len(fitting); {
		j := i
		for j < len(fitting) && fitting[j].rank == fitting[i].rank && compareBuild(fitting[j].build, fitting[i].build) == 0 {
			j++
		}
		var ok []*File
		for _, r := range fitting[i:j] {
			res := s.verify(ctx, r.c)
			if res.err == nil {
				ok = append(ok, res.file)
				continue
			}
			var hm *HashMismatchError
			if r.c.named || !errors.As(res.err, &hm) {
				return File{}, res.err
			}
			if mismatch == nil {
				mismatch = res.err
			}
		}
		switch len(ok) {
		case 0:
			i = j
			continue
		case 1:
			return *ok[0], nil
		}
		var names []string
		for _, f := range ok {
			names = append(names, fmt.Sprintf("%s (sha256 %s)", f.Name, f.SHA256))
		}
		return File{}, &AmbiguousError{Package: p.Name, Candidates: names}
	}
	if mismatch != nil {
		return File{}, mismatch
	}
	return File{}, &NotFoundError{Package: p.Name, Version: p.Version, Searched: s.searched}
}

// gather collects the candidates once.
func (s *pkgSearch) gather(ctx context.Context) error {
	if s.gathered {
		return nil
	}
	s.gathered = true
	p := s.p
	if p.Sdist != nil {
		s.sdists = append(s.sdists, p.Sdist.Name)
	}
	if p.namesWheels() {
		for _, w := range p.Wheels {
			fn, err := wheel.ParseFilename(w.Name)
			if err != nil {
				return err
			}
			c := &candidate{name: w.Name, fn: fn, want: []string{w.SHA256}, size: w.Size, url: w.URL, named: true}
			if w.Path != "" {
				c.locs = append(c.locs, location{desc: w.Path, local: w.Path})
			}
			if w.URL != "" {
				c.locs = append(c.locs, s.f.urlLocation(w.URL, ""))
			}
			s.cands = append(s.cands, c)
		}
		return nil
	}
	// Only hashes are pinned: the cache answers if it holds all of them.
	pins := p.Hashes()
	byName := map[string]*candidate{}
	add := func(name string, loc location) {
		c, ok := byName[name]
		if !ok {
			fn, err := wheel.ParseFilename(name)
			if err != nil || belongs(fn.Distribution, fn.Version, p) != nil {
				return
			}
			c = &candidate{name: name, fn: fn, want: pins}
			byName[name] = c
			s.cands = append(s.cands, c)
		}
		if loc.desc != "" {
			c.locs = append(c.locs, loc)
		}
	}
	all := true
	for _, d := range pins {
		have := false
		for _, n := range s.f.cachedNames(d) {
			add(n, location{})
			c := byName[n]
			if c == nil {
				continue
			}
			if _, done := s.done[n]; done {
				have = true
				continue
			}
			if file := s.f.fromCache(c); file != nil {
				s.done[n] = result{file: file}
				have = true
			}
		}
		all = all && have
	}
	if all {
		return nil
	}
	s.searched = append(s.searched, "cache "+s.f.CacheDir)
	for _, dir := range s.f.FindLinks {
		local, err := localDir(dir)
		if err != nil {
			return err
		}
		s.searched = append(s.searched, "find-links "+local)
		entries, err := os.ReadDir(local)
		if err != nil {
			return &FetchError{Location: local, Err: err}
		}
		for _, e := range entries {
			name := e.Name()
			switch {
			case dist.IsWheel(name):
				add(name, location{desc: filepath.Join(local, name), local: filepath.Join(local, name)})
			case isSdistOf(name, p):
				s.sdists = append(s.sdists, name)
			}
		}
	}
	if s.f.Index != "" {
		page, err := s.indexPage(ctx)
		if err != nil {
			return err
		}
		s.searched = append(s.searched, "index "+page.url)
		for _, f := range page.files {
			switch {
			case dist.IsWheel(f.name):
				loc := s.f.urlLocation(f.url, f.sha256)
				loc.yanked, loc.metaHint = f.yanked, f.metaHint
				add(f.name, loc)
			case isSdistOf(f.name, p):
				s.sdists = append(s.sdists, f.name)
			}
		}
	}
	slices.Sort(s.sdists)
	s.sdists = slices.Compact(s.sdists)
	return nil
}

func (s *pkgSearch) indexPage(ctx context.Context) (projectPage, error) {
	if !s.pageTried {
		s.pageTried = true
		page, err := s.f.indexPage(ctx, s.p.Name)
		s.page, s.pageErr = &page, err
	}
	return *s.page, s.pageErr
}

// fallbacks are the find-links and index locations of a file the lock
// names, tried when the lock's own locations do not have it.
func (s *pkgSearch) fallbacks(ctx context.Context, name string) ([]location, error) {
	var locs []location
	for _, dir := range s.f.FindLinks {
		local, err := localDir(dir)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(local, name)
		locs = append(locs, location{desc: p, local: p})
	}
	if s.f.Index != "" {
		page, err := s.indexPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, f := range page.files {
			if f.name == name {
				loc := s.f.urlLocation(f.url, f.sha256)
				loc.yanked, loc.metaHint = f.yanked, f.metaHint
				locs = append(locs, loc)
			}
		}
	}
	return locs, nil
}

// urlLocation makes a location of a URL: file:// URLs are local files.
func (f *Finder) urlLocation(raw, hint string) location {
	if u, err := url.Parse(raw); err == nil && u.Scheme == "file" {
		p := filepath.FromSlash(u.Path)
		return location{desc: raw, local: p, hint: hint}
	}
	return location{desc: raw, remote: raw, hint: hint}
}

// verify fetches and checks one candidate (once).
func (s *pkgSearch) verify(ctx context.Context, c *candidate) result {
	if r, ok := s.done[c.name]; ok {
		return r
	}
	r := s.verifyOnce(ctx, c)
	s.done[c.name] = r
	return r
}

func (s *pkgSearch) verifyOnce(ctx context.Context, c *candidate) result {
	f := s.f
	if file := f.fromCache(c); file != nil {
		return result{file: file}
	}
	var firstErr, mismatch error
	var skipped []string
	locs := c.locs
	fellBack := false
	for i := 0; ; i++ {
		if i == len(locs) {
			if !c.named || fellBack {
				break
			}
			fellBack = true
			more, err := s.fallbacks(ctx, c.name)
			if err != nil {
				return result{err: err}
			}
			locs = append(locs, more...)
			if i == len(locs) {
				break
			}
		}
		loc := locs[i]
		if loc.hint != "" && !slices.Contains(c.want, loc.hint) {
			skipped = append(skipped, fmt.Sprintf("%s advertises sha256 %s", loc.desc, loc.hint))
			if mismatch == nil {
				mismatch = &HashMismatchError{File: c.name, Location: loc.desc + " (as advertised)", Got: loc.hint, Want: c.want}
			}
			continue
		}
		if loc.remote != "" && f.Offline {
			skipped = append(skipped, loc.desc+" not tried: offline")
			continue
		}
		file, err := f.copyIn(ctx, c, loc)
		switch {
		case err == nil:
			file.Yanked, file.MetadataHint = loc.yanked, loc.metaHint
			return result{file: file}
		case errors.Is(err, errNotHere):
			skipped = append(skipped, loc.desc+": not there")
			continue
		}
		var hm *HashMismatchError
		if errors.As(err, &hm) {
			if c.named {
				return result{err: err}
			}
			if mismatch == nil {
				mismatch = err
			}
			continue
		}
		if ctx.Err() != nil {
			return result{err: ctx.Err()}
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	switch {
	case mismatch != nil:
		return result{err: mismatch}
	case firstErr != nil:
		return result{err: firstErr}
	}
	return result{err: &NotFoundError{Package: s.p.Name, Version: s.p.Version, Searched: append([]string{c.name + ":"}, skipped...)}}
}

// cachePath is where a file with digest d and name is cached.
func (f *Finder) cachePath(d, name string) string {
	return filepath.Join(f.CacheDir, "sha256", d, name)
}

// cachedNames lists the wheel names cached under digest d.
func (f *Finder) cachedNames(d string) []string {
	entries, err := os.ReadDir(filepath.Join(f.CacheDir, "sha256", d))
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if dist.IsWheel(e.Name()) && e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	return names
}

// fromCache returns the cached copy of c when there is one whose bytes
// still hash to its digest; a damaged entry is removed.
func (f *Finder) fromCache(c *candidate) *File {
	for _, d := range c.want {
		p := f.cachePath(d, c.name)
		got, size, err := checksum.File(p)
		if err != nil {
			continue
		}
		if got != d || c.size > 0 && size != c.size {
			os.Remove(p)
			continue
		}
		file := &File{Name: c.name, Path: p, SHA256: d, Size: size, URL: c.url}
		if file.URL == "" {
			if origin, err := os.ReadFile(p + ".url"); err == nil {
				file.URL = strings.TrimSpace(string(origin))
			}
		}
		return file
	}
	return nil
}

// copyIn reads a location into the cache, hashing as it copies, and keeps
// the copy only when its digest is pinned.
func (f *Finder) copyIn(ctx context.Context, c *candidate, loc location) (*File, error) {
	var src io.ReadCloser
	switch {
	case loc.local != "":
		fh, err := os.Open(loc.local)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errNotHere
		}
		if err != nil {
			return nil, &FetchError{Location: loc.desc, Err: err}
		}
		st, err := fh.Stat()
		if err != nil || !st.Mode().IsRegular() {
			fh.Close()
			return nil, &FetchError{Location: loc.desc, Err: errors.New("not a regular file")}
		}
		src = fh
	default:
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.remote, nil)
		if err != nil {
			return nil, &FetchError{Location: loc.desc, Err: err}
		}
		resp, err := f.client().Do(req)
		if err != nil {
			return nil, &FetchError{Location: loc.desc, Err: err}
		}
		if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone {
			resp.Body.Close()
			return nil, errNotHere
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, &FetchError{Location: loc.desc, Err: fmt.Errorf("HTTP status %s", resp.Status)}
		}
		src = resp.Body
	}
	defer src.Close()
	tmpDir := filepath.Join(f.CacheDir, "tmp")
	if err := os.MkdirAll(tmpDir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(tmpDir, "fetch-*")
	if err != nil {
		return nil, err
	}
	defer func() {
		if tmp != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	limit := f.maxSize()
	n, err := io.Copy(io.MultiWriter(tmp, h), &ctxReader{ctx: ctx, r: io.LimitReader(src, limit+1)})
	if err != nil {
		return nil, &FetchError{Location: loc.desc, Err: err}
	}
	if n > limit {
		return nil, &FetchError{Location: loc.desc, Err: fmt.Errorf("larger than the %d bytes allowed (Finder.MaxFileSize)", limit)}
	}
	got := hex.EncodeToString(h.Sum(nil))
	if !slices.Contains(c.want, got) || c.size > 0 && n != c.size {
		return nil, &HashMismatchError{File: c.name, Location: loc.desc, Got: got, Want: c.want, GotSize: n, WantSize: c.size}
	}
	if err := tmp.Sync(); err != nil {
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	final := f.cachePath(got, c.name)
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return nil, err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return nil, err
	}
	tmp = nil
	if err := atomicfile.SyncDir(filepath.Dir(final)); err != nil {
		return nil, err
	}
	file := &File{Name: c.name, Path: final, SHA256: got, Size: n, URL: c.url}
	if loc.remote != "" {
		if file.URL == "" {
			file.URL = loc.remote
		}
		if err := atomicfile.WriteFile(final+".url", []byte(loc.remote+"\n"), 0o644); err != nil {
			return nil, err
		}
	}
	return file, nil
}

// ctxReader stops reading when the context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r *ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// localDir turns a find-links entry (a path or file:// URL) into a path.
func localDir(s string) (string, error) {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		if u.Scheme != "file" {
			return "", fmt.Errorf("find-links %q: only local folders are supported (use Finder.Index for a repository)", s)
		}
		return filepath.FromSlash(u.Path), nil
	}
	return s, nil
}

// isSdistOf reports whether name is a source distribution of p
// ([wheel.SplitSdistFilename]: NAME-VERSION.tar.gz, or an older
// extension).
func isSdistOf(name string, p Locked) bool {
	distribution, version, ok := wheel.SplitSdistFilename(name)
	if !ok {
		return false
	}
	v, err := pep440.Parse(version)
	return err == nil && pyname.Normalize(distribution) == p.Name && v.String() == p.Version
}

// buildTag is a parsed wheel build tag: its leading number and the rest.
type buildTag struct {
	num  int
	rest string
	set  bool
}

func parseBuildTag(s string) buildTag {
	if s == "" {
		return buildTag{}
	}
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	n, _ := strconv.Atoi(s[:i])
	return buildTag{num: n, rest: s[i:], set: true}
}

// compareBuild orders build tags as pip does: no tag first, then by
// number, then by the rest.
func compareBuild(a, b buildTag) int {
	if a.set != b.set {
		if a.set {
			return 1
		}
		return -1
	}
	return cmp.Or(cmp.Compare(a.num, b.num), strings.Compare(a.rest, b.rest))
}
