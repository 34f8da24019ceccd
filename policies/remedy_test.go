package policies

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestRemediesOfFailing evaluates the defaults on a release that breaks
// most rules and checks what to do about each: one remedy per rule, in
// report order, the evidence commands naming the targets denied.
func TestRemediesOfFailing(t *testing.T) {
	d, err := Evaluate(t.Context(), failing(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := d.Remedies
	var refused *RefusedError
	if !errors.As(d.Err(), &refused) || !slices.Equal(refused.Remedies, got) {
		t.Errorf("the refusal's remedies differ from the decision's: %+v", refused)
	}
	want := []struct {
		rule     string
		contains string
	}{
		{RuleArtifactVerified, "`mkrelease verify dist`"},
		{RuleProvenanceSigned, "[signing] trusted_keys"},
		{RuleProvenanceSubjects, "`mkrelease build`"},
		{RuleEvidencePresent, "`mkrelease evidence run --target linux-aarch64`"},
		{RuleEvidenceSanitised, "`mkrelease evidence run --target linux-x86_64`"},
		{RuleEvidenceStore, "`mkrelease evidence run --target linux-x86_64`"},
		{RuleEvidenceLanes, "without --lane (`mkrelease evidence run --target linux-x86_64`)"},
		{RuleEvidenceCases, "`mkrelease report` lists every case"},
		{RuleEvidenceThroughput, "[policy]"},
		{RuleEvidenceOverall, "[policy]"},
		{RuleEvidencePhase, "[policy]"},
		{RuleEvidenceWorkload, "[policy]"},
		{RuleEvidenceWorkloadUnusable, "every attempt's outcome"},
		{RuleEvidenceNoise, "on a quiet machine (`mkrelease evidence run --target linux-x86_64`, then publish)"},
		// channel.republish and channel.downgrade say it in their messages.
	}
	if len(got) != len(want) {
		t.Fatalf("%d remedies, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Rule != w.rule || !strings.Contains(got[i].Text, w.contains) {
			t.Errorf("remedy %d = %+v, want rule %s with %q", i, got[i], w.rule, w.contains)
		}
		if strings.Contains(got[i].Text, targetsFlag) {
			t.Errorf("remedy %s keeps the placeholder: %q", got[i].Rule, got[i].Text)
		}
	}
}

func TestRemedies(t *testing.T) {
	def := func(rule, msg string) Denial {
		return Denial{Rule: rule, Message: msg, Policy: "default/evidence.rego"}
	}
	tests := []struct {
		name    string
		denials []Denial
		targets []string
		want    []Remedy
	}{
		{"none", nil, nil, []Remedy{}},
		{"every target once, in the order denied", []Denial{
			def(RuleEvidenceNoise, "[evidence.noise] linux-x86_64 throughput/a: robust CV 12.00% is above the maximum 10.00%"),
			def(RuleEvidenceNoise, "[evidence.noise] linux-x86_64 throughput/b: robust CV 11.00% is above the maximum 10.00%"),
			def(RuleEvidenceNoise, "[evidence.noise] linux-aarch64 throughput/a: robust CV 11.00% is above the maximum 10.00%"),
		}, []string{"linux-aarch64", "linux-x86_64"}, []Remedy{{RuleEvidenceNoise, strings.ReplaceAll(remedyText(RuleEvidenceNoise), targetsFlag,
			" --target linux-x86_64 --target linux-aarch64")}}},
		{"missing evidence alone: publish the others now", []Denial{
			def(RuleEvidencePresent, "[evidence.present] linux-aarch64: there is no verifier evidence for this target"),
		}, []string{"linux-x86_64", "linux-aarch64", "macos-arm64"}, []Remedy{{RuleEvidencePresent,
			strings.ReplaceAll(remedyText(RuleEvidencePresent), targetsFlag, " --target linux-aarch64") +
				"; or publish the targets that have it now (`mkrelease publish --target linux-x86_64 --target macos-arm64`) and the others once theirs is here"}}},
		{"missing evidence and more: the others would be refused too", []Denial{
			def(RuleEvidencePresent, "[evidence.present] linux-aarch64: there is no verifier evidence for this target"),
			def(RuleEvidenceSigned, "[evidence.signed] linux-x86_64: evidence e.tar.gz is not signed by a trusted verifier key"),
		}, []string{"linux-x86_64", "linux-aarch64"}, []Remedy{
			{RuleEvidencePresent, strings.ReplaceAll(remedyText(RuleEvidencePresent), targetsFlag, " --target linux-aarch64")},
			{RuleEvidenceSigned, strings.ReplaceAll(remedyText(RuleEvidenceSigned), targetsFlag, " --target linux-x86_64")},
		}},
		{"missing evidence and a user's rule: the others would be refused too", []Denial{
			def(RuleEvidencePresent, "[evidence.present] linux-aarch64: there is no verifier evidence for this target"),
			{Rule: "house.rule", Message: "[house.rule] no", Policy: "policies/house.rego"},
		}, []string{"linux-x86_64", "linux-aarch64"}, []Remedy{
			{RuleEvidencePresent, strings.ReplaceAll(remedyText(RuleEvidencePresent), targetsFlag, " --target linux-aarch64")},
		}},
		{"no target has evidence: nothing to publish now", []Denial{
			def(RuleEvidencePresent, "[evidence.present] linux-aarch64: there is no verifier evidence for this target"),
		}, []string{"linux-aarch64"}, []Remedy{{RuleEvidencePresent,
			strings.ReplaceAll(remedyText(RuleEvidencePresent), targetsFlag, " --target linux-aarch64")}}},
		{"no target named: the command runs every target", []Denial{
			def(RuleEvidencePresent, "[evidence.present] the release names no targets"),
		}, nil, []Remedy{{RuleEvidencePresent, strings.ReplaceAll(remedyText(RuleEvidencePresent), targetsFlag, "")}}},
		{"a word that is none of the targets is not taken for one", []Denial{
			def(RuleEvidenceStore, "[evidence.store] no evidence store for linux-x86_64"),
			def(RuleEvidenceStore, "[evidence.store] $(rm -rf ~): the store is not intact"),
		}, []string{"linux-x86_64"}, []Remedy{{RuleEvidenceStore, strings.ReplaceAll(remedyText(RuleEvidenceStore), targetsFlag, "")}}},
		{"report order, whatever the order given", []Denial{
			def(RuleEvidenceNoise, "[evidence.noise] t throughput/a: robust CV 12.00% is above the maximum 10.00%"),
			def(RuleArtifactPresent, "[artifact.present] the release has no artifacts"),
		}, []string{"t"}, []Remedy{
			{RuleArtifactPresent, remedyText(RuleArtifactPresent)},
			{RuleEvidenceNoise, strings.ReplaceAll(remedyText(RuleEvidenceNoise), targetsFlag, " --target t")},
		}},
		{"a user's policy gets none, even with a default rule's id", []Denial{
			{Rule: RuleEvidenceNoise, Message: "[evidence.noise] house rule", Policy: "policies/house.rego"},
			{Rule: "user.rule", Message: "[user.rule] x", Policy: "policies/house.rego"},
			{Rule: "", Message: "no rule id", Policy: "policies/house.rego"},
			{Rule: RuleEvidenceStore, Message: "[evidence.store] t: a file of the project named like a default", Policy: "default/house.rego"},
		}, []string{"t"}, []Remedy{}},
		{"a message that says what to do gets none", []Denial{
			def(RuleChannelRepublish, "[channel.republish] vexl 0.3.0 is already published with different bytes; publish a new version"),
			def(RuleBuildSandboxed, "[build.sandboxed] the build steps ran without a sandbox (none); rebuild where …"),
		}, []string{"t"}, []Remedy{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Remedies(tt.denials, tt.targets)
			if len(got) != len(tt.want) {
				t.Fatalf("Remedies = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("remedy %d = %+v\nwant %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestEveryRuleSaysWhatToDo holds every default rule to a remedy, or to
// a message that carries one.
func TestEveryRuleSaysWhatToDo(t *testing.T) {
	inMessage := map[string]string{
		RuleBuildSandboxed:   "rebuild where user namespaces are allowed, or set [build] allow_unsandboxed = true",
		RuleChannelRepublish: "publish a new version",
		RuleChannelDowngrade: "publish it anyway with `mkrelease publish --allow-downgrade`",
	}
	said := map[string]bool{}
	for _, tt := range ruleTests {
		for _, m := range tt.want {
			if s, ok := inMessage[ruleID(m)]; ok && strings.Contains(m, s) {
				said[ruleID(m)] = true
			}
		}
	}
	for _, r := range DefaultRules() {
		_, ok := inMessage[r]
		switch text := remedyText(r); {
		case ok && text != "":
			t.Errorf("rule %s says what to do twice: in its message and as %q", r, text)
		case ok && !said[r]:
			t.Errorf("rule %s: no tested message says %q", r, inMessage[r])
		case !ok && text == "":
			t.Errorf("rule %s says nowhere what to do", r)
		}
	}
}
