'use strict';
// Debian's Chromium for the browser tests (test/browser.test.js), driven by playwright-core.
// A developer machine may have it already at /usr/bin/chromium; a fresh one (CI) does not, so it is
// installed with apt-get when missing: as root, non-interactively. If that is not possible (not root,
// no password-less sudo, no network), the browser tests are skipped with a message saying why; as root a
// failed install is an error, so that CI does not pass without having run them.
const fs = require('node:fs');
const { spawn } = require('node:child_process');

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

/** Runs a command with its output passed through; resolves its exit code (127 when it cannot start). */
function run(command, args, env) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, ...env } });
    child.on('error', () => resolve(127));
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

/** apt-get update && apt-get install -y chromium, as root or else through password-less sudo. */
async function install(log) {
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const env = { DEBIAN_FRONTEND: 'noninteractive' };
  const apt = (args) => (root ? run('apt-get', args, env) : run('sudo', ['-n', 'env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', ...args], env));
  log(`browser tests: ${EXECUTABLE} is missing; installing Debian's chromium (apt-get update && apt-get install -y chromium${root ? '' : ', through sudo -n'})`);
  const started = Date.now();
  const code = (await apt(['update'])) || (await apt(['install', '-y', 'chromium']));
  if (code === 0 && fs.existsSync(EXECUTABLE)) {
    log(`browser tests: chromium installed in ${Math.round((Date.now() - started) / 1000)} s`);
    return { root, ok: true };
  }
  return { root, ok: false, code };
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
