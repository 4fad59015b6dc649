'use strict';
// Debian packages the tests need (chromium, redis-server): a developer machine may have them; a fresh one
// (CI) does not, so they are installed with apt-get when missing: as root, or through password-less sudo,
// non-interactively.
const { spawn } = require('node:child_process');

/** Runs a command with its output passed through; resolves its exit code (127 when it cannot start). */
function run(command, args, env) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, ...env } });
    child.on('error', () => resolve(127));
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

/** apt-get update && apt-get install -y <packages>; resolves { root, ok, code }. */
async function aptInstall(packages, log = (line) => console.log(line)) {
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const env = { DEBIAN_FRONTEND: 'noninteractive' };
  const apt = (args) => (root ? run('apt-get', args, env) : run('sudo', ['-n', 'env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', ...args], env));
  log(`installing Debian's ${packages.join(', ')} (apt-get update && apt-get install -y ${packages.join(' ')}${root ? '' : ', through sudo -n'})`);
  const started = Date.now();
  const code = (await apt(['update'])) || (await apt(['install', '-y', ...packages]));
  if (code === 0) log(`${packages.join(', ')} installed in ${Math.round((Date.now() - started) / 1000)} s`);
  return { root, ok: code === 0, code };
}

module.exports = { aptInstall };
