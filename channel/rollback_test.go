package channel

import (
	"context"
	"crypto"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/internal/testkey"
)

// pointAt does what an attacker with write access to the channel's folder
// does to hide newer releases: DEST is made to show generation n again.
func pointAt(t *testing.T, dest string, n int) {
	t.Helper()
	must(t, os.Remove(dest))
	must(t, os.Symlink("."+filepath.Base(dest)+".generations/"+genName(n), dest))
}

// verifySince verifies dest against since and returns the report.
func verifySince(t *testing.T, dest string, since *Checkpoint) *Report {
	t.Helper()
	o := verifyOptions()
	o.Since = since
	rep, err := Verify(context.Background(), dest, o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// findings returns the messages of rep's findings of check.
func findings(rep *Report, check string) []string {
	var out []string
	for _, f := range rep.Findings {
		if f.Check == check {
			out = append(out, f.File+": "+f.Msg)
		}
	}
	return out
}

// twoGenerations publishes 0.2.0 then 0.3.0 into a new channel and returns
// DEST and the state verify saw after each, saved to a file and read back
// as a client keeps it.
func twoGenerations(t *testing.T) (dest string, first, second *Checkpoint) {
	t.Helper()
	dest = filepath.Join(t.TempDir(), "ch")
	keep := func() *Checkpoint {
		rep := mustVerify(t, dest)
		if rep.Checkpoint == nil {
			t.Fatal("a channel that verifies gives no checkpoint")
		}
		file := filepath.Join(t.TempDir(), "state.json")
		must(t, rep.Checkpoint.WriteFile(file))
		cp, err := ReadCheckpoint(file)
		if err != nil {
			t.Fatal(err)
		}
		return cp
	}
	r := release(t, "0.2.0", "")
	r.Time = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	mustPublish(t, dest, r)
	first = keep()
	mustPublish(t, dest, release(t, "0.3.0", ""))
	second = keep()
	if first.Generation != 1 || second.Generation != 2 || first.Published != "2026-01-02T03:04:05Z" {
		t.Fatalf("checkpoints %+v and %+v, want generations 1 (published 2026-01-02T03:04:05Z) and 2", first, second)
	}
	return dest, first, second
}

// TestVerifyRefusesRollback: the attack of issue 49 (DEST pointed back at
// the previous generation) passes a verify that knows nothing of the
// channel, and is refused by one given the state seen before, naming both
// generations and the remedy. Without the rollback the same check passes.
func TestVerifyRefusesRollback(t *testing.T) {
	dest, first, second := twoGenerations(t)

	// Negative control: the channel as published is not refused.
	if rep := verifySince(t, dest, second); !rep.OK() {
		t.Fatalf("the channel as published is refused: %v", rep.Err())
	}
	if rep := verifySince(t, dest, first); !rep.OK() {
		t.Fatalf("a channel newer than the state seen is refused: %v", rep.Err())
	}

	pointAt(t, dest, 1)
	mustVerify(t, dest) // consistent, signed: nothing else can tell
	rep := verifySince(t, dest, second)
	got := findings(rep, CheckRollback)
	if len(got) != 1 || rep.OK() {
		t.Fatalf("rollback findings %q (all: %v), want one", got, rep.Err())
	}
	for _, want := range []string{
		"channel.json: the channel shows generation 1 (published 2026-01-02T03:04:05Z, newest 0.2.0",
		"older than generation 2 (published ",
		"recorded in " + second.File,
		"point it back at generation 2",
		"delete " + second.File,
	} {
		if !strings.Contains(got[0], want) {
			t.Errorf("the finding\n%s\ndoes not say %q", got[0], want)
		}
	}
	if rep.Checkpoint == nil || rep.Checkpoint.Generation != 1 {
		t.Errorf("checkpoint %+v, want the state shown (generation 1)", rep.Checkpoint)
	}
}

// TestVerifyRefusesFork: a channel showing the state seen's generation
// with another channel.json, or a newer generation missing or changing a
// version seen, is refused.
func TestVerifyRefusesFork(t *testing.T) {
	_, _, seen := twoGenerations(t) // 0.2.0 and 0.3.0

	for _, tc := range []struct {
		name    string
		publish []Release
		want    string
	}{
		{"same generation, other content", []Release{release(t, "0.2.0", ""), release(t, "0.3.0", "other bytes")},
			"the channel shows generation 2 "},
		{"newer generation without a version seen", []Release{release(t, "0.2.0", ""), release(t, "0.4.0", ""), release(t, "0.5.0", "")},
			"version 0.3.0, published in generation 2 recorded in " + seen.File + ", is missing from generation 3 "},
		{"newer generation, a version seen with other assets", []Release{release(t, "0.2.0", ""), release(t, "0.3.0", "other"), release(t, "0.5.0", "")},
			"version 0.3.0 has other assets in generation 3 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := filepath.Join(t.TempDir(), "ch")
			for _, r := range tc.publish {
				mustPublish(t, other, r)
			}
			mustVerify(t, other)
			got := findings(verifySince(t, other, seen), CheckRollback)
			if len(got) != 1 || !strings.Contains(got[0], tc.want) {
				t.Errorf("rollback findings %q, want one saying %q", got, tc.want)
			}
		})
	}

	// The state of another project's channel is not this channel's.
	otherProject := *seen
	otherProject.Project = "vexl-other"
	if got := otherProject.Refuses(seen); len(got) != 1 || !strings.Contains(got[0], "is of project vexl-other's channel") {
		t.Errorf("Refuses with another project's state = %q", got)
	}
}

// TestVerifyRefusesForgedState: channel.json changed without the key (a
// forged generation number, an old generation's files paired with a new
// number, a statement signed by another key) fails the signed state check.
func TestVerifyRefusesForgedState(t *testing.T) {
	base, _, seen := twoGenerations(t)
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, dest string)
		check  string
		file   string
		want   string
	}{
		{"generation number raised in channel.json", func(t *testing.T, dest string) {
			// Generation 1's files as generation 3: its folder renamed to
			// match, its channel.json saying 3.
			gens := filepath.Join(filepath.Dir(dest), ".ch.generations")
			must(t, os.Rename(filepath.Join(gens, genName(1)), filepath.Join(gens, genName(3))))
			pointAt(t, dest, 3)
			replace(t, filepath.Join(dest, StateFile), func(s string) string {
				return strings.Replace(s, `"generation": 1,`, `"generation": 3,`, 1)
			})
		}, CheckSignedState, SignedStateFile, "was changed after it was signed"},
		{"old files under the new statement", func(t *testing.T, dest string) {
			gens := filepath.Join(filepath.Dir(dest), ".ch.generations")
			for _, f := range []string{StateFile, SignedStateFile} {
				data, err := os.ReadFile(filepath.Join(gens, genName(2), f))
				must(t, err)
				must(t, os.Remove(filepath.Join(gens, genName(1), f)))
				must(t, os.WriteFile(filepath.Join(gens, genName(1), f), data, 0o644))
			}
			pointAt(t, dest, 1)
		}, CheckState, StateFile, "generation is 2 but DEST shows generation 1"},
		{"statement signed by another key", func(t *testing.T, dest string) {
			data, err := os.ReadFile(filepath.Join(dest, StateFile))
			must(t, err)
			st, err := parseState(data)
			must(t, err)
			env, err := signState(context.Background(), testkey.Signer("attacker"), data, st)
			must(t, err)
			replace(t, filepath.Join(dest, SignedStateFile), func(string) string { return string(env) })
		}, CheckSignedState, SignedStateFile, "untrusted key"},
		{"statement removed", func(t *testing.T, dest string) {
			must(t, os.Remove(filepath.Join(dest, SignedStateFile)))
		}, CheckSignedState, SignedStateFile, "channel.json is not signed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := filepath.Join(t.TempDir(), "p")
			copyTree(t, filepath.Dir(base), parent)
			dest := filepath.Join(parent, "ch")
			mustVerify(t, dest)
			tc.tamper(t, dest)
			rep := verifySince(t, dest, seen)
			if !slices.ContainsFunc(rep.Findings, func(f Finding) bool {
				return f.Check == tc.check && f.File == tc.file && strings.Contains(f.Msg, tc.want)
			}) {
				t.Errorf("findings\n%v\nwant a %s finding on %s saying %q", rep.Err(), tc.check, tc.file, tc.want)
			}
			if rep.OK() {
				t.Error("the forged channel verifies")
			}
		})
	}

	// Without a trusted key nothing vouches for the state.
	rep, err := Verify(context.Background(), base, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := findings(rep, CheckSignedState); len(got) != 1 || !strings.Contains(got[0], "no trusted key") || rep.Checkpoint != nil {
		t.Errorf("signed state findings without a key %q, checkpoint %+v", got, rep.Checkpoint)
	}
}

