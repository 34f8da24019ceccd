package sbom

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
	"testing"

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

// spdxSchema downloads the schema module (once per test binary) and
// compiles the schema. It fails, never skips, when the schema cannot be had.
var spdxSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
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

func validate(t *testing.T, data []byte) error {
	t.Helper()
	sch, err := spdxSchema()
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(inst)
}

func TestSchemaValid(t *testing.T) {
	noBundles := realistic()
	for i := range noBundles.Targets {
		noBundles.Targets[i].Bundle = nil
	}
	minimal := Release{Name: "vexl", Version: "0.3.0", Created: epoch, Tool: "mkrelease-0.1.0-dev"}
	for _, tc := range []struct {
		name string
		r    Release
	}{{"realistic", realistic()}, {"no bundles", noBundles}, {"minimal", minimal}} {
		t.Run(tc.name, func(t *testing.T) {
			if err := validate(t, generate(t, tc.r)); err != nil {
				t.Errorf("the document is not valid SPDX 2.3 JSON:\n%v", err)
			}
		})
	}
}

// TestSchemaRejects shows the validator does check: documents broken the
// ways a careless writer would (a nested "files" list in a package, a
// missing identifier, a misspelt relationship type) are refused.
func TestSchemaRejects(t *testing.T) {
	for name, breakIt := range map[string]func(doc map[string]any){
		"package with nested files": func(doc map[string]any) {
			doc["packages"].([]any)[0].(map[string]any)["files"] = []any{}
		},
		"package without SPDXID": func(doc map[string]any) {
			delete(doc["packages"].([]any)[0].(map[string]any), "SPDXID")
		},
		"file without checksums": func(doc map[string]any) {
			doc["files"].([]any)[0].(map[string]any)["checksums"] = []any{}
		},
		"unknown relationship": func(doc map[string]any) {
			doc["relationships"].([]any)[0].(map[string]any)["relationshipType"] = "BUNDLES"
		},
	} {
		t.Run(name, func(t *testing.T) {
			var doc map[string]any
			if err := json.Unmarshal(generate(t, realistic()), &doc); err != nil {
				t.Fatal(err)
			}
			breakIt(doc)
			data, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			if validate(t, data) == nil {
				t.Error("the schema accepted a broken document")
			}
		})
	}
}
