#!/usr/bin/env node
/** Standalone simulator: `node dist/simulator/cli.js [--port N] [--host H] [--trigger URL] [--any-key] [--verbose]`. */
import { DEMO_KEY, Simulator, type SimulatorOptions } from './index';

const USAGE = `Usage: node dist/simulator/cli.js [options]
  --port N        port to listen on (default 0: a free port)
  --host H        address to listen on (default 127.0.0.1)
  --trigger URL   VMN trigger URL that injected SMS are forwarded to
  --any-key       accept any non-empty api key
  --verbose       print one line per request and callback
`;

interface CliOptions {
  sim: SimulatorOptions;
  verbose: boolean;
}

function parseArgs(argv: string[]): CliOptions {
  const sim: SimulatorOptions = {};
  let verbose = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === '--port') {
      const port = Number(value());
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('--port must be 0 to 65535');
      sim.port = port;
    } else if (arg === '--host') sim.host = value();
    else if (arg === '--trigger') sim.vmnTriggerUrl = value();
    else if (arg === '--any-key') sim.acceptAnyKey = true;
    else if (arg === '--verbose') verbose = true;
    else if (arg === '--help' || arg === '-h') {
      process.stdout.write(USAGE);
      process.exit(0);
    } else throw new Error(`unknown option ${arg}`);
  }
  return { sim, verbose };
}

async function main(): Promise<void> {
  let options: CliOptions;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  const sim = new Simulator(options.sim);
  const urls = await sim.start();
  if (options.verbose) {
    // Fields are logged without api_key already; the body of a send is left out as it may be large.
    sim.on('request', (r) => console.log(`${new Date(r.at).toISOString()} ${r.method} ${r.endpoint} ${r.fields.method ?? ''}${r.fault ? ` fault=${r.fault}` : ''}`));
    sim.on('callback', (c) => console.log(`${new Date(c.at).toISOString()} callback ${c.kind} -> ${c.statusCode ?? c.error}`));
  }
  const origin = new URL(urls.messagingUrl).origin;
  console.log(`Service simulator listening
  messagingUrl  ${urls.messagingUrl}
  vmnUrl        ${urls.vmnUrl}
  obdUrl        ${urls.obdUrl}
  voiceUrl      ${urls.voiceUrl}
  api key       ${options.sim.acceptAnyKey ? 'any non-empty key' : DEMO_KEY}
  inject SMS    POST ${origin}/sim/sms   (from, message, number, keyword)
  add call      POST ${origin}/sim/calls (mobile, id, status, senttime)`);

  const shutdown = (): void => {
    sim.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((err) => {
  process.stderr.write(`simulator failed: ${(err as Error).message}\n`);
  process.exit(1);
});
