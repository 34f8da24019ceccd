package build

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/actioncache"
	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/remotecache"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/testnginx"
	"github.com/mkrelease/mkrelease/provenance"
)

// The action the remote cache tests look up: step "tool" of target "t1",
// whose one output, "true", is genuine (the bytes a build here makes) or
// poisoned (what a hostile writer puts in the cache instead).
const remoteKey = "5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed"

var (
	remoteStep    = config.Step{Name: "tool", Outputs: []string{"true"}}
	remoteTarget  = config.Target{Name: "t1"}
	genuineOutput = []byte("#!/bin/sh\nexit 0\n")
	poisonOutput  = []byte("#!/bin/sh\nexit 1\n")
)

// writerKey is a writer's signing key: a development key in a folder of
// the test's.
func writerKey(t *testing.T) (provenance.Signer, string) {
	t.Helper()
	s, _, err := provenance.DevKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s, provenance.KeyID(s.Public())
}

// localEntry stores output as the outputs of key in a local cache of its
// own and returns the cache and the entry.
func localEntry(t *testing.T, key string, output []byte) (*actioncache.Cache, *actioncache.Entry) {
	t.Helper()
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "true"), output, 0o755); err != nil {
		t.Fatal(err)
	}
	c := &actioncache.Cache{Dir: t.TempDir()}
	e, err := c.Put(key, remoteStep.Name, remoteTarget.Name, src, remoteStep.Outputs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c, e
}

// startCache runs nginx as the remote cache and returns its client.
func startCache(t *testing.T) (*testnginx.Server, *remotecache.Client) {
	t.Helper()
	if !testnginx.Installed() {
		t.Skip("nginx is not installed (/usr/sbin/nginx): scripts/bootstrap installs it")
	}
	srv, err := testnginx.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	c, err := remotecache.New(remotecache.Options{URL: srv.CacheURL})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// putRaw is an upload by anyone with upload rights: PUT body at
// BASE/PATH. It returns the status nginx answered (201 new, 204 replaced).
func putRaw(t *testing.T, srv *testnginx.Server, path string, body []byte) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, srv.CacheURL+"/"+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("PUT %s: %s", path, resp.Status)
	}
	return resp.StatusCode
}

