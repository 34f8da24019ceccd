package wheel

import "testing"

func TestSplitSdistFilename(t *testing.T) {
	for _, c := range []struct {
		name, dist, version string
		ok                  bool
	}{
		{"demo-1.0.tar.gz", "demo", "1.0", true},
		{"demo_app-2.0rc1.tar.gz", "demo_app", "2.0rc1", true},
		{"my-pkg-1.0.zip", "my-pkg", "1.0", true},
		{"demo-1.0.tar.bz2", "demo", "1.0", true},
		{"demo-1.0.tar.xz", "demo", "1.0", true},
		{"demo-1.0.tgz", "demo", "1.0", true},
		{"demo-1.0.tar", "demo", "1.0", true},
		{"demo-.tar.gz", "demo", "", true}, // the version is not checked here
		{"demo-1.0-py3-none-any.whl", "", "", false},
		{"demo.tar.gz", "", "", false},
		{"-1.0.tar.gz", "", "", false},
		{"demo-1.0.tar.zst", "", "", false},
		{"", "", "", false},
	} {
		d, v, ok := SplitSdistFilename(c.name)
		if d != c.dist || v != c.version || ok != c.ok {
			t.Errorf("SplitSdistFilename(%q) = %q, %q, %v; want %q, %q, %v", c.name, d, v, ok, c.dist, c.version, c.ok)
		}
	}
}
