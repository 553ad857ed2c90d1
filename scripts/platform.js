// Which prebuilt package this machine needs, and the message when no native binary loads.
// Used by index.js at require time (the package runs nothing at install time). CommonJS, no
// dependencies: it runs inside consumers' projects.
'use strict'
const { readFileSync } = require('node:fs')

/** The platforms a prebuilt binary is published for (package.json `napi.targets`). */
const SUPPORTED = [
  'linux-x64-gnu',
  'linux-x64-musl',
  'linux-arm64-gnu',
  'linux-arm64-musl',
  'darwin-x64',
  'darwin-arm64',
  'win32-x64-msvc',
]

function isMusl() {
  if (process.platform !== 'linux') return false
  try {
    return readFileSync('/usr/bin/ldd', 'utf8').includes('musl')
  } catch {
    const report = process.report?.getReport?.()
    return !report?.header?.glibcVersionRuntime
  }
}

/** `linux-x64-gnu`, `darwin-arm64`, `win32-x64-msvc`, ... (napi-rs' naming). Windows is always
 * `msvc`: the name official node.exe and Electron ask for (binding.js), whatever toolchain built
 * the binary. */
function platformTriple() {
  const { platform, arch } = process
  if (platform === 'linux') return `${platform}-${arch}-${isMusl() ? 'musl' : 'gnu'}`
  if (platform === 'win32') return `${platform}-${arch}-msvc`
  return `${platform}-${arch}`
}

/** The per-platform package that carries this machine's binary. */
function platformPackage() {
  return `@eddie/tools-native-${platformTriple()}`
}

/** Why nothing loaded, and the two ways out. */
function loadFailureMessage(cause) {
  const triple = platformTriple()
  const lines = [`@eddie/tools-native: no native binary loads on this machine (${triple}, Node ${process.version}).`]
  if (SUPPORTED.includes(triple)) {
    lines.push(
      `It looked for the prebuilt package ${platformPackage()} (an optional dependency) and for a locally built eddie-tools-native.${triple}.node.`,
      'Ways out:',
      `  1. install the prebuilt binary: \`npm install ${platformPackage()}\` (it is skipped by --omit=optional, --no-optional and some lockfiles made on another platform);`,
      '  2. build it from source: install Rust (https://rustup.rs), clone the repository, run `npm install && npm run build` in the clone, then `npm install /path/to/the/clone` in your project.',
    )
  } else {
    lines.push(
      `Prebuilt binaries exist for ${SUPPORTED.join(', ')} only; ${triple} is not supported.`,
      'Ways out:',
      '  1. run it on one of those platforms (a Linux container or WSL2 works);',
      '  2. build it from source on a platform you are porting to: install Rust, clone the repository, run `npm install && npm run build` in the clone, then `npm install /path/to/the/clone` in your project.',
    )
  }
  if (cause?.message) lines.push(`(first load error: ${cause.message.split('\n')[0]})`)
  return lines.join('\n')
}

module.exports = { SUPPORTED, platformTriple, platformPackage, loadFailureMessage }