// upload stores e of cache in the remote cache as writer signer's, as a
// build that ran the action does.
func upload(t *testing.T, client *remotecache.Client, signer provenance.Signer, cache *actioncache.Cache, e *actioncache.Entry) {
	t.Helper()
	var logs bytes.Buffer
	rm, err := newRemote(&Remote{Cache: client, Upload: true, Signer: signer}, config.DefaultRemoteMaxSize, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	rm.put(context.Background(), cache, e, false, nil, slog.New(slog.NewTextHandler(&logs, nil)))
	if !rm.usable() {
		t.Fatalf("upload failed:\n%s", logs.String())
	}
}

// lookup is a build's lookup of remoteKey in the remote cache, trusting
// writers, on an empty local cache: it returns the bytes it would ship
// (nil when the action runs here), what it recorded, and its log.
func lookup(t *testing.T, client *remotecache.Client, writers ...crypto.PublicKey) ([]byte, ActionRecord, fetched, string) {
	t.Helper()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	rm, err := newRemote(&Remote{Cache: client, Writers: writers}, config.DefaultRemoteMaxSize, log)
	if err != nil {
		t.Fatal(err)
	}
	cache := &actioncache.Cache{Dir: t.TempDir()}
	dst := t.TempDir()
	var rec ActionRecord
	var f fetched
	e, err := rm.fetch(context.Background(), cache, remoteKey, remoteTarget, remoteStep, dst, &rec, &f, log)
	if err != nil {
		t.Fatalf("fetch: %v\n%s", err, logs.String())
	}
	if !rm.usable() {
		t.Fatalf("the remote cache was turned off:\n%s", logs.String())
	}
	if e == nil {
		return nil, rec, f, logs.String()
	}
	got, err := os.ReadFile(filepath.Join(dst, "true"))
	if err != nil {
		t.Fatal(err)
	}
	o, imported, err := cache.Origin(remoteKey)
	if err != nil || !imported || o.Writer != rec.RemoteWriter || o.Cache != client.String() {
		t.Errorf("the local cache's origin of the entry = %+v %v %v, want writer %s from %s", o, imported, err, rec.RemoteWriter, client.String())
	}
	return got, rec, f, logs.String()
}

// A record of the remote cache counts only when a trusted writer signed
// it. A hostile writer with upload rights makes a record and a blob that
// agree with each other for the real action key (the output replaced),
// unsigned or signed by its own key, where the build reads them: under the
// key (the Bazel location) when it is the only writer, or over the
// trusted writer's record (nginx replaces it: 204). None is served: the
// build runs the action, and the warning names the record and why. The
// controls: the trusted writer's record is served, naming its writer;
// the hostile record is served to a build that trusts the hostile key
// (the forgery is consistent: only trust keeps it out).
func TestRemoteTrust(t *testing.T) {
	honest, honestID := writerKey(t)
	hostile, hostileID := writerKey(t)
	genuineCache, genuine := localEntry(t, remoteKey, genuineOutput)
	poisonCache, poison := localEntry(t, remoteKey, poisonOutput)
	_, otherAction := localEntry(t, checksum.Bytes([]byte("another action")), genuineOutput)
	unsigned, err := json.Marshal(poison) // as mkrelease wrote records before they were signed
	if err != nil {
		t.Fatal(err)
	}
	signed := func(s provenance.Signer, e *actioncache.Entry) []byte {
		b, err := signRecord(context.Background(), s, e)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	honestSlot := "ac/" + remotecache.Slot(remoteKey, honestID)
	poisonBlob := "cas/" + poison.Outputs[0].SHA256

	for _, tc := range []struct {
		name string
		// setup fills the remote cache; it returns nginx's answers to the
		// hostile uploads of records.
		setup   func(t *testing.T, srv *testnginx.Server, c *remotecache.Client) []int
		writers []crypto.PublicKey
		want    []byte // served; nil: the action runs here
		writer  string // the writer named as having served it
		warn    string // the warning, when one
		bad     bool   // the trusted writer's slot held a record that did not verify
	}{
		{
			name: "trusted writer's record is served",
			setup: func(t *testing.T, srv *testnginx.Server, c *remotecache.Client) []int {
				upload(t, c, honest, genuineCache, genuine)
				return nil
			},
			writers: []crypto.PublicKey{honest.Public()}, want: genuineOutput, writer: honestID,
		},
		{
			name: "only writer: unsigned record under the key",
			setup: func(t *testing.T, srv *testnginx.Server, c *remotecache.Client) []int {
				putRaw(t, srv, poisonBlob, poisonOutput)
				return []int{putRaw(t, srv, "ac/"+remoteKey, unsigned)}
			},
			writers: []crypto.PublicKey{honest.Public()},
			warn:    `msg="ignored a record of the remote cache: no trusted writer signed it" url=` + "%URL%" + ` key=5eed5eed5eed record="under the action key" problem="unsigned: the record is not a signed statement (the envelope has no payload)"`,
		},
		{
			name: "only writer: record signed by an untrusted key, under the key and in the trusted writer's slot",
			setup: func(t *testing.T, srv *testnginx.Server, c *remotecache.Client) []int {
				putRaw(t, srv, poisonBlob, poisonOutput)
				return []int{putRaw(t, srv, "ac/"+remoteKey, signed(hostile, poison)), putRaw(t, srv, honestSlot, signed(hostile, poison))}
			},
			writers: []crypto.PublicKey{honest.Public()}, bad: true,
			warn: `record="slot of writer ` + honestID + `" problem="signature 0 is by untrusted key SHA256:`,
		},
		{
			name: "unsigned record over the trusted writer's",
			setup: func(t *testing.T, srv *testnginx.Server, c *remotecache.Client) []int {
				upload(t, c, honest, genuineCache, genuine)
				putRaw(t, srv, poisonBlob, poisonOutput)
				return []int{putRaw(t, srv, honestSlot, unsigned)}
			},
			writers: []crypto.PublicKey{honest.Public()}, bad: true,
			warn: `record="slot of writer ` + honestID + `" problem="unsigned: the record is not a signed statement (the envelope has no payload)"`,
		},
		{
			name: "record signed by an untrusted key over the trusted writer's",
			setup: func(t *testing.T, srv *testnginx.Server, c *remotecache.Client) []int {
				upload(t, c, honest, genuineCache, genuine)
				putRaw(t, srv, poisonBlob, poisonOutput)
				return []int{putRaw(t, srv, honestSlot, signed(hostile, poison))}
			},
			writers: []crypto.PublicKey{honest.Public()}, bad: true,
			warn: `problem="signature 0 is by untrusted key SHA256:`,
		},
		{
			name: "the trusted writer's record of another action, replayed",
			setup: func(t *testing.T, srv *testnginx.Server, c *remotecache.Client) []int {
				return []int{putRaw(t, srv, honestSlot, signed(honest, otherAction))}
			},
			writers: []crypto.PublicKey{honest.Public()}, bad: true,
			warn: `problem="the signed record is not about action ` + remoteKey + `"`,
		},
		{
			name: "no trusted writer: nothing counts",
			setup: func(t *testing.T, srv *testnginx.Server, c *remotecache.Client) []int {
				upload(t, c, honest, genuineCache, genuine)
				putRaw(t, srv, "ac/"+remoteKey, signed(honest, genuine))
				return nil
			},
			warn: `problem="no key is trusted to sign records ([cache] trusted_writers is empty)"`,
		},
		{
			name: "control: a build trusting the hostile key takes its record",
			setup: func(t *testing.T, srv *testnginx.Server, c *remotecache.Client) []int {
				upload(t, c, hostile, poisonCache, poison)
				return nil
			},
			writers: []crypto.PublicKey{honest.Public(), hostile.Public()}, want: poisonOutput, writer: hostileID,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := startCache(t)
			for _, status := range tc.setup(t, srv, c) {
				if status != http.StatusCreated && status != http.StatusNoContent {
					t.Errorf("nginx answered %d to a hostile upload", status)
				}
			}
			got, rec, f, logs := lookup(t, c, tc.writers...)
			if !bytes.Equal(got, tc.want) {
				t.Errorf("served %q, want %q\n%s", got, tc.want, logs)
			}
			if rec.RemoteWriter != tc.writer {
				t.Errorf("writer %q, want %q", rec.RemoteWriter, tc.writer)
			}
			warn := strings.ReplaceAll(tc.warn, "%URL%", c.String())
			if (warn == "") != !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, warn) {
				t.Errorf("log lacks the warning %q (or warns where none is due):\n%s", warn, logs)
			}
			if warn != "" && !strings.Contains(logs, "hint=\""+trustHint) {
				t.Errorf("the warning names no remedy:\n%s", logs)
			}
			if strings.Contains(warn, "untrusted key") && !strings.Contains(logs, "; a record counts when signed by "+honestID) {
				t.Errorf("the warning does not name the trusted writer:\n%s", logs)
			}
			if warn != "" && !rec.RemoteIgnored {
				t.Errorf("the record does not say a record was ignored: %+v", rec)
			}
			if slices.Contains(f.badSlots, honestID) != tc.bad {
				t.Errorf("slots that did not verify: %v; want the trusted writer's among them: %v", f.badSlots, tc.bad)
			}
		})
	}
}

