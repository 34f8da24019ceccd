package attest

import (
	"context"
	"crypto"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/release"
)

// The key is prepared exactly when a wheel of this build is not, under its
// name and digest, in the SHA256SUMS of the folder the build replaces.
func TestWillSign(t *testing.T) {
	a, b := strings.Repeat("a", 64), strings.Repeat("b", 64)
	wheel := dist.Artifact{Kind: dist.KindWheel, Path: "demo-1.0-py3-none-any.whl", SHA256: a, Size: 1}
	other := dist.Artifact{Kind: dist.KindWheel, Path: "demo_rt-1.0-py3-none-any.whl", SHA256: b, Size: 1}
	notes := dist.Artifact{Kind: dist.KindNotes, Path: "RELEASE_NOTES.md", SHA256: b, Size: 1}
	tests := []struct {
		name   string
		out    bool   // the release has an output folder
		sums   string // its SHA256SUMS ("-": none)
		staged []dist.Artifact
		want   bool
	}{
		{"no wheel built", true, "", []dist.Artifact{notes}, false},
		{"no output folder", false, "-", []dist.Artifact{wheel}, true},
		{"no SHA256SUMS there", true, "-", []dist.Artifact{wheel}, true},
		{"damaged SHA256SUMS", true, "not a checksum line\n", []dist.Artifact{wheel}, true},
		{"same wheels", true, a + "  demo-1.0-py3-none-any.whl\n" + b + "  demo_rt-1.0-py3-none-any.whl\n", []dist.Artifact{wheel, other, notes}, false},
		{"a wheel changed", true, a + "  demo-1.0-py3-none-any.whl\n" + a + "  demo_rt-1.0-py3-none-any.whl\n", []dist.Artifact{wheel, other}, true},
		{"a wheel new", true, a + "  demo-1.0-py3-none-any.whl\n", []dist.Artifact{wheel, other}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &release.Release{}
			if tt.out {
				r.Out = t.TempDir()
				if tt.sums != "-" {
					if err := os.WriteFile(filepath.Join(r.Out, dist.ChecksumsFile), []byte(tt.sums), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, s := range tt.staged {
				r.Artifacts.Add(s)
			}
			if got := willSign(r); got != tt.want {
				t.Errorf("willSign = %v, want %v", got, tt.want)
			}
		})
	}
}

// preparer is a signer that counts its preparations.
type preparer struct{ n int }

func (p *preparer) Public() crypto.PublicKey { return nil }
func (p *preparer) SignMessage(context.Context, []byte) ([]byte, error) {
	return nil, errors.New("not for signing")
}
func (p *preparer) Prepare() { p.n++ }

// The first stage prepares the key for a folder without SHA256SUMS; the
// one after the wheels, when a wheel differs; a signer with nothing to
// prepare skips both.
func TestPrepareStage(t *testing.T) {
	a := strings.Repeat("a", 64)
	wheel := dist.Artifact{Kind: dist.KindWheel, Path: "demo-1.0-py3-none-any.whl", SHA256: a, Size: 1}
	sums := a + "  demo-1.0-py3-none-any.whl\n"
	tests := []struct {
		name  string
		sums  string // the folder's SHA256SUMS ("-": none)
		first bool
		want  int
	}{
		{"first, new folder", "-", true, 1},
		{"first, folder with SHA256SUMS", sums, true, 0},
		{"after the wheels, same wheel", sums, false, 0},
		{"after the wheels, no SHA256SUMS (the first stage's case)", "-", false, 0},
		{"after the wheels, other wheel", strings.Repeat("b", 64) + "  demo-1.0-py3-none-any.whl\n", false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &release.Release{Out: t.TempDir(), Logger: slog.New(slog.DiscardHandler)}
			if tt.sums != "-" {
				os.WriteFile(filepath.Join(r.Out, dist.ChecksumsFile), []byte(tt.sums), 0o644)
			}
			r.Artifacts.Add(wheel)
			p := &preparer{}
			s := PrepareStage{Signer: p, First: tt.first}
			if reason, skip := s.Skip(r); skip {
				t.Fatalf("skipped: %s", reason)
			}
			if err := s.Run(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			if p.n != tt.want {
				t.Errorf("prepared %d times, want %d", p.n, tt.want)
			}
		})
	}
	if _, skip := (PrepareStage{}).Skip(&release.Release{}); !skip {
		t.Error("a stage without a signer that prepares is not skipped")
	}
}

// pending is a signer whose key is made ready when ready is closed, with
// err.
type pending struct {
	preparer
	ready chan struct{}
	err   error
}

func (p *pending) Wait(ctx context.Context) error {
	select {
	case <-p.ready:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ReadyStage holds the build until a key decrypted in the background is
// ready, and fails it with the key's error; other signers pass at once.
func TestReadyStage(t *testing.T) {
	r := &release.Release{Logger: slog.New(slog.DiscardHandler)}
	ctx := context.Background()
	wrong := errors.New("signing key file://k: wrong password")
	for _, tt := range []struct {
		name   string
		signer provenance.Signer
		want   error
	}{
		{"no signer", nil, nil},
		{"a key already open", &preparer{}, nil},
		{"a pending key that opens", &pending{ready: make(chan struct{})}, nil},
		{"a pending key that does not", &pending{ready: make(chan struct{}), err: wrong}, wrong},
	} {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- (ReadyStage{Signer: tt.signer}).Run(ctx, r) }()
			if p, ok := tt.signer.(*pending); ok {
				select {
				case err := <-done:
					t.Fatalf("returned (%v) before the key was ready", err)
				case <-time.After(50 * time.Millisecond):
				}
				close(p.ready)
			}
			if err := <-done; !errors.Is(err, tt.want) {
				t.Errorf("Run: %v, want %v", err, tt.want)
			}
		})
	}
}
