package wheel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/checksum"
)

func TestCacheKey(t *testing.T) {
	// sampleContents with its random member made fixed, so that two calls
	// give the same contents in two folders.
	base := func(t *testing.T) *Contents {
		c := sampleContents(t)
		if err := os.WriteFile(c.Members[2].File, []byte(strings.Repeat("fixed noise ", 1000)), 0o600); err != nil {
			t.Fatal(err)
		}
		return c
	}
	k0, err := base(t).CacheKey("writer-1")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := base(t).CacheKey("writer-1"); again != k0 {
		t.Fatal("the same contents (in other temporary folders) give another key")
	}
	// Member order as given does not matter: the writer sorts.
	c := base(t)
	c.Members[0], c.Members[1] = c.Members[1], c.Members[0]
	if k, _ := c.CacheKey("writer-1"); k != k0 {
		t.Error("listing the members in another order changes the key")
	}
	// A digest given for a file stands for reading it.
	c = base(t)
	for i, m := range c.Members {
		if m.File != "" {
			c.Members[i].SHA256, _, _ = checksum.File(m.File)
		}
	}
	if k, _ := c.CacheKey("writer-1"); k != k0 {
		t.Error("a member's known digest gives another key than reading it")
	}

	for _, tt := range []struct {
		name   string
		change func(c *Contents) string // returns the writer to use
	}{
		{"writer", func(c *Contents) string { return "writer-2" }},
		{"epoch", func(c *Contents) string { c.Epoch++; return "writer-1" }},
		{"name", func(c *Contents) string {
			c.Name, _ = NewFilename("Demo.Pkg", "1.0-RC1", "py3", "none", "manylinux_2_28_x86_64")
			return "writer-1"
		}},
		{"a member's path", func(c *Contents) string { c.Members[0].Path = "demo_pkg/__main__.py"; return "writer-1" }},
		{"a member's mode", func(c *Contents) string { c.Members[0].Mode = 0o755; return "writer-1" }},
		{"a file's content", func(c *Contents) string {
			os.WriteFile(c.Members[1].File, []byte("another binary"), 0o700)
			return "writer-1"
		}},
		{"data bytes", func(c *Contents) string { c.DistInfo[0].Data = []byte("Wheel-Version: 1.1\n"); return "writer-1" }},
		{"a known digest", func(c *Contents) string { c.Members[1].SHA256 = checksum.Bytes([]byte("x")); return "writer-1" }},
		{"a .data member moved to the root", func(c *Contents) string {
			c.Members = append(c.Members, Member{Path: "scripts/demo-run", Data: c.Data[0].Data, Mode: 0o755})
			c.Data = nil
			return "writer-1"
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := base(t)
			w := tt.change(c)
			k, err := c.CacheKey(w)
			if err != nil {
				t.Fatal(err)
			}
			if k == k0 {
				t.Errorf("changing the %s keeps the key", tt.name)
			}
		})
	}

	// Refusals: no writer, a bad digest, an unreadable file, bad contents.
	if _, err := base(t).CacheKey(""); err == nil {
		t.Error("a key without the writer's identity")
	}
	c = base(t)
	c.Members[1].SHA256 = "abc"
	if _, err := c.CacheKey("w"); err == nil || !strings.Contains(err.Error(), "is not a sha256") {
		t.Errorf("a bad known digest: %v", err)
	}
	c = base(t)
	c.Members[1].File = filepath.Join(t.TempDir(), "gone")
	if _, err := c.CacheKey("w"); err == nil || !strings.Contains(err.Error(), "demo_pkg/bin/tool") {
		t.Errorf("a missing file: %v", err)
	}
	c = base(t)
	c.DistInfo = append(c.DistInfo, Member{Path: "RECORD", Data: []byte("x")})
	if _, err := c.CacheKey("w"); err == nil {
		t.Error("contents Write refuses have a key")
	}
}
