// Package spdxschema provides the official SPDX 2.3 JSON schema to tests
// (sbom's and the end-to-end tests): it downloads the module that ships it
// through the Go module proxy, checks the file's pinned digest, and
// compiles it.
package spdxschema

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The official SPDX 2.3 JSON schema (spdx/spdx-spec schemas/spdx-schema.json
// at v2.3), as syft ships it in its module source. The module proxy and the
// checksum database make that download as trustworthy as a dependency; the
// digest pins the file itself too.
const (
	schemaModule = "github.com/anchore/syft@v1.57.1"
	schemaPath   = "schema/spdx-json/spdx-schema-2.3.json"
	schemaSHA256 = "c2e139546ef93597d3b1214d1d452369d0b536af6c6d6500dbd25c582034aa7c"
)

// Load returns the compiled schema, downloading its module on first use
// (once per process). It fails, never skips, when the schema cannot be had.
func Load() (*jsonschema.Schema, error) { return load() }

var load = sync.OnceValues(func() (*jsonschema.Schema, error) {
	file, err := downloadSchema()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != schemaSHA256 {
		return nil, &schemaError{"the schema in " + schemaModule + " has sha256 " + hex.EncodeToString(sum[:]) + ", want " + schemaSHA256}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(file, doc); err != nil {
		return nil, err
	}
	return c.Compile(file)
})

type schemaError struct{ msg string }

func (e *schemaError) Error() string { return e.msg }

func downloadSchema() (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", schemaModule)
	// Outside any module, so the download touches no go.mod or go.sum; and
	// GOFLAGS may say -mod=vendor or -mod=readonly, which do not apply.
	cmd.Dir = os.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOFLAGS=") && !strings.HasPrefix(kv, "GOWORK=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "GOFLAGS=", "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	var info struct{ Dir, Error string }
	_ = json.Unmarshal(out, &info)
	if runErr != nil || info.Error != "" || info.Dir == "" {
		return "", &schemaError{"cannot get the SPDX 2.3 JSON schema: `go mod download -json " + schemaModule + "` failed: " +
			strings.TrimSpace(info.Error+" "+stderr.String()+" "+errString(runErr)) +
			"\n\tThe schema test needs the Go module proxy (GOPROXY, default https://proxy.golang.org) or a module cache that already" +
			" holds " + schemaModule + ": run that command once with network access, then rerun the tests." +
			" The file used is " + schemaPath + " in the Dir it reports."}
	}
	return filepath.Join(info.Dir, filepath.FromSlash(schemaPath)), nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Validate checks an SPDX JSON document against the schema.
func Validate(doc []byte) error {
	sch, err := Load()
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}