// TestPublishRefusesBackwards: a publish into a channel rolled back behind
// the state the publisher saw is refused and writes nothing; without that
// state it would build on the old generation and drop a version (which a
// verify given the state then refuses).
func TestPublishRefusesBackwards(t *testing.T) {
	dest, _, _ := twoGenerations(t)
	parent := filepath.Dir(dest)
	r3 := release(t, "0.3.0", "")
	res, err := Publish(context.Background(), dest, r3)
	if err != nil || !res.NoOp || res.Checkpoint == nil || res.Checkpoint.Generation != 2 {
		t.Fatalf("publishing 0.3.0 again = %+v, %v; want a no-op giving generation 2's state", res, err)
	}
	seen := res.Checkpoint

	pointAt(t, dest, 1)
	before := listDir(t, filepath.Join(parent, ".ch.generations"))
	r4 := release(t, "0.4.0", "")
	r4.Seen = seen
	_, err = Publish(context.Background(), dest, r4)
	var ref *RefusedError
	if !errors.As(err, &ref) || ref.ExitCode() != 1 || len(ref.Reasons) != 1 || ref.Reasons[0].Rule != RuleRollback ||
		!strings.Contains(ref.Reasons[0].Msg, "shows generation 1 ") || !strings.Contains(ref.Reasons[0].Msg, "older than generation 2 ") {
		t.Fatalf("Publish over a rolled back channel = %v, want a %s refusal naming generations 1 and 2", err, RuleRollback)
	}
	if target, _ := os.Readlink(dest); target != ".ch.generations/g-000001" || !slices.Equal(listDir(t, filepath.Join(parent, ".ch.generations")), before) {
		t.Errorf("a refused publish changed the channel: %s -> %s, generations %v (were %v)", dest, target, listDir(t, filepath.Join(parent, ".ch.generations")), before)
	}
	c, err := Open(dest)
	must(t, err)
	if _, err := c.Plan(context.Background(), r4); !errors.As(err, &ref) || ref.Reasons[0].Rule != RuleRollback {
		t.Errorf("Plan over a rolled back channel = %v, want the %s refusal", err, RuleRollback)
	}

	// Negative control: not knowing the state seen, the publish goes on
	// from generation 1, losing 0.3.0; the state seen refuses the result.
	r4.Seen = nil
	res, err = Publish(context.Background(), dest, r4)
	if err != nil || res.GenerationNumber != 2 {
		t.Fatalf("Publish without the state seen = %+v, %v; want generation 2", res, err)
	}
	if got := versions(t, dest); !slices.Equal(got, []string{"0.2.0", "0.4.0"}) {
		t.Fatalf("versions %v", got)
	}
	if got := findings(verifySince(t, dest, seen), CheckRollback); len(got) != 1 || !strings.Contains(got[0], ": a fork, two different states under one generation number") {
		t.Errorf("verify of the channel published over the rollback: rollback findings %q, want the fork", got)
	}
}