// A writer stores its record in its own slot and never replaces a record
// there: two writers of one action each keep theirs, a second upload of a
// writer keeps its first, and only a slot whose record did not verify is
// repaired by its writer.
func TestRemotePutOwnSlot(t *testing.T) {
	srv, c := startCache(t)
	a, aID := writerKey(t)
	b, bID := writerKey(t)
	cacheA, eA := localEntry(t, remoteKey, genuineOutput)
	cacheB, eB := localEntry(t, remoteKey, poisonOutput)
	upload(t, c, a, cacheA, eA)
	upload(t, c, b, cacheB, eB)
	slot := func(id string) []byte {
		data, err := c.GetRecord(context.Background(), remoteKey, id)
		if err != nil {
			t.Fatalf("the slot of %s: %v", id[:12], err)
		}
		return data
	}
	first := slot(aID)
	if bytes.Equal(first, slot(bID)) {
		t.Fatal("two writers share a slot")
	}
	for id, want := range map[string][]byte{aID: genuineOutput, bID: poisonOutput} {
		got, rec, _, logs := lookup(t, c, map[string]crypto.PublicKey{aID: a.Public(), bID: b.Public()}[id])
		if !bytes.Equal(got, want) || rec.RemoteWriter != id {
			t.Errorf("trusting %s only: served %q by %q, want %q\n%s", id[:12], got, rec.RemoteWriter, want, logs)
		}
	}
	// A's second upload of another output for the action keeps its first.
	upload(t, c, a, cacheB, eB)
	if !bytes.Equal(slot(aID), first) {
		t.Error("a writer's second upload replaced its record")
	}
	if _, err := os.Stat(filepath.Join(srv.Root, "mk", "ac", remoteKey)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an upload wrote under the action key itself: %v", err)
	}
	// A hostile record in A's slot is repaired by A, when A's lookup
	// found it did not verify.
	putRaw(t, srv, "ac/"+remotecache.Slot(remoteKey, aID), []byte("{}"))
	_, _, f, _ := lookup(t, c, a.Public())
	if !slices.Contains(f.badSlots, aID) {
		t.Fatalf("the hostile record in A's slot was not found bad: %v", f.badSlots)
	}
	rm, err := newRemote(&Remote{Cache: c, Upload: true, Signer: a}, config.DefaultRemoteMaxSize, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	rm.put(context.Background(), cacheA, eA, false, f.badSlots, slog.New(slog.DiscardHandler))
	if got, _, _, logs := lookup(t, c, a.Public()); !bytes.Equal(got, genuineOutput) {
		t.Errorf("after the repair, served %q\n%s", got, logs)
	}
}

// In verify mode nothing is served: the action runs here, and every
// record the remote cache holds for it is compared with what it made. One
// that agrees is reported; one that names other outputs is warned about
// loudly, naming its writer: a trusted one, or "untrusted" for a record no
// trusted writer signed (here, a poisoned one under the key).
func TestRemoteVerify(t *testing.T) {
	srv, c := startCache(t)
	honest, honestID := writerKey(t)
	sloppy, sloppyID := writerKey(t) // a trusted writer whose build made other bytes
	genuineCache, genuine := localEntry(t, remoteKey, genuineOutput)
	poisonCache, poison := localEntry(t, remoteKey, poisonOutput)
	upload(t, c, honest, genuineCache, genuine)
	upload(t, c, sloppy, poisonCache, poison)
	unsigned, err := json.Marshal(poison)
	if err != nil {
		t.Fatal(err)
	}
	putRaw(t, srv, "ac/"+remoteKey, unsigned)

	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	rm, err := newRemote(&Remote{Cache: c, Writers: []crypto.PublicKey{honest.Public(), sloppy.Public()}, Verify: true}, config.DefaultRemoteMaxSize, log)
	if err != nil {
		t.Fatal(err)
	}
	var rec ActionRecord
	bad := rm.compare(context.Background(), genuine, &rec, log)
	if !slices.Equal(rec.RemoteMatched, []string{honestID}) || !slices.Equal(rec.RemoteMismatched, []string{sloppyID, "untrusted"}) || len(bad) != 0 {
		t.Errorf("matched %v, mismatched %v, bad slots %v; want [%s], [%s untrusted], none", rec.RemoteMatched, rec.RemoteMismatched, bad, honestID, sloppyID)
	}
	diff := "true: sha256 " + genuine.Outputs[0].SHA256 + " (17 bytes) here, " + poison.Outputs[0].SHA256 + " (17 bytes) in the record"
	for _, want := range []string{
		`level=INFO msg="the remote cache's record matches what ran here" url=` + c.String() + ` key=5eed5eed5eed record="slot of writer ` + honestID + `" writer=` + honestID,
		`level=WARN msg="REMOTE CACHE MISMATCH: a record of the remote cache names other outputs than this action made here; this build's own are used" url=` + c.String() + ` key=5eed5eed5eed record="slot of writer ` + sloppyID + `" writer=` + sloppyID + ` differences="[` + diff + `]"`,
		`record="under the action key" writer=untrusted differences="[` + diff + `]" signature="unsigned: the record is not a signed statement (the envelope has no payload)"`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

// An entry taken from a remote cache keeps where it came from in the local
// cache, so that a later build it serves still names its writer; one an
// mkrelease before signed records took (no origin, the import's log), or
// one whose writer the run's remote cache no longer trusts, is forgotten,
// so that the action runs here.
func TestLocalOrigin(t *testing.T) {
	cache, _ := localEntry(t, remoteKey, genuineOutput)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	if o, err := localOrigin(cache, remoteKey, nil, log); err != nil || o != (actioncache.Origin{}) || logs.Len() != 0 {
		t.Errorf("an entry built here: origin %+v, %v\n%s", o, err, logs.String())
	}
	// As an earlier mkrelease imported one: the import's log, no origin.
	legacy := &actioncache.Cache{Dir: t.TempDir()}
	record, err := json.Marshal(actioncache.Entry{Key: remoteKey, Step: remoteStep.Name, Target: remoteTarget.Name,
		Outputs: []actioncache.Output{{Path: "true", Size: int64(len(poisonOutput)), Mode: 0o755, SHA256: checksum.Bytes(poisonOutput)}}})
	if err != nil {
		t.Fatal(err)
	}
	fetch := func(o actioncache.Output, w io.Writer) error { _, err := w.Write(poisonOutput); return err }
	if _, err := legacy.Import(remoteKey, remoteStep.Name, remoteTarget.Name, remoteStep.Outputs, record, 1<<20, actioncache.Origin{Cache: "http://c", Writer: "w"}, fetch); err != nil {
		t.Fatal(err)
	}
	if o, err := localOrigin(legacy, remoteKey, nil, log); err != nil || o.Writer != "w" || o.Cache != "http://c" {
		t.Errorf("an imported entry: origin %+v, %v", o, err)
	}
	// A run using a remote cache that trusts "w" serves it; one that no
	// longer does forgets it (imported again for what follows).
	if o, err := localOrigin(legacy, remoteKey, &remote{slots: []string{"w", ""}}, log); err != nil || o.Writer != "w" {
		t.Errorf("an entry of a trusted writer: origin %+v, %v", o, err)
	}
	if o, err := localOrigin(legacy, remoteKey, &remote{slots: []string{"v", ""}}, log); err != nil || o != (actioncache.Origin{}) || !strings.Contains(logs.String(), "whose writer is no longer trusted") {
		t.Errorf("an entry of a writer no longer trusted: origin %+v, %v\n%s", o, err, logs.String())
	}
	if _, err := legacy.Restore(remoteKey, remoteStep.Name, remoteTarget.Name, remoteStep.Outputs, t.TempDir()); !errors.Is(err, actioncache.ErrMiss) {
		t.Errorf("Restore of an entry of a writer no longer trusted = %v, want a miss", err)
	}
	if _, err := legacy.Import(remoteKey, remoteStep.Name, remoteTarget.Name, remoteStep.Outputs, record, 1<<20, actioncache.Origin{Cache: "http://c", Writer: "w"}, fetch); err != nil {
		t.Fatal(err)
	}
	entries, _ := filepath.Glob(filepath.Join(legacy.Dir, "actions", "*", remoteKey, "origin.json"))
	if len(entries) != 1 {
		t.Fatalf("origin.json: %v", entries)
	}
	os.Remove(entries[0])
	if o, err := localOrigin(legacy, remoteKey, nil, log); err != nil || o != (actioncache.Origin{}) || !strings.Contains(logs.String(), "took from a remote cache without checking who wrote it") {
		t.Errorf("an entry imported without origin: %+v, %v\n%s", o, err, logs.String())
	}
	if _, err := legacy.Restore(remoteKey, remoteStep.Name, remoteTarget.Name, remoteStep.Outputs, t.TempDir()); !errors.Is(err, actioncache.ErrMiss) {
		t.Errorf("Restore after forgetting = %v, want a miss", err)
	}
}
