package publish

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/policies"
)

// sandboxFacts reads how the build steps ran from statement, the signed
// provenance (an in-toto Statement v1 with a SLSA Provenance v1
// predicate): its buildDefinition.internalParameters.sandbox, an object
// {"isolated": bool, "sandbox": "bubblewrap 0.8.0", "namespaces": [...],
// "reason": "why not"}. A statement without that record is not isolated
// (Recorded false); a record that is not of that shape is not isolated
// either, and Reason says what is wrong with it.
func sandboxFacts(statement []byte) policies.Sandbox {
	var st struct {
		Predicate struct {
			BuildDefinition struct {
				InternalParameters map[string]json.RawMessage `json:"internalParameters"`
			} `json:"buildDefinition"`
		} `json:"predicate"`
	}
	if err := json.Unmarshal(statement, &st); err != nil {
		return policies.Sandbox{Reason: "the provenance cannot be read: " + err.Error()}
	}
	raw, ok := st.Predicate.BuildDefinition.InternalParameters["sandbox"]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return policies.Sandbox{}
	}
	var rec struct {
		Isolated   *bool    `json:"isolated"`
		Sandbox    string   `json:"sandbox"`
		Namespaces []string `json:"namespaces"`
		Reason     string   `json:"reason"`
	}
	malformed := func(why string) policies.Sandbox {
		return policies.Sandbox{Recorded: true, Reason: "the provenance's buildDefinition.internalParameters.sandbox " + why}
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		return malformed(fmt.Sprintf("is malformed (%v)", err))
	}
	if rec.Isolated == nil {
		return malformed("has no \"isolated\"")
	}
	return policies.Sandbox{Recorded: true, Isolated: *rec.Isolated, Name: rec.Sandbox, Namespaces: rec.Namespaces, Reason: rec.Reason}
}

// unsignedParts are the parts of a merged release that no trusted key
// vouched for, as the audit read them from the signed provenance, in the
// policy input's terms.
func unsignedParts(parts []dist.ManifestPart) []policies.UnsignedPart {
	var out []policies.UnsignedPart
	for _, u := range parts {
		out = append(out, policies.UnsignedPart{Targets: u.Targets, PartSHA256: u.PartSHA256, Reason: u.Reason})
	}
	return out
}

// declaredLanes are the [[evidence.lane]] tables of release.toml, by name
// and kind, in its order. Every target runs every lane, so these are the
// lanes each target's evidence must hold.
func declaredLanes(ev config.Evidence) []policies.DeclaredLane {
	var out []policies.DeclaredLane
	for _, l := range ev.Lanes {
		out = append(out, policies.DeclaredLane{Name: l.Name, Kind: l.Kind})
	}
	return out
}
