'use strict';
// Shared by the benchmarks: the loopback server child, statistics, and the result line run-all.js reads.
const { fork, spawnSync } = require('node:child_process');
const path = require('node:path');

/** Starts bench/lib/server.js in a child process; resolves to { url, pid, stats(), capture(), stop() }. */
function startServer() {
  const child = fork(path.join(__dirname, 'server.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waitFor = (key) =>
    new Promise((resolve) => {
      const on = (m) => {
        if (m && key in m) {
          child.off('message', on);
          resolve(m);
        }
      };
      child.on('message', on);
    });
  const ask = (what, key) => {
    const p = waitFor(key);
    child.send(what);
    return p;
  };
  return waitFor('port').then(({ port }) => ({
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    stats: () => ask('stats', 'bytes'),
    /** Arms the capture of the next request; resolves to { next }: a promise of its { type, length, body }. */
    capture: async () => {
      const next = waitFor('captured').then((m) => m.captured);
      await ask('capture', 'capturing');
      return { next };
    },
    stop: () => new Promise((resolve) => {
      child.once('exit', resolve);
      child.send('stop');
    }),
  }));
}

/**
 * For a benchmark that takes baselines after a GC: when started without --expose-gc, runs the script
 * again with it (and with the Node flags it was given, e.g. --cpu-prof or --trace-gc), then exits.
 */
function exposeGc(file) {
  if (typeof global.gc === 'function') return;
  const r = spawnSync(process.execPath, [...process.execArgv, '--expose-gc', file, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Command-line options as `--name value` (numbers when numeric), over defaults. */
function options(defaults, argv = process.argv.slice(2)) {
  const o = { ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([\w-]+)$/.exec(argv[i]);
    if (!m) continue;
    const key = m[1].replace(/-(\w)/g, (_, c) => c.toUpperCase());
    const value = argv[i + 1] === undefined || argv[i + 1].startsWith('--') ? true : argv[++i];
    o[key] = typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
  }
  return o;
}

const MB = 1024 * 1024;
const mb = (bytes) => `${(bytes / MB).toFixed(1)} MB`;
const num = (n, digits = 0) => Number(n).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** Prints the rows run-all.js collects into its table: one JSON line, marked. */
function result(name, rows) {
  console.log(`BENCH_RESULT ${JSON.stringify({ name, rows })}`);
}

/** Runs a benchmark from the command line: options from argv, its result line for run-all.js, exit code 1 on failure. */
function main(name, run) {
  run(options({}))
    .then((r) => result(name, r.rows))
    .catch((err) => {
      console.error(err);
      // A failed benchmark may leave servers and runtimes open: end the process, so run-all.js goes on.
      process.exit(1);
    });
}

/**
 * node-red-node-test-helper wraps Node.prototype.send/status/log/... and the runtime's log in sinon spies
 * that record every call for ever: test instrumentation, not Node-RED, and under 100,000 msgs a growing
 * heap. The benchmarks take them off once the flow is loaded. A node with wires keeps its own copy of
 * send (Node.js: this.send = Node.prototype.send), so that is put back on each node too.
 */
function unspy(helper, ids) {
  const proto = helper._NodePrototype;
  const wrapped = Object.getOwnPropertyNames(proto).filter((m) => typeof proto[m] === 'function' && proto[m].callCount !== undefined).map((m) => [m, proto[m]]);
  helper._sandbox.restore();
  for (const id of ids) {
    const node = helper.getNode(id);
    for (let p = node; p && p !== proto; p = Object.getPrototypeOf(p)) {
      for (const [m, spy] of wrapped) if (Object.prototype.hasOwnProperty.call(p, m) && p[m] === spy) p[m] = proto[m];
    }
  }
}

module.exports = { main, exposeGc, unspy, startServer, median, sleep, options, mb, num, MB, result };
