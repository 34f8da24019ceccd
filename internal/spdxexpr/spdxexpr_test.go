package spdxexpr

import "testing"

var valid = []string{
	"MIT", "Apache-2.0", "MIT OR Apache-2.0", "(MIT OR Apache-2.0) AND BSD-3-Clause",
	"GPL-2.0-only WITH Classpath-exception-2.0", "GPL-2.0+", "LicenseRef-Proprietary",
	"DocumentRef-spdx-tool-1.2:LicenseRef-MIT-Style-2", "((MIT))", "MIT AND (LGPL-2.1-or-later OR BSD-3-Clause)",
}

var invalid = []string{
	"", " ", "MIT OR", "OR MIT", "MIT and Apache-2.0", "MIT Apache-2.0", "(MIT", "MIT)", "MIT WITH",
	"MIT WITH (X)", "Apache 2.0!", "MIT,Apache", "LicenseRef-", "DocumentRef-x:MIT", "MIT AND AND BSD",
}

func TestCheck(t *testing.T) {
	for _, e := range valid {
		if err := Check(e); err != nil {
			t.Errorf("Check(%q) = %v, want nil", e, err)
		}
	}
	for _, e := range invalid {
		if err := Check(e); err == nil {
			t.Errorf("Check(%q) = nil, want an error", e)
		}
	}
}

func FuzzCheck(f *testing.F) {
	for _, e := range append(valid, invalid...) {
		f.Add(e)
	}
	f.Fuzz(func(t *testing.T, s string) { _ = Check(s) })
}
