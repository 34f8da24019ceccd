package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// signingVerbs are the invocations of the verbs that load the signing key
// (session.signingKey): each needs the key's password in CI.
var signingVerbs = regexp.MustCompile(`\b(build|merge|evidence run|publish) --config\b`)

// keyPasswordEnv is how a workflow step gets the signing key's password.
const keyPasswordEnv = "MKRELEASE_KEY_PASSWORD: ${{ secrets.MKRELEASE_KEY_PASSWORD }}"

// workflowSteps splits a workflow's text into its steps: from a line
// starting "- name:" or "- uses:" to the next.
func workflowSteps(text string) []string {
	var steps []string
	start := regexp.MustCompile(`^\s+- (name|uses):`)
	for line := range strings.Lines(text) {
		if start.MatchString(line) || len(steps) == 0 {
			steps = append(steps, "")
		}
		steps[len(steps)-1] += line
	}
	return steps[1:]
}

// missingKeyPassword returns the first line of each step of the workflow
// that runs a signing verb without MKRELEASE_KEY_PASSWORD in its env.
func missingKeyPassword(text string) []string {
	var bad []string
	for _, s := range workflowSteps(text) {
		if strings.Contains(s, "go run ./cmd/mkrelease") && signingVerbs.MatchString(s) && !strings.Contains(s, keyPasswordEnv) {
			bad = append(bad, strings.TrimSpace(strings.SplitN(s, "\n", 2)[0]))
		}
	}
	return bad
}

// Every step of the release workflow that signs (a part, the merged
// provenance, the evidence, the verification summary) gets the signing
// key's password: without it a password-protected key stops the job.
func TestReleaseWorkflowKeyPassword(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var signing int
	for _, s := range workflowSteps(string(data)) {
		if strings.Contains(s, "go run ./cmd/mkrelease") && signingVerbs.MatchString(s) {
			signing++
		}
	}
	if signing != 4 {
		t.Errorf("%d steps run build, merge, evidence run or publish, want 4 (the test no longer reads the workflow right)", signing)
	}
	if bad := missingKeyPassword(string(data)); len(bad) > 0 {
		t.Errorf("release.yml: steps that sign without MKRELEASE_KEY_PASSWORD in their env: %q", bad)
	}
	// Negative control: with the password taken out, every signing step
	// is reported.
	without := strings.ReplaceAll(string(data), keyPasswordEnv, "")
	if got := missingKeyPassword(without); len(got) != signing {
		t.Errorf("the workflow without the password: %q reported, want the %d signing steps", got, signing)
	}
}
