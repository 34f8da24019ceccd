package provenance

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"math/big"
)

// dsseKeyID returns the keyid Sign writes into a DSSE signature: the
// OpenSSH SHA-256 fingerprint of the key ("SHA256:" and unpadded base64,
// what `ssh-keygen -l` prints). It is not [KeyID] because DSSE verifiers
// built on go-securesystemslib (sigstore-go, and so `cosign
// verify-blob-attestation --new-bundle-format`) skip a signature whose
// keyid is set and differs from this fingerprint of the key they verify
// with. It returns "" for a key type SSH has no encoding for, and Sign then
// leaves the keyid out.
func dsseKeyID(pub crypto.PublicKey) string {
	var w []byte
	str := func(b []byte) {
		w = binary.BigEndian.AppendUint32(w, uint32(len(b)))
		w = append(w, b...)
	}
	mpint := func(n *big.Int) {
		b := n.Bytes()
		if len(b) > 0 && b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		str(b)
	}
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		curve := map[int]string{256: "nistp256", 384: "nistp384", 521: "nistp521"}[k.Curve.Params().BitSize]
		if curve == "" {
			return ""
		}
		point, err := k.Bytes() // uncompressed point, SEC 1
		if err != nil {
			return ""
		}
		str([]byte("ecdsa-sha2-" + curve))
		str([]byte(curve))
		str(point)
	case *rsa.PublicKey:
		str([]byte("ssh-rsa"))
		mpint(big.NewInt(int64(k.E)))
		mpint(k.N)
	case ed25519.PublicKey:
		str([]byte("ssh-ed25519"))
		str(k)
	default:
		return ""
	}
	sum := sha256.Sum256(w)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}
