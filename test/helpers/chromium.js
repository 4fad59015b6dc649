'use strict';
// Debian's Chromium for the browser tests (test/browser.test.js), driven by playwright-core.
// A developer machine may have it already at /usr/bin/chromium; a fresh one (CI) does not, so it is
// installed with apt-get when missing: as root, non-interactively. If that is not possible (not root,
// no password-less sudo, no network), the browser tests are skipped with a message saying why; as root a
// failed install is an error, so that CI does not pass without having run them.
const fs = require('node:fs');
const { aptInstall } = require('./apt');

const EXECUTABLE = '/usr/bin/chromium';

/** Chromium's flags: headless, no sandbox (containers, root), nothing that reaches out to the network. */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** apt-get install -y chromium (test/helpers/apt.js). */
async function install(log) {
  log(`browser tests: ${EXECUTABLE} is missing`);
  const result = await aptInstall(['chromium'], (line) => log(`browser tests: ${line}`));
  return { ...result, ok: result.ok && fs.existsSync(EXECUTABLE) };
}

/**
 * Makes sure Chromium is there. Resolves { executablePath, args } to launch it with, or { skip } with the
 * reason the tests cannot run; rejects when the install failed as root.
 */
async function ensureChromium({ log = (line) => console.log(line) } = {}) {
  if (fs.existsSync(EXECUTABLE)) return { executablePath: EXECUTABLE, args: ARGS };
  const result = await install(log);
  if (result.ok) return { executablePath: EXECUTABLE, args: ARGS };
  if (result.root) throw new Error(`installing chromium with apt-get failed (exit code ${result.code}); the browser tests need ${EXECUTABLE}`);
  return { skip: `${EXECUTABLE} is missing and could not be installed without root (apt-get install -y chromium); the browser tests are skipped` };
}

/** Launches Chromium with a fresh temporary profile. */
async function launchChromium(chromium, found) {
  return chromium.launch({ executablePath: found.executablePath, args: found.args, headless: true });
}

module.exports = { ensureChromium, launchChromium, EXECUTABLE, ARGS };
