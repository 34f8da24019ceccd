package evidence

import "testing"

func TestIsFile(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"vexl-0.3.0-verifier-evidence-linux-x86_64.tar.gz", true},
		{"vexl-0.3.0-verifier-evidence-linux-x86_64.tar.gz.sha256", true},
		{"vexl-0.3.0-verifier-evidence-linux-x86_64.intoto.jsonl", true},
		{"vexl-0.3.0-verifier-evidence-linux-x86_64.intoto.jsonl.sha256", true},
		{"vexl-0.3.0-linux-x86_64.tar.gz", false},
		{"vexl-0.3.0.intoto.jsonl", false},
		{"vexl-0.3.0-verifier-evidence-.tar.gz", false},
		{"vexl-0.3.0-verifier-evidence-linux.whl", false},
		{"SHA256SUMS", false},
	}
	for _, tt := range tests {
		if got := IsFile(tt.name); got != tt.want {
			t.Errorf("IsFile(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSplitName(t *testing.T) {
	tests := []struct {
		base, release, target string
		ok                    bool
	}{
		{Name("vexl", "0.3.0", "linux-x86_64") + ".tar.gz", "vexl-0.3.0", "linux-x86_64", true},
		{"a-verifier-evidence-b-1-verifier-evidence-t.tar.gz", "a-verifier-evidence-b-1", "t", true},
		{"vexl-0.3.0-linux-x86_64.tar.gz", "", "", false},
		{"-verifier-evidence-t.tar.gz", "", "", false},
		{"vexl-0.3.0-verifier-evidence-t.intoto.jsonl", "", "", false},
	}
	for _, tt := range tests {
		r, tg, ok := SplitName(tt.base)
		if r != tt.release || tg != tt.target || ok != tt.ok {
			t.Errorf("SplitName(%q) = %q, %q, %v; want %q, %q, %v", tt.base, r, tg, ok, tt.release, tt.target, tt.ok)
		}
	}
}
