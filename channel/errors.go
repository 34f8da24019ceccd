package channel

import (
	"fmt"
	"strings"
)

// The rules a publish can be refused by (Reason.Rule).
const (
	// RuleDifferentAssets: the version is published with other assets or
	// other bytes.
	RuleDifferentAssets = "version-published-with-different-assets"
	// RuleDowngrade: the version is lower than the newest published and
	// downgrades were not allowed.
	RuleDowngrade = "lower-than-newest"
	// RuleOtherProject: the channel serves another project.
	RuleOtherProject = "other-project"
	// RuleNotChannel: DEST is not a channel made by mkrelease.
	RuleNotChannel = "not-a-channel"
	// RuleStateNotVerified: the signed statement of the channel's
	// channel.json is missing, or no trusted key verifies it, or it does
	// not match channel.json.
	RuleStateNotVerified = "state-not-verified"
	// RuleRollback: the channel is older than the state of it seen before
	// (Release.Seen), or forked from it (see Checkpoint.Refuses).
	RuleRollback = "rollback"
)

// Reason is one reason a publish is refused.
type Reason struct {
	// Rule is one of the Rule* constants.
	Rule string `json:"rule"`
	// Msg says what is wrong and what to do.
	Msg string `json:"msg"`
	// Assets names the assets concerned (RuleDifferentAssets).
	Assets []string `json:"assets,omitempty"`
}

// String renders the reason as "rule: msg".
func (r Reason) String() string { return r.Rule + ": " + r.Msg }

// RefusedError is a publish the channel's rules refuse; nothing was
// written. It lists every reason.
type RefusedError struct {
	// Dest is the channel.
	Dest string
	// Version is the release's version ("" when the channel itself is
	// refused, before any release is considered).
	Version string
	// Reasons are every rule the publish breaks.
	Reasons []Reason
}

// Error lists every reason, one per line.
func (e *RefusedError) Error() string {
	var b strings.Builder
	if e.Version != "" {
		fmt.Fprintf(&b, "publish %s to %s refused", e.Version, e.Dest)
	} else {
		fmt.Fprintf(&b, "channel %s refused", e.Dest)
	}
	for _, r := range e.Reasons {
		b.WriteString("\n  ")
		b.WriteString(r.String())
	}
	return b.String()
}

// ExitCode is 1: a check refused.
func (e *RefusedError) ExitCode() int { return 1 }

func notChannel(dest, why string) *RefusedError {
	return &RefusedError{Dest: dest, Reasons: []Reason{{Rule: RuleNotChannel, Msg: dest + " is not a channel made by mkrelease: " + why}}}
}

// UsageError is a release or destination that cannot be published as
// given: the message names the file or value at fault.
type UsageError struct {
	// Msg says what is wrong and what to do.
	Msg string
	// Err is the underlying error, if any.
	Err error
}

// Error returns Msg, followed by the underlying error when there is one.
func (e *UsageError) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

// Unwrap returns the underlying error.
func (e *UsageError) Unwrap() error { return e.Err }

// ExitCode is 2: bad input.
func (e *UsageError) ExitCode() int { return 2 }
