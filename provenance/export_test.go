package provenance

import "crypto"

// DSSEKeyIDForTest exposes dsseKeyID to the external tests.
func DSSEKeyIDForTest(pub crypto.PublicKey) string { return dsseKeyID(pub) }
