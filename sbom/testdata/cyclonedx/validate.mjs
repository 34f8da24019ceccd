// Validates CycloneDX 1.6 JSON documents against the official schema with
// the CycloneDX project's own library (@cyclonedx/cyclonedx-library's
// JsonStrictValidator, over ajv with its format checks): a validator that is
// not mkrelease's. sbom's tests run it; scripts/bootstrap installs the
// pinned packages (package-lock.json) with npm ci.
//
//   node validate.mjs FILE...
//
// Exit status 0: every file is valid; 1: some file is not (the errors are
// printed as JSON on stderr); 2: bad usage, or the library is missing.
import { readFile } from 'node:fs/promises'

let lib
try {
  lib = await import('@cyclonedx/cyclonedx-library')
} catch (e) {
  console.error(`validate.mjs: @cyclonedx/cyclonedx-library is not installed (run scripts/bootstrap): ${e.message}`)
  process.exit(2)
}
const { Spec, Validation } = lib

const files = process.argv.slice(2)
if (files.length === 0) {
  console.error('usage: node validate.mjs FILE...')
  process.exit(2)
}
const validator = new Validation.JsonStrictValidator(Spec.Version.v1dot6)
let failed = false
for (const file of files) {
  let errors
  try {
    errors = await validator.validate(await readFile(file, 'utf8'))
  } catch (e) {
    console.error(`${file}: ${e.message}`)
    process.exit(2)
  }
  if (errors === null) {
    console.log(`${file}: valid CycloneDX 1.6`)
  } else {
    failed = true
    console.error(`${file}: not valid CycloneDX 1.6: ${JSON.stringify(errors)}`)
  }
}
process.exit(failed ? 1 : 0)
