package scaffold

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/mkrelease/mkrelease/internal/spdxexpr"
)

// knownLicenses are the SPDX ids init accepts as the whole of a one-line
// license file ("MIT"): a single word on its own is only taken for a
// license when it is one of these.
var knownLicenses = map[string]bool{
	"0BSD": true, "AGPL-3.0-only": true, "AGPL-3.0-or-later": true, "Apache-2.0": true,
	"BSD-2-Clause": true, "BSD-3-Clause": true, "BSL-1.0": true, "CC0-1.0": true, "EPL-2.0": true,
	"GPL-2.0-only": true, "GPL-2.0-or-later": true, "GPL-3.0-only": true, "GPL-3.0-or-later": true,
	"ISC": true, "LGPL-2.1-only": true, "LGPL-2.1-or-later": true, "LGPL-3.0-only": true,
	"LGPL-3.0-or-later": true, "MIT": true, "MIT-0": true, "MPL-2.0": true, "PSF-2.0": true,
	"Unlicense": true, "Zlib": true,
}

// licenseText is a license text init recognises by phrases it always
// holds (compared lower-cased, white space collapsed): all of has, none of
// not. An entry with an empty id is a family whose text does not say which
// SPDX id applies (the GNU licenses: "only" or "or later" is said in the
// source files' headers); its hint says so.
type licenseText struct {
	id, hint string
	has, not []string
}

// licenseTexts are tried in order: the more specific first (the GNU
// Lesser and Affero licenses before the General one, which they cite).
var licenseTexts = []licenseText{
	{id: "Apache-2.0", has: []string{"apache license", "version 2.0, january 2004"}},
	{id: "MIT", has: []string{"permission is hereby granted, free of charge, to any person obtaining a copy",
		"the above copyright notice and this permission notice shall be included"},
		not: []string{"except as contained in this notice"}},
	{id: "ISC", has: []string{"permission to use, copy, modify, and/or distribute this software for any purpose with or without fee is hereby granted",
		"provided that the above copyright notice and this permission notice appear in all copies"}},
	{id: "0BSD", has: []string{"permission to use, copy, modify, and/or distribute this software for any purpose with or without fee is hereby granted"}},
	{id: "BSD-3-Clause", has: []string{"redistribution and use in source and binary forms, with or without modification, are permitted",
		"endorse or promote products derived from this software"}, not: []string{"all advertising materials"}},
	{id: "BSD-2-Clause", has: []string{"redistribution and use in source and binary forms, with or without modification, are permitted"},
		not: []string{"all advertising materials", "endorse or promote"}},
	{id: "MPL-2.0", has: []string{"mozilla public license", "version 2.0"}},
	{id: "Unlicense", has: []string{"this is free and unencumbered software released into the public domain"}},
	{id: "BSL-1.0", has: []string{"boost software license - version 1.0"}},
	{id: "Zlib", has: []string{"this software is provided 'as-is', without any express or implied warranty", "altered source versions must be plainly marked as such"}},
	{id: "CC0-1.0", has: []string{"cc0 1.0 universal"}},
	{hint: "the GNU Affero GPL version 3: AGPL-3.0-only or AGPL-3.0-or-later", has: []string{"gnu affero general public license", "version 3"}},
	{hint: "the GNU LGPL version 3: LGPL-3.0-only or LGPL-3.0-or-later", has: []string{"gnu lesser general public license", "version 3"}},
	{hint: "the GNU LGPL version 2.1: LGPL-2.1-only or LGPL-2.1-or-later", has: []string{"gnu lesser general public license", "version 2.1"}},
	{hint: "the GNU GPL version 3: GPL-3.0-only or GPL-3.0-or-later", has: []string{"gnu general public license", "version 3, 29 june 2007"}},
	{hint: "the GNU GPL version 2: GPL-2.0-only or GPL-2.0-or-later", has: []string{"gnu general public license", "version 2, june 1991"}},
}

// maxLicenseBytes bounds what is read of a license file.
const maxLicenseBytes = 256 << 10

// recogniseLicense reads a license file's text: the SPDX id it is the text
// of (or names on its own line), or, for a family whose text does not
// settle the id, a hint naming the choices. Both are "" for a text init
// does not know.
func recogniseLicense(text string) (id, hint string) {
	if line := strings.TrimSpace(text); !strings.Contains(line, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(line, "SPDX-License-Identifier:"))
		if knownLicenses[line] {
			return line, ""
		}
	}
	norm := strings.ToLower(strings.Join(strings.Fields(text), " "))
	for _, lt := range licenseTexts {
		ok := true
		for _, s := range lt.has {
			ok = ok && strings.Contains(norm, s)
		}
		for _, s := range lt.not {
			ok = ok && !strings.Contains(norm, s)
		}
		if ok {
			return lt.id, lt.hint
		}
	}
	return "", ""
}

