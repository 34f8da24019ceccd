package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/mkrelease/mkrelease/provenance"
)

// maxStatementsSize bounds the signed statements read back: one line per
// lane and a summary.
const maxStatementsSize = 16 << 20

// StatementSubjects reads what the evidence statements at path are about:
// the digest they give the archive named archive, and every other subject
// (the wheels the run installed) by file name. It reads the first
// statement and checks no signature: it is for deciding whether evidence
// still matches a build (see the build's evidence stage), never for
// trusting it; [Check] verifies the signatures.
func StatementSubjects(path, archive string) (archiveSHA string, wheels map[string]string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	if len(data) > maxStatementsSize {
		return "", nil, fmt.Errorf("%s: larger than %d bytes", path, maxStatementsSize)
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	payload, err := provenance.EnvelopePayload(line)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	var st struct {
		Subject []struct {
			Name   string            `json:"name"`
			Digest map[string]string `json:"digest"`
		} `json:"subject"`
	}
	if err := json.Unmarshal(payload, &st); err != nil {
		return "", nil, fmt.Errorf("%s: the statement is not JSON: %w", path, err)
	}
	wheels = map[string]string{}
	for _, s := range st.Subject {
		if s.Name == archive {
			archiveSHA = s.Digest["sha256"]
			continue
		}
		wheels[s.Name] = s.Digest["sha256"]
	}
	if archiveSHA == "" {
		return "", nil, fmt.Errorf("%s: no subject names the archive %s", path, archive)
	}
	return archiveSHA, wheels, nil
}
