package scaffold

import (
	"reflect"
	"strings"
	"testing"
)

func TestRecogniseLicense(t *testing.T) {
	const mit = `Permission is hereby granted, free of charge, to any person obtaining a copy
of this software ... The above copyright notice and this permission notice shall be included in
all copies or substantial portions of the Software.`
	const bsd = `Redistribution and use in source and binary forms, with or without
modification, are permitted provided that the following conditions are met:`
	const isc = `Permission to use, copy, modify, and/or distribute this software for any
purpose with or without fee is hereby granted`
	tests := []struct{ text, id, hint string }{
		{"MIT License\n\nCopyright (c) 2026 A\n\n" + mit, "MIT", ""},
		{"MIT\n", "MIT", ""},
		{"  Apache-2.0  \n", "Apache-2.0", ""},
		{"SPDX-License-Identifier: BSD-3-Clause\n", "BSD-3-Clause", ""},
		{"Proprietary\n", "", ""}, // one word, but no license init knows
		{mit + "\nExcept as contained in this notice, the name of X shall not be used", "", ""}, // X11, not MIT
		{"Apache License\nVersion 2.0, January 2004\nhttp://www.apache.org/licenses/", "Apache-2.0", ""},
		{bsd + "\n1. ...\n2. ...\n3. Neither the name of the copyright holder nor the names of its contributors may be used to endorse or promote products derived from this software", "BSD-3-Clause", ""},
		{bsd + "\n1. ...\n2. ...", "BSD-2-Clause", ""},
		{bsd + "\n3. All advertising materials mentioning features", "", ""}, // BSD-4-Clause: not guessed
		{isc + ", provided that the above copyright notice and this permission notice appear in all copies.", "ISC", ""},
		{isc + ".\n\nTHE SOFTWARE IS PROVIDED", "0BSD", ""},
		{"GNU GENERAL PUBLIC LICENSE\nVersion 3, 29 June 2007", "", "the GNU GPL version 3: GPL-3.0-only or GPL-3.0-or-later"},
		{"GNU LESSER GENERAL PUBLIC LICENSE\nVersion 3, 29 June 2007\n... the GNU General Public License", "", "the GNU LGPL version 3: LGPL-3.0-only or LGPL-3.0-or-later"},
		{"Mozilla Public License Version 2.0\n==================================", "MPL-2.0", ""},
		{"This is free and unencumbered software released into the public domain.", "Unlicense", ""},
		{"Copyright 2026 A. All rights reserved.", "", ""},
	}
	for _, tc := range tests {
		id, hint := recogniseLicense(tc.text)
		if id != tc.id || hint != tc.hint {
			t.Errorf("recogniseLicense(%.50q) = %q, %q; want %q, %q", tc.text, id, hint, tc.id, tc.hint)
		}
	}
}

func TestSPDXHeaders(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"a.c":             "/* SPDX-License-Identifier: MIT */\nint a;\n",
		"pkg/__init__.py": "#!/usr/bin/env python3\n# SPDX-License-Identifier: MIT\n",
		"b.h":             "// SPDX-License-Identifier: (MIT OR Apache-2.0)\n",
		"bad.c":           "// SPDX-License-Identifier: MIT OR\n",      // no valid expression: left out
		"notes.txt":       "SPDX-License-Identifier: GPL-2.0-only\n",   // not a source file
		"tests/t.py":      "# SPDX-License-Identifier: GPL-2.0-only\n", // tests are skipped
		"late.c":          strings.Repeat("\n", headerBytes) + "// SPDX-License-Identifier: GPL-2.0-only\n",
	})
	got := spdxHeaders(dir)
	want := map[string][]string{"MIT": {"a.c", "pkg/__init__.py"}, "(MIT OR Apache-2.0)": {"b.h"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("spdxHeaders = %q, want %q", got, want)
	}
}

// pyproject.toml's name and version are what init writes the release for:
// one it cannot use is refused, naming the file and the remedy.
func TestDetectRefusesPyprojectName(t *testing.T) {
	for _, tc := range []struct{ toml, want string }{
		{"[project]\nversion = \"1.0\"\n", "pyproject.toml: [project] has no name"},
		{"[project]\nname = \"-bad-\"\n", "pyproject.toml: [project] name:"},
		{"[project]\nname = \"ok\"\nversion = 1.0\n", "pyproject.toml: [project] version is not a string"},
		{"project = 1\n", "pyproject.toml: project is not a table"},
	} {
		_, err := Detect(writeTree(t, map[string]string{"pyproject.toml": tc.toml}))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !strings.Contains(err.Error(), "init") {
			t.Errorf("Detect(%q) = %v, want %q and the remedy", tc.toml, err, tc.want)
		}
	}
	// a pyproject.toml without [project] is not read
	p, err := Detect(writeTree(t, map[string]string{"pyproject.toml": "[tool.black]\nline-length = 100\n"}))
	if err != nil || p.Pyproject != nil || p.Name != "my-project" {
		t.Errorf("Detect without [project] = %+v, %v", p, err)
	}
}

// license-files patterns of pyproject.toml add the files they match to
// the wheels' licenses, after the top license file, once each; a
// pattern leaving the folder matches nothing.
func TestLicenseFileGlobs(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"pyproject.toml":     "[project]\nname = \"x\"\nversion = \"1\"\nlicense = \"MIT AND BSD-2-Clause\"\nlicense-files = [\"LICENSE\", \"LICENSES/*.txt\", \"../outside\"]\n",
		"LICENSE":            "MIT\n",
		"LICENSES/BSD.txt":   "bsd\n",
		"LICENSES/MIT.txt":   "mit\n",
		"LICENSES/README.md": "",
	})
	p, err := Detect(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"LICENSE", "LICENSES/BSD.txt", "LICENSES/MIT.txt"}; !reflect.DeepEqual(p.LicenseFiles, want) {
		t.Errorf("LicenseFiles = %q, want %q", p.LicenseFiles, want)
	}
	if p.License != "MIT AND BSD-2-Clause" || p.LicenseFrom != "pyproject.toml" {
		t.Errorf("License = %q from %q, want pyproject.toml's", p.License, p.LicenseFrom)
	}
}
