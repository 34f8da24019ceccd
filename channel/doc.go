// Package channel publishes releases into a release channel, atomically,
// and audits a channel.
//
// A channel is a local folder (DEST, a path or a file:// URL) that any
// static web server can serve, e.g. `python3 -m http.server`. It holds the
// releases of one project (the normalised name given at the first publish),
// one folder per version.
//
// # Layout
//
// After publishing versions 0.2.0 and 0.3.0 of project vexl, whose wheels
// are vexl and Vexl_Plugin, a client sees:
//
//	DEST/
//	  channel.json                   the state: project, generation, time, versions with every asset's sha256
//	  channel.intoto.jsonl           channel.json's signed statement (see Signed state)
//	  index.html                     a page for people: every version with links to its assets
//	  find-links.html                every wheel of every version (pip --find-links URL/find-links.html)
//	  simple/index.html              PEP 503 root: one link per project ("vexl/", "vexl-plugin/")
//	  simple/vexl-plugin/index.html  PEP 503 project page: every wheel of that project, every version
//	  releases/0.2.0/…               every asset of 0.2.0, byte for byte as given
//	  releases/0.3.0/FILE.whl        a wheel
//	  releases/0.3.0/FILE.whl.metadata  its .dist-info/METADATA (PEP 658/714)
//
// Version folders are named by the normalised PEP 440 version. Project pages
// are named by the normalised (PEP 503) distribution name of each wheel,
// from its file name. A link on a project page (or on find-links.html) is
//
//	<a href="../../releases/0.3.0/FILE.whl#sha256=HEX" data-requires-python="&gt;=3.8"
//	   data-dist-info-metadata="sha256=M" data-core-metadata="sha256=M">FILE.whl</a>
//
// where HEX is the wheel's sha256, M that of FILE.whl.metadata, and
// data-requires-python is the wheel's Requires-Python (omitted when it has
// none). Every link is relative, so the channel can be served under any URL
// prefix; URL path segments are percent-escaped and attribute values
// HTML-escaped. Pages are a pure function of channel.json: the same state
// gives the same bytes. PEP 691 JSON is not served: a static server cannot
// negotiate content types, and installers fall back to the HTML pages.
//
// channel.json (format "mkrelease-channel/2", keys in a fixed order, two-space
// indentation, a trailing newline) is [State]: the project, the generation
// number, when the generation was published (RFC 3339, UTC, to the second),
// the newest version, and for each version (ascending, PEP 440) its
// assets (name, sha256, size) and its wheels (file, normalised project,
// Requires-Python, sha256 and size of the .metadata file). A channel whose
// channel.json is of format "mkrelease-channel/1" (unsigned, made by an
// earlier mkrelease) is refused: its versions are published again into a
// new channel.
//
// # Signed state: rollback and fork
//
// Each generation's channel.json is signed: channel.intoto.jsonl is the
// DSSE envelope of an in-toto Statement v1 whose one subject is
// channel.json with its sha256, of predicate type [StatePredicateType],
// whose predicate repeats channel.json's project, generation, published
// and newest. Publish signs it with Release.Signer (the key that signs
// the release's verification summary). The signature binds the generation
// number to the channel's whole content: channel.json lists every file of
// the generation with its sha256, and [Verify] checks every file against
// it. So an attacker without the key cannot raise a generation's number,
// nor pair an old generation's files with a newer channel.json (the files
// it lists are not there), nor sign a state of their own.
//
// What a signature cannot show is that a generation is the newest: DEST
// pointed back at an older generation (or a whole older copy served) is
// a signed, consistent channel (a rollback, or a freeze when it is kept
// there). A client recognises it only against a state it saw before: a
// [Checkpoint] (the project, the generation, the time, channel.json's
// sha256, the key that signed it and a digest of each version's assets)
// taken from a channel that verified ([Report.Checkpoint]). Given one
// ([VerifyOptions.Since]), Verify refuses (CheckRollback) a channel of
// a lower generation (rollback), of the same generation with another
// channel.json (a fork: two states under one number), or of a higher
// generation that lacks a version the checkpoint records or lists it with
// other assets (a published version never changes or goes). mkrelease
// verify keeps the last checkpoint of each channel folder it verified in
// the cache folder ([RememberedFile]), or reads and writes the files named
// by --since and --save-state.
//
// Publish refuses (RuleStateNotVerified) a channel whose current state's
// statement is missing, signed by no trusted key (Release.TrustedKeys, or
// the Signer's own key), or not matching its channel.json; and
// (RuleRollback) one older than, or forked from, Release.Seen, the state
// the publisher kept from its last publish or verify (Result.Checkpoint).
// Both are checked before anything is written, and again under the lock.
// The new generation is the current one's number plus one, so the
// generations a channel shows only go up. An empty channel (DEST missing or
// an empty folder, no generations beside it) where Release.Seen records a
// generation is not refused: it shows nothing older and nothing old is
// signed again. Publish starts it again after that generation
// (Plan.Restart; a fresh clone of a project whose channel is a folder in it
// does this), so a client that verified the old channel still checks the
// new one for every version it saw. Generations beside DEST newer
// than the one it shows are leftovers of killed publishes to the publish
// that follows (they were never shown), so a rollback done before a
// publish on a machine that kept no state is not recognised by that
// publish: the generation it makes has a number a client saw with other
// content, which the client's checkpoint refuses as a fork.
//
// # Generations: one rename publishes
//
// DEST is a symbolic link to a generation folder beside it:
//
//	PARENT/DEST -> .DEST.generations/g-000007
//	PARENT/.DEST.generations/g-000007/   the complete channel shown now
//	PARENT/.DEST.generations/g-000006/   the previous one, kept
//	PARENT/.DEST.lock                    flock(2)ed by every publish
//
// Generations are never changed once complete. A publish takes the lock,
// removes what a killed publish left (temporary generations
// ".g-NNNNNN.tmp-*", folders being collected ".trash-*", complete
// generations newer than the one DEST shows, and the temporary link
// ".DEST.link-tmp"), then builds the next generation in a temporary folder
// beside the others: the files of every published version are hard-linked
// from the current generation (copied, and checked against their sha256,
// where linking fails), the new version's assets are copied and checked
// against the digests planned, the .metadata files, the pages and
// channel.json are written, every file and folder is fsynced, and the folder
// is renamed to g-NNNNNN. Then a new symlink is made under the temporary name
// and rename(2)d over DEST, and PARENT is fsynced: that rename is the one
// moment the channel changes, so a reader, or a kill at any moment, sees the
// whole old channel or the whole new one. Afterwards generations older than
// the previous one are moved aside (".trash-g-NNNNNN") and removed; a kill
// while collecting leaves only garbage the next publish removes.
//
// Publishing needs that rename of a link over a link: it works on Linux and
// macOS, and is refused on Windows (a *UsageError saying so), where
// [Verify] still audits a channel.
//
// A first publish creates DEST as such a link (where DEST is missing or an
// empty folder). Any other DEST (a non-empty real folder, a file, a link
// elsewhere) was not made by mkrelease and is refused with the reason.
//
// # Rules
//
// Publishing is refused (*RefusedError, exit code 1) when:
//
//   - the version (compared by PEP 440, so "1.0" is "1.0.0") is already
//     published with a different set of assets or different bytes
//     (RuleDifferentAssets, naming each asset that differs); the same bytes
//     of the same assets is a no-op, reported as such (Result.NoOp), and no
//     generation is made;
//   - the version is lower than the newest published and
//     Release.AllowDowngrade is false (RuleDowngrade);
//   - the channel holds another project (RuleOtherProject);
//   - DEST is not a channel made by mkrelease (RuleNotChannel);
//   - the channel's signed state does not verify (RuleStateNotVerified);
//   - the channel is older than, or forked from, Release.Seen
//     (RuleRollback).
//
// A release without Release.Signer is a *UsageError.
//
// A release that cannot be published as given is a *UsageError (exit code
// 2): an invalid project name or version, no assets or no wheel among them,
// an asset that is missing, not a regular file, listed twice (by base name),
// named with a leading "." or with characters a checksum file cannot list,
// or named like the .metadata file of a wheel; a wheel whose file name does
// not parse, whose version is not the release's, or whose METADATA is
// missing, unparsable, for another name or version, or has an invalid
// Requires-Python; an asset whose digest is given in Release.Known with a
// malformed sha256, for another name, or with a size other than the file's
// (it changed since). The wheels themselves are otherwise not checked here:
// the caller audits the release's assets (package audit) before publishing.
//
// [Open] and [Channel.Plan] give the facts a policy gate evaluates before
// publishing ([Plan]: same version published, identical or not and which
// assets differ, lower than the newest); [Publish] works them out again
// under the lock and decides by [Plan.Refusal].
//
// # Digests
//
// A publish reads each new asset whole twice: once to hash it for the plan
// (as [Channel.Plan] does too), once to copy it into the new generation,
// checking the copied bytes against the planned digest. A caller that has
// already hashed the assets (when it loaded and verified the release
// folder) hands the digests over in Release.Known: the plan then trusts
// them and the only whole read is the copy (a wheel's METADATA member is
// still read for its page), which still refuses a file whose bytes are not
// the ones planned, so the channel never holds an asset its channel.json
// does not describe.
//
// # Verification
//
// [Verify] audits a channel and reports every finding, each naming the file
// (relative to DEST) and the check ([Finding]); see the Check* constants.
//
// # Fault injection
//
// Publish calls testhook.Crash at 27 named points; a binary built with the
// mkrelease_testhooks build tag kills itself with SIGKILL at the one named
// by MKRELEASE_TEST_CRASH_AT (without the tag the calls compile to
// nothing). Publish also calls testhook.Count("copy", SRC) for each file
// it copies into a generation (a new asset, or a file of the current
// generation that could not be hard-linked), so a test can count the reads.
// In the order a publish reaches them, the crash points are:
//
//	publish/locked                the lock is held
//	cleanup/removed-link          the leftover temporary link is removed
//	cleanup/removed               after each leftover in the generations folder
//	cleanup/synced                after the folders are synced
//	stage/created                 the temporary generation folder exists
//	stage/linked                  after each file hard-linked from the current generation
//	stage/copy-partial            a new asset is partly written, not yet synced or renamed
//	stage/copied                  after each new asset is committed
//	stage/metadata                after each .metadata file
//	stage/simple-root             simple/index.html written
//	stage/simple-project          after each project page
//	stage/find-links              find-links.html written
//	stage/index                   index.html written
//	stage/state                   channel.json written
//	stage/signed                  channel.intoto.jsonl written
//	stage/synced                  every folder of the new generation synced
//	stage/renamed                 the generation renamed to g-NNNNNN
//	stage/synced-generations      the generations folder synced
//	switch/link-created           the new link exists under its temporary name
//	switch/removed-empty-dest     an empty folder DEST was removed (first publish only)
//	switch/before-rename          just before the rename over DEST
//	switch/renamed                just after it: the new state is visible
//	switch/synced                 DEST's folder synced
//	gc/moved-aside                after each old generation is renamed aside
//	gc/removed                    after each is removed
//	gc/synced                     the generations folder synced
//	publish/done                  just before Publish returns
package channel
