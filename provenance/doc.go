// Package provenance writes and verifies the signed SLSA provenance of a
// release: an in-toto Statement v1 with an SLSA Provenance v1 predicate,
// signed as a DSSE envelope, written both as plain DSSE JSON
// (NAME-VERSION.intoto.jsonl, what `cosign verify-blob-attestation
// --signature` reads) and as a Sigstore bundle v0.3
// (NAME-VERSION.sigstore.json). It also manages the signing keys.
//
// The producer side is [Provenance.Statement], then [Sign] with a [Signer]
// from [LoadSigner] or [DevKey]. The auditor side is [NewVerifier] with the
// public keys the auditor trusts, then [Verifier.Verify] or
// [Verifier.VerifyBundle] with the artifacts the statement must be about.
//
// # Statement
//
// [Provenance.Statement] writes compact JSON, a pure function of its input
// (fields in a fixed order, map keys sorted, subjects sorted by name, times
// in UTC RFC 3339):
//
//	{"_type": "https://in-toto.io/Statement/v1",
//	 "subject": [{"name": "FILE", "digest": {"sha256": "HEX"}}, …],   every wheel, bundle and the SBOM
//	 "predicateType": "https://slsa.dev/provenance/v1",
//	 "predicate": {
//	   "buildDefinition": {
//	     "buildType": "https://mkrelease.dev/buildtypes/release/v1",
//	     "externalParameters": {…},    release.toml/release.lock digests (and pyproject.toml's, with from), targets, project
//	     "internalParameters": {…},    source_date_epoch, …
//	     "resolvedDependencies": [     ResourceDescriptors, in the order given:
//	       {"name", "uri", "digest", "downloadLocation", "annotations"}, …]},
//	   "runDetails": {
//	     "builder": {"id": "…", "version": {"mkrelease": "…"}},
//	     "metadata": {"invocationId", "startedOn", "finishedOn"}}}}
//
// Sources are described by their tree's dirHash ([DirHash] converts
// release.lock's h1: hashes), with the git commit (gitCommit) or the
// archive's sha256; overlays and dependency wheels by sha256 (wheels with
// their URL); toolchains by name, with the sha256 of their executable as
// digest and their version line as annotation. Every URI is absolute and
// the same from any checkout of the project: git+URL@COMMIT, an archive's
// URL, pkg:pypi/NAME@VERSION?file_name=WHEEL (the SBOM's purl), urn:mkrelease:toolchain:NAME; a file or
// folder of the project as package pin's Project.URI names it (the
// project's repository and the path in it, else the project's
// pkg:generic package URL with the path as subpath). The run metadata
// differs from run to run, so a signed statement is not one of the
// reproducible artifacts: it is checked by its signature and its sidecar.
//
// # Envelope and bundle
//
// [Sign] signs PAE("application/vnd.in-toto+json", statement) ([PAE], the
// DSSE v1 pre-authentication encoding) and writes the envelope
// {"payloadType", "payload" (base64), "signatures": [{"keyid", "sig"}]} as
// one line plus "\n". The bundle has mediaType
// application/vnd.dev.sigstore.bundle.v0.3+json, verificationMaterial
// .publicKey.hint = [KeyID], and the same envelope as dsseEnvelope; no
// transparency log entry and no timestamp (trust comes from the key).
//
// Two key identifiers appear. [KeyID], the lowercase hex sha256 of the DER
// SubjectPublicKeyInfo (`openssl pkey -pubin -in KEY.pub -outform DER |
// sha256sum`), names keys in mkrelease: the bundle hint, [Result.KeyID],
// messages. The envelope's keyid is the key's OpenSSH SHA-256 fingerprint
// ("SHA256:…", `ssh-keygen -l -f <(ssh-keygen -i -m PKCS8 -f KEY.pub)`),
// because DSSE verifiers built on go-securesystemslib, among them
// sigstore-go and so cosign's bundle path, skip a signature whose keyid is
// set to anything else.
//
// # Keys
//
// [LoadSigner] takes a key reference:
//
//   - file://PATH (or a plain PATH): an encrypted PEM private key,
//     "ENCRYPTED SIGSTORE PRIVATE KEY" (scrypt + NaCl secretbox, the format
//     of `cosign generate-key-pair` and of [Keygen], which makes ECDSA
//     P-256 keys); the password comes from a [PasswordFunc], typically
//     [PasswordFromEnv] reading MKRELEASE_KEY_PASSWORD (the CLI prompts on a
//     terminal instead when that is unset: *[MissingPasswordError]);
//   - env://VAR: the same encrypted PEM held in an environment variable (a
//     CI secret), like cosign's env:// keys;
//   - a KMS URI, when a KMS provider is compiled in (none is, see below).
//
// Unencrypted private keys are refused. No function of this package writes
// or prints a private key in the clear, and no error contains key material
// or a password: a failed decryption says "wrong password, or the key file
// is damaged" whatever the underlying error was. Private key files are
// created 0600 and never replaced.
//
// [DevKey] keeps a development key pair in the git-ignored .mkrelease/ of
// a checkout, encrypted with an empty password, so that a first build works
// without setup. It proves nothing to anyone else: it is unprotected, on one
// machine, and trusted by nobody; the CLI warns loudly when it uses one.
//
// Signatures are ECDSA over SHA-256 (ASN.1 DER), RSA PKCS #1 v1.5 with
// SHA-256, or pure Ed25519, as cosign makes and checks them for such keys;
// they are computed with the Go standard library.
//
// # KMS providers: none compiled in
//
// This package uses only sigstore/sigstore's pkg/cryptoutils (the encrypted
// key format), not pkg/signature, and compiles in no KMS provider.
// sigstore's providers register in pkg/signature/kms, whose
// pkg/signature imports go-containerregistry, whose go.mod raises
// github.com/klauspost/compress from v1.18.0 to v1.19.1. That changes the
// deflate output: with it, the golden archive of internal/tarball gets
// another digest, i.e. every bundle's bytes change. The compressor version
// is pinned on purpose (reproducibility), so moving it is a decision for
// the release format, not a side effect of signing. The size, measured on
// cmd/mkrelease with go1.26.8 linux/amd64, -trimpath, with the provenance
// API called from main (unstripped / -ldflags=-s -w, modules linked):
//
//	cmd/mkrelease without provenance          22,208,400 / 15,610,121 bytes   26 modules
//	+ provenance (file://, env://; this build) 22,826,248 / 16,032,009 bytes   31 modules  (+0.6 MB, +2.8 %)
//	+ sigstore pkg/signature/kms, hashivault  28,576,948 / 20,017,417 bytes   57 modules  (+5.75 MB, +25 %)
//	+ awskms instead of hashivault            ≈ +10.0 MB over this build, 54 modules
//	+ gcpkms instead of hashivault            ≈ +13.0 MB over this build, 65 modules
//	+ azurekms instead of hashivault          ≈ +7.2 MB over this build, 51 modules
//
// A key reference with a KMS scheme (awskms://, gcpkms://, azurekms://,
// hashivault://, openbao://) fails with an error saying the provider is not
// compiled in; any other scheme is unknown. In CI, env:// with the
// encrypted key and MKRELEASE_KEY_PASSWORD as secrets covers most needs.
//
// To compile hashivault:// (and openbao://) in, an adapter through
// sigstore's KMS registry is kept, with its test against a fake Vault
// transit API, in the _kms folder (ignored by the go command and by go mod
// tidy):
//
//	go get github.com/sigstore/sigstore/pkg/signature/kms/hashivault@v1.10.11
//	go mod edit -go=1.26
//	mv provenance/_kms/kms_sigstore*.go provenance/ && rm provenance/kms_none*.go
//	go mod tidy    # then regenerate the archive goldens: compress is now v1.19.1
//
// The adapter only calls kms.Get for a scheme a compiled-in provider
// registered (kms.Get would otherwise run a sigstore-kms-SCHEME plugin
// program found on PATH). It passes VAULT_ADDR and VAULT_TOKEN (or BAO_*)
// read through [WithGetenv]; the Vault client reads its other settings
// (VAULT_CACERT, VAULT_NAMESPACE, …) from the process environment. To add a
// cloud KMS as well, also go get its module (…/kms/aws, …/kms/gcp or
// …/kms/azure at v1.10.11) and add a blank import of it to
// kms_sigstore.go; nothing else changes.
//
// # Verification
//
// A [Verifier] is built once from trusted public keys; [Verifier.Verify]
// takes the envelope and a required [ArtifactPolicy], [WithArtifacts]
// (file name → sha256) or the explicit opt-out [WithoutArtifactsUnsafe]; the
// zero policy is refused. The checks run in this order and the first
// failure stops them, as a *[VerifyError] naming its [Step]:
//
//	bundle          (VerifyBundle only) media type v0.3, public-key material, a dsseEnvelope
//	envelope        one JSON DSSE envelope, base64 payload and signatures
//	payload-type    application/vnd.in-toto+json
//	signature       a signature over the PAE verifies with a trusted key; else the
//	                envelope's key ids, untrusted or altered, are named
//	statement       in-toto Statement v1; each subject a file name with a sha256, no name twice
//	predicate-type  https://slsa.dev/provenance/v1
//	predicate       buildType, externalParameters, builder.id present; RFC 3339 times
//	subjects        every artifact is a subject with its sha256, no subject unaccounted for
//	                (every difference reported: errors.Join of one *VerifyError each)
//
// [Findings] turns such an error into finding.Finding values (Check the
// step, File the subject, Want and Got the values compared), so that a
// caller reads fields rather than the text; [VerifyError.Finding] does it
// for one.
//
// A [Result] comes back only on success; it records the key that verified,
// the envelope, the statement bytes, the parsed provenance and whether the
// artifacts were bound.
//
// The same files verify with cosign v2 (no network, no transparency log):
//
//	cosign verify-blob-attestation --key KEY.pub --signature NAME-VERSION.intoto.jsonl \
//	    --type slsaprovenance1 --insecure-ignore-tlog=true FILE
//	cosign verify-blob-attestation --key KEY.pub --bundle NAME-VERSION.sigstore.json \
//	    --new-bundle-format --trusted-root EMPTY_ROOT.json \
//	    --type slsaprovenance1 --insecure-ignore-tlog=true FILE
//
// where EMPTY_ROOT.json is {"mediaType":
// "application/vnd.dev.sigstore.trustedroot+json;version=0.1"}: cosign's
// bundle path insists on a trusted root even for a key, and fetches the
// public-good one over the network when none is given.
package provenance
