package provenance_test

// This file goes with kms_none.go: both are removed when the KMS adapter
// in _kms/ is moved in.

import (
	"context"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/provenance"
)

func TestKMSNotCompiledIn(t *testing.T) {
	if s := provenance.KMSSchemes(); len(s) != 0 {
		t.Fatalf("KMSSchemes() = %v, want none in this build", s)
	}
	for _, uri := range []string{"hashivault://release", "openbao://release", "awskms:///alias/release", "gcpkms://projects/p/locations/l/keyRings/r/cryptoKeys/k", "azurekms://vault.vault.azure.net/key"} {
		_, err := provenance.LoadSigner(context.Background(), uri, nil)
		if err == nil || !strings.Contains(err.Error(), "not compiled into this mkrelease") || !strings.Contains(err.Error(), "github.com/sigstore/sigstore/pkg/signature/kms/") {
			t.Errorf("LoadSigner(%s) error = %v, want a clear not-compiled-in error naming the module", uri, err)
		}
	}
}
