package provenance

import (
	"fmt"
	"slices"
	"strings"
)

// sigstoreKMSModule returns the module of sigstore/sigstore's KMS provider
// for scheme ("awskms" → ".../kms/aws"), or "" when scheme is not one.
func sigstoreKMSModule(scheme string) string {
	const base = "github.com/sigstore/sigstore/pkg/signature/kms/"
	switch scheme {
	case "awskms":
		return base + "aws"
	case "gcpkms":
		return base + "gcp"
	case "azurekms":
		return base + "azure"
	case "hashivault", "openbao":
		return base + "hashivault"
	}
	return ""
}

// KMSSchemes returns the KMS URI schemes compiled into this build
// ("hashivault://", …), sorted; none in the default build (see the package
// documentation).
func KMSSchemes() []string {
	s := compiledKMSSchemes()
	slices.Sort(s)
	return s
}

// notCompiledIn is the error for a key URI whose scheme no compiled-in
// provider handles.
func notCompiledIn(uri, scheme string) error {
	have := "none"
	if s := KMSSchemes(); len(s) > 0 {
		have = strings.Join(s, ", ")
	}
	if mod := sigstoreKMSModule(scheme); mod != "" {
		return fmt.Errorf("signing key %s: the %s:// KMS provider is not compiled into this mkrelease (KMS schemes compiled in: %s); "+
			"sign with file://PATH or env://VAR, or build mkrelease with %s as the provenance package documentation describes",
			uri, scheme, have, mod)
	}
	return fmt.Errorf("signing key %s: unknown scheme %q: use file://PATH, env://VAR or a KMS URI (KMS schemes compiled in: %s)", uri, scheme, have)
}