// spdxHeaderRE finds an SPDX-License-Identifier line of a source file.
var spdxHeaderRE = regexp.MustCompile(`SPDX-License-Identifier:[ \t]*([^\r\n]*)`)

// spdxSourceExts are the source files whose headers are read.
var spdxSourceExts = map[string]bool{
	".c": true, ".h": true, ".cc": true, ".cpp": true, ".cxx": true, ".hh": true, ".hpp": true,
	".go": true, ".py": true, ".pyx": true, ".pyi": true, ".rs": true, ".zig": true, ".s": true, ".S": true,
}

const (
	// maxHeaderFiles bounds how many source files are read for headers.
	maxHeaderFiles = 2000
	// headerBytes is how much of a source file is read: headers sit at
	// the top.
	headerBytes = 2048
)

// spdxHeaders returns the SPDX expressions the SPDX-License-Identifier
// lines of the project's source files give, each with the files that give
// it (slash-separated, relative to dir, in walk order). An identifier that
// is no valid expression is left out.
func spdxHeaders(dir string) map[string][]string {
	out := map[string][]string{}
	keep := func(name string) bool { return spdxSourceExts[filepath.Ext(name)] }
	readSources(dir, keep, maxHeaderFiles, headerBytes, func(name string, head []byte) {
		m := spdxHeaderRE.FindSubmatch(head)
		if m == nil {
			return
		}
		expr := strings.TrimSpace(string(m[1]))
		for _, end := range []string{"*/", "-->", "\"\"\"", "'''"} {
			expr = strings.TrimSpace(strings.TrimSuffix(expr, end))
		}
		if expr == "" || spdxexpr.Check(expr) != nil {
			return
		}
		rel, _ := filepath.Rel(dir, name)
		out[expr] = append(out[expr], filepath.ToSlash(rel))
	})
	return out
}

// detectLicense finds the project's license without a pyproject.toml
// license to go by: the text of the license file (licenseFile, "" when
// none) and the SPDX-License-Identifier lines of the source files. It sets
// p.License and p.LicenseFrom when they agree on one expression, else
// p.LicenseHint to say why there is none.
func (p *Project) detectLicense(dir, licenseFile string) {
	var fileID, fileHint string
	if licenseFile != "" {
		if f, err := os.Open(filepath.Join(dir, filepath.FromSlash(licenseFile))); err == nil {
			b, _ := io.ReadAll(io.LimitReader(f, maxLicenseBytes))
			f.Close()
			fileID, fileHint = recogniseLicense(string(b))
		}
	}
	headers := spdxHeaders(dir)
	exprs := make([]string, 0, len(headers))
	for e := range headers {
		exprs = append(exprs, e)
	}
	sort.Strings(exprs)
	var fromHeaders string
	if len(exprs) == 1 {
		files := headers[exprs[0]]
		fromHeaders = "the SPDX-License-Identifier line of " + files[0]
		if len(files) > 1 {
			fromHeaders = fmt.Sprintf("the SPDX-License-Identifier lines of %s and %d more file%s", files[0], len(files)-1, plural(len(files)-1))
		}
	}
	switch {
	case len(exprs) > 1:
		p.LicenseHint = "the SPDX-License-Identifier lines of the sources name several licenses (" + strings.Join(exprs, ", ") + ")"
	case len(exprs) == 1 && fileID != "" && fileID != exprs[0]:
		p.LicenseHint = fmt.Sprintf("%s holds the %s text, but %s says %s", licenseFile, fileID, fromHeaders, exprs[0])
	case len(exprs) == 1 && fileHint != "" && !strings.Contains(fileHint, exprs[0]):
		p.LicenseHint = fmt.Sprintf("%s is %s, but %s says %s", licenseFile, fileHint, fromHeaders, exprs[0])
	case len(exprs) == 1:
		p.License, p.LicenseFrom = exprs[0], fromHeaders
	case fileID != "":
		p.License, p.LicenseFrom = fileID, "the text of "+licenseFile
	case fileHint != "":
		p.LicenseHint = licenseFile + " is " + fileHint
	case licenseFile != "":
		p.LicenseHint = licenseFile + " is no license text init knows"
	}
}