// TestPublishRefusesUnverifiedState: a publish into a channel whose signed
// state does not verify is refused, naming the file, and writes nothing;
// a channel signed by an earlier key is published into when that key is
// trusted.
func TestPublishRefusesUnverifiedState(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, dest string)
		r      func(r Release) Release
		want   string
	}{
		{"channel.json changed", func(t *testing.T, dest string) {
			replace(t, filepath.Join(dest, StateFile), func(s string) string {
				return strings.Replace(s, `"newest": "0.3.0"`, `"newest": "0.3.0" `, 1)
			})
		}, nil, "was changed after it was signed"},
		{"statement missing", func(t *testing.T, dest string) {
			must(t, os.Remove(filepath.Join(dest, SignedStateFile)))
		}, nil, "the channel's state is not signed"},
		{"signed by a key not trusted", nil, func(r Release) Release {
			r.Signer = testkey.Signer("new key")
			return r
		}, "untrusted key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dest, _, _ := twoGenerations(t)
			if tc.tamper != nil {
				tc.tamper(t, dest)
			}
			r := release(t, "0.4.0", "")
			if tc.r != nil {
				r = tc.r(r)
			}
			before := listDir(t, filepath.Join(filepath.Dir(dest), ".ch.generations"))
			_, err := Publish(context.Background(), dest, r)
			var ref *RefusedError
			if !errors.As(err, &ref) || ref.Reasons[0].Rule != RuleStateNotVerified ||
				!strings.Contains(ref.Reasons[0].Msg, filepath.Join(filepath.Dir(dest), ".ch.generations", genName(2), SignedStateFile)+": ") ||
				!strings.Contains(ref.Reasons[0].Msg, tc.want) {
				t.Fatalf("Publish = %v, want a %s refusal naming %s and saying %q", err, RuleStateNotVerified, SignedStateFile, tc.want)
			}
			if got := listDir(t, filepath.Join(filepath.Dir(dest), ".ch.generations")); !slices.Equal(got, before) {
				t.Errorf("a refused publish changed the generations: %v, were %v", got, before)
			}
		})
	}

	// A new signing key publishes once the key that signed the channel is
	// trusted; the new generation is signed with the new key.
	dest, _, _ := twoGenerations(t)
	r := release(t, "0.4.0", "")
	r.Signer, r.TrustedKeys = testkey.Signer("new key"), []crypto.PublicKey{testSigner().Public()}
	res := mustPublish(t, dest, r)
	o := VerifyOptions{TrustedKeys: []crypto.PublicKey{r.Signer.Public()}}
	rep, err := Verify(context.Background(), dest, o)
	if err != nil || !rep.OK() || res.Checkpoint.Generation != 3 {
		t.Fatalf("after a publish with a new key: %v %v, checkpoint %+v", err, rep.Err(), res.Checkpoint)
	}
}

