package main

import (
	"context"
	"encoding/json"
	"os"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mkrelease/mkrelease/build"
	"github.com/mkrelease/mkrelease/provenance"
)

// signrecord KEYDIR RECORD OUT signs RECORD (an action's record, as the
// local cache's entry.json holds it) as mkrelease signs the records it
// uploads to a remote cache (an in-toto statement of
// build.RecordPredicateType about the action, in a DSSE envelope), with
// the development key in KEYDIR (made there when there is none), and
// writes the envelope to OUT: what anyone holding a key, trusted or not,
// can make of any record.
func cmdSignRecord(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: signrecord KEYDIR RECORD OUT")
	}
	signer, _, err := provenance.DevKey(ts.MkAbs(args[0]))
	ts.Check(err)
	data, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	var rec struct {
		Key string `json:"key"`
	}
	ts.Check(json.Unmarshal(data, &rec))
	st, err := provenance.NewStatement(build.RecordPredicateType, []provenance.Subject{{Name: "action", SHA256: rec.Key}}, json.RawMessage(data))
	ts.Check(err)
	env, err := provenance.SignStatement(context.Background(), signer, st)
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), env, 0o644))
}
