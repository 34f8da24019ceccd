// Command packwheel packs an unpacked wheel folder (package files plus one
// NAME-VERSION.dist-info with METADATA and WHEEL) into a wheel with
// mkrelease's writer, like `python -m wheel pack`. It exists for the
// benchmark in bench/wheelbench: the same code path `mkrelease build` uses.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mkrelease/mkrelease/internal/treehash"
	"github.com/mkrelease/mkrelease/wheel"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: packwheel DIR OUTDIR")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "packwheel:", err)
		os.Exit(1)
	}
}

func run(dir, out string) error {
	names, err := treehash.List(dir)
	if err != nil {
		return err
	}
	var distInfo string
	for _, n := range names {
		if first, _, _ := strings.Cut(n, "/"); strings.HasSuffix(first, ".dist-info") {
			distInfo = first
		}
	}
	if distInfo == "" {
		return fmt.Errorf("%s: no .dist-info folder", dir)
	}
	mdData, err := os.ReadFile(filepath.Join(dir, distInfo, "METADATA"))
	if err != nil {
		return err
	}
	md, err := wheel.ParseMetadata(mdData)
	if err != nil {
		return err
	}
	wf, err := os.ReadFile(filepath.Join(dir, distInfo, "WHEEL"))
	if err != nil {
		return err
	}
	wm, err := wheel.ParseMetadata(wf)
	if err != nil {
		return err
	}
	tags := wm.Values("Tag")
	if len(tags) != 1 {
		return fmt.Errorf("WHEEL: want one Tag, have %d", len(tags))
	}
	parts := strings.SplitN(tags[0], "-", 3)
	if len(parts) != 3 {
		return fmt.Errorf("WHEEL: bad tag %q", tags[0])
	}
	name, err := wheel.NewFilename(md.Name, md.Version, parts[0], parts[1], parts[2])
	if err != nil {
		return err
	}
	epoch, _ := strconv.ParseInt(os.Getenv("SOURCE_DATE_EPOCH"), 10, 64)
	c := &wheel.Contents{Name: name, Epoch: epoch}
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		m := wheel.Member{Path: n, File: p, Mode: st.Mode().Perm()}
		if rest, ok := strings.CutPrefix(n, distInfo+"/"); ok {
			if rest == "RECORD" {
				continue
			}
			m.Path = rest
			c.DistInfo = append(c.DistInfo, m)
			continue
		}
		c.Members = append(c.Members, m)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	res, err := wheel.Write(context.Background(), c, out)
	if err != nil {
		return err
	}
	fmt.Println(res.Path)
	return nil
}