// TestCheckpointFile: a checkpoint reads back as written; a file that is
// not one is refused naming it.
func TestCheckpointFile(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "ch")
	mustPublish(t, dest, release(t, "0.2.0", ""))
	cp := mustVerify(t, dest).Checkpoint
	file := filepath.Join(t.TempDir(), "state.json")
	must(t, cp.WriteFile(file))
	back, err := ReadCheckpoint(file)
	must(t, err)
	back.File = ""
	if back.Project != cp.Project || back.Generation != cp.Generation || back.StateSHA256 != cp.StateSHA256 ||
		!slices.Equal(back.Versions, cp.Versions) || back.KeyID != cp.KeyID || back.KeyID == "" {
		t.Errorf("read back %+v, wrote %+v", back, cp)
	}
	data, err := os.ReadFile(file)
	must(t, err)
	for _, tc := range []struct{ name, data string }{
		{"not JSON", "generation 7"},
		{"unknown field", strings.Replace(string(data), `"format"`, `"extra": 1, "format"`, 1)},
		{"other format", strings.Replace(string(data), CheckpointFormat, "x/1", 1)},
		{"bad digest", strings.Replace(string(data), cp.StateSHA256, "abc", 1)},
		{"two values", string(data) + string(data)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "state.json")
			must(t, os.WriteFile(bad, []byte(tc.data), 0o644))
			_, err := ReadCheckpoint(bad)
			var use *UsageError
			if !errors.As(err, &use) || !strings.Contains(err.Error(), bad) {
				t.Errorf("ReadCheckpoint = %v, want a usage error naming %s", err, bad)
			}
		})
	}
	if _, err := ReadCheckpoint(filepath.Join(t.TempDir(), "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadCheckpoint(missing) = %v, want it not to exist", err)
	}
	a, err := RememberedFile("/cache", dest)
	must(t, err)
	b, err := RememberedFile("/cache", "file://"+dest)
	must(t, err)
	c, err := RememberedFile("/cache", dest+"2")
	must(t, err)
	if a != b || a == c || filepath.Dir(a) != "/cache" {
		t.Errorf("RememberedFile: %s, %s (the same channel by URL), %s (another)", a, b, c)
	}
}

