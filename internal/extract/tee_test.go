package extract

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
)

// TestTee checks that Options.Tee sees every byte of the archive, in
// order, whether the extraction succeeds or stops early, and that the
// extraction is the same as without it.
func TestTee(t *testing.T) {
	tail := bytes.Repeat([]byte("after the refused entry "), 50000) // beyond any read-ahead
	for _, tt := range []struct {
		name    string
		data    []byte
		refused bool
	}{
		{"tar.gz", gzipBytes(t, makeTar(t, file("a.txt", "alpha"), dir("d"), file("d/b.txt", string(tail)))), false},
		{"zip (spooled)", makeZip(t, file("a.txt", "alpha"), file("d/b.txt", "beta")), false},
		{"refused early, much after it", gzipBytes(t, makeTar(t, file("../evil", "x"), file("big", string(tail)))), true},
		{"not an archive", append([]byte("plain text, "), tail...), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var seen bytes.Buffer
			_, _, err := extractBytes(t, tt.data, Options{Tee: &seen})
			if (err != nil) != tt.refused {
				t.Fatalf("err = %v, refused want %v", err, tt.refused)
			}
			if !bytes.Equal(seen.Bytes(), tt.data) {
				t.Errorf("Tee saw %d bytes, not the archive's %d", seen.Len(), len(tt.data))
			}
		})
	}
	t.Run("destination exists", func(t *testing.T) {
		data := gzipBytes(t, makeTar(t, file("a.txt", "alpha")))
		var seen bytes.Buffer
		if _, err := Extract(context.Background(), "a", bytes.NewReader(data), t.TempDir(), Options{Tee: &seen}); err == nil {
			t.Fatal("extracted into an existing folder")
		}
		if !bytes.Equal(seen.Bytes(), data) {
			t.Errorf("Tee saw %d bytes, not the archive's %d", seen.Len(), len(data))
		}
	})
	t.Run("cancelled: not read to the end", func(t *testing.T) {
		data := gzipBytes(t, makeTar(t, file("big", string(tail))))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var seen bytes.Buffer
		if _, err := Extract(ctx, "a", bytes.NewReader(data), filepath.Join(t.TempDir(), "out"), Options{Tee: &seen}); err == nil {
			t.Fatal("a cancelled extraction succeeded")
		}
		if seen.Len() == len(data) {
			t.Error("a cancelled extraction read the whole archive for Tee")
		}
	})
}
