'use strict';
// The typed client as users get it: the package packed (npm pack, as it is published) and the tarball
// installed into a project of its own by npm test's setup (test/setup.js), copied here, and a small TypeScript consumer written against it, once as CommonJS
// and once as ESM, is compiled with the project's TypeScript (strict) and run against the simulator. Then
// a function node of a real Node-RED uses the client through functionExternalModules.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync, execFile } = require('node:child_process');
const run = require('node:util').promisify(execFile);
const { Simulator, DEMO_KEY } = require('../dist/simulator');
const { NodeRedProcess } = require('./helpers/node-red-process');
const { Recorder } = require('./helpers/recorder');
const { ROOT, waitFor } = require('./helpers/started-node-red');
const { CONSUMER_DIR } = require('./helpers/provisioned');

const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

const CONSUMER = `import { KaleyraClient, InputError, type SentMessage } from '@flowcomms/node-red-kaleyra';

const client = new KaleyraClient({ apiKey: process.env.KALEYRA_KEY!, messagingUrl: process.env.MESSAGING_URL!, obdUrl: process.env.OBD_URL! });
const sent: SentMessage[] = (await client.sendMessage({ from: '918000000000', to: '+91 98123 45678', body: 'Hello from TypeScript' })).payload;
const refused = await client.sendMessage({ from: '918000000000', to: '12', body: 'x' }).catch((err: unknown) => err);
const status = await client.callStatus('no-such-call').catch((err: { code?: string }) => err.code);
console.log(JSON.stringify({ id: sent[0]!.id, mobile: sent[0]!.mobile, refused: refused instanceof InputError ? refused.field : null, status }));
await client.close();
`;

describe('the typed client, packed and installed as users get it', function () {
  let dir;
  let tarball;
  let sim;
  let urls;

  before(async function () {
    // npm test's setup (test/setup.js) packed the package and installed the tarball into CONSUMER_DIR:
    // here it is copied (sources written below stay out of the setup's folder) and looked at.
    const written = path.join(CONSUMER_DIR, 'tarball.txt');
    if (!fs.existsSync(written)) throw new Error(`the packed package is not installed in ${CONSUMER_DIR}: npm test's setup does that (node test/setup.js)`);
    tarball = fs.readFileSync(written, 'utf8');
    const listed = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n');
    assert.ok(listed.includes('package/dist/index.d.ts'), 'the tarball carries the types');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kaleyra-consumer-'));
    fs.cpSync(CONSUMER_DIR, dir, { recursive: true });
    sim = new Simulator();
    urls = await sim.start();
  });

  after(async () => {
    await sim?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Compiles `file` (strict, nodenext) in the consumer project and runs the JavaScript it gives (not blocking: the simulator answers from this process). */
  async function compileAndRun(file, extra = {}) {
    const tsconfig = {
      compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'ES2022', types: ['node'], typeRoots: [path.join(ROOT, 'node_modules', '@types')], skipLibCheck: false, outDir: 'out', ...extra },
      files: [file],
    };
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
    await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: dir, encoding: 'utf8' });
    const out = path.join(dir, 'out', file.replace(/\.(m|c)?ts$/, (_, m) => `.${m ?? ''}js`));
    const env = { ...process.env, KALEYRA_KEY: DEMO_KEY, MESSAGING_URL: urls.messagingUrl, OBD_URL: urls.obdUrl };
    return JSON.parse((await run(process.execPath, [out], { cwd: dir, env, encoding: 'utf8' })).stdout.trim());
  }

  const expected = (r) => {
    assert.match(r.id, /\w+/);
    assert.equal(r.mobile, '+919812345678');
    assert.equal(r.refused, 'to', 'an InputError naming the field, before anything is sent');
    assert.equal(r.status, 'A416');
  };

  it('ESM: `import { KaleyraClient } from "@flowcomms/node-red-kaleyra"` compiles (strict) and runs against the simulator', async () => {
    fs.writeFileSync(path.join(dir, 'consumer.mts'), CONSUMER);
    expected(await compileAndRun('consumer.mts'));
  });

  it('CommonJS: the same code as a .cts module (await inside an async function) compiles and runs', async () => {
    const cjs = `${CONSUMER.replace(/^(import .*)$/m, '$1\nasync function main(): Promise<void> {').replace(/await client\.close\(\);\n$/, 'await client.close();\n}\nvoid main();\n')}`;
    fs.writeFileSync(path.join(dir, 'consumer.cts'), cjs);
    expected(await compileAndRun('consumer.cts'));
  });

  it('in a function node through functionExternalModules (the package installed in the user directory)', async function () {
    const collector = new Recorder();
    await collector.start();
    collector.reply = () => ({ body: 'ok' });
    // As after `npm install @flowcomms/node-red-kaleyra` in the user directory: the package and its dependencies there.
    const nr = new NodeRedProcess({
      name: 'function-node',
      settings: { functionExternalModules: true },
      env: { KALEYRA_KEY: DEMO_KEY, MESSAGING_URL: urls.messagingUrl, COLLECTOR: `${collector.url}/result` },
      flows: [
        { id: 't1', type: 'tab', label: 'typed client' },
        { id: 'go', type: 'inject', z: 't1', once: true, onceDelay: 0.5, props: [{ p: 'payload' }], payload: '', payloadType: 'date', wires: [['fn']] },
        {
          id: 'fn',
          type: 'function',
          z: 't1',
          libs: [{ var: 'kaleyra', module: '@flowcomms/node-red-kaleyra' }],
          func: "const client = new kaleyra.KaleyraClient({ apiKey: env.get('KALEYRA_KEY'), messagingUrl: env.get('MESSAGING_URL') });\nconst { payload } = await client.sendMessage({ from: '918000000000', to: '919812345678', body: 'from a function node' });\nawait client.close();\nmsg.payload = payload;\nmsg.url = env.get('COLLECTOR');\nreturn msg;",
          outputs: 1,
          wires: [['post']],
        },
        { id: 'post', type: 'http request', z: 't1', method: 'POST', ret: 'txt', url: '', paytoqs: 'ignore', wires: [[]] },
      ],
    });
    nr.userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kaleyra-function-node-'));
    // The user directory of a real install: package.json lists the package, node_modules holds it (the
    // consumer project's install above, tarball and dependencies). Node-RED 3 and later look there.
    fs.writeFileSync(path.join(nr.userDir, 'package.json'), JSON.stringify({ name: 'node-red-project', private: true, dependencies: { '@flowcomms/node-red-kaleyra': `file:${tarball}` } }));
    fs.cpSync(path.join(dir, 'node_modules'), path.join(nr.userDir, 'node_modules'), { recursive: true, dereference: false });
    try {
      await nr.start();
      await waitFor(() => collector.requests.length > 0, 'the function node to send and post its result', 60_000);
      const [sent] = JSON.parse(collector.last.raw.toString());
      assert.equal(sent.mobile, '919812345678');
      assert.match(sent.id, /\w+/);
    } finally {
      await nr.stop();
      nr.cleanup();
      await collector.stop();
    }
  });
});