// TestPublishStartsAWipedChannelAgain: a channel that is gone altogether
// (DEST and its generations: a fresh clone of a project whose channel is a
// folder in it) is not a rollback. Publishing starts it again after the
// generation the publisher saw, so that a client that verified the old
// channel sees a later generation and still finds the version it lost. A
// channel whose link alone is gone, its generations still there, is
// refused as before (the control).
func TestPublishStartsAWipedChannelAgain(t *testing.T) {
	for _, empty := range []bool{false, true} {
		dest, _, second := twoGenerations(t)
		parent := filepath.Dir(dest)
		must(t, os.Remove(dest))

		// Control: the generations are still beside DEST.
		r := release(t, "0.4.0", "")
		r.Seen = second
		var ref *RefusedError
		if _, err := Publish(context.Background(), dest, r); !errors.As(err, &ref) || ref.Reasons[0].Rule != RuleRollback ||
			!strings.Contains(ref.Reasons[0].Msg, "point it back at generation 2") {
			t.Fatalf("publish with DEST's link removed, generations kept = %v, want the %s refusal", err, RuleRollback)
		}

		must(t, os.RemoveAll(filepath.Join(parent, ".ch.generations")))
		if empty {
			must(t, os.Mkdir(dest, 0o755))
		}
		c, err := Open(dest)
		must(t, err)
		plan, err := c.Plan(context.Background(), r)
		if err != nil || plan.Restart == nil || plan.Restart.Generation != 2 {
			t.Fatalf("Plan on the wiped channel = %+v, %v; want a restart after generation 2", plan, err)
		}
		res, err := Publish(context.Background(), dest, r)
		if err != nil || res.GenerationNumber != 3 || res.Plan.Restart == nil || res.Checkpoint.Generation != 3 {
			t.Fatalf("publish into the wiped channel (empty folder %v) = %+v, %v; want generation 3, restarted after 2", empty, res, err)
		}
		if got := versions(t, dest); !slices.Equal(got, []string{"0.4.0"}) {
			t.Fatalf("versions %v, want only 0.4.0", got)
		}
		got := findings(verifySince(t, dest, second), CheckRollback)
		if len(got) != 2 || !strings.Contains(got[0]+got[1], "version 0.2.0, published in generation 2") {
			t.Errorf("verify of the restarted channel against generation 2's state: rollback findings %q, want 0.2.0 and 0.3.0 missing", got)
		}
		if got := findings(verifySince(t, dest, res.Checkpoint), CheckRollback); len(got) != 0 {
			t.Errorf("verify of the restarted channel against its own state: %q", got)
		}
	}
}
