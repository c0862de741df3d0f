// What the SDK client tests share: TAP output, loading the official MCP
// SDK (or skipping when `npm ci` has not run in tests/sdk), and starting
// one of the integration tests' HTTP targets on a free port.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const srcdir = process.env.SP_SRCDIR ?? '.';
export const sp = process.env.SP_BIN ?? './sp';
let count = 0;
let failures = 0;

export function check(name, cond, detail) {
  count++;
  console.log(`${cond ? 'ok' : 'not ok'} ${count} - ${name}`);
  if (!cond) {
    failures++;
    for (const l of String(JSON.stringify(detail)).split('\n'))
      console.log(`# ${l}`);
  }
}

// The policy's server section.  As root, sp mcp drops the executor to
// server.run_as, a user of its own (the frontend is nobody): the tests
// name daemon then, as tests/integration/proc_lib.py does.
export function serverSection(name) {
  return process.geteuid() === 0 ? { name, run_as: 'daemon' } : { name };
}

export function finish() {
  console.log(`1..${count}`);
  process.exit(failures ? 1 : 0);
}

// The SDK's client, stdio transport and types, merged; a skipped test and
// the end of the run when they are not installed.
export async function loadSdk() {
  try {
    return {
      ...(await import('@modelcontextprotocol/sdk/client/index.js')),
      ...(await import('@modelcontextprotocol/sdk/client/stdio.js')),
      ...(await import('@modelcontextprotocol/sdk/types.js')),
    };
  } catch (e) {
    check('MCP SDK client # SKIP run `npm ci` in tests/sdk ' +
      '(contrib/bootstrap check does)', true);
    finish();
  }
}

// tests/integration/SCRIPT on a free port, logging to DIR/LOGNAME as JSON
// lines; resolves to { port, log, proc }.
export function startTarget(dir, script, logName) {
  const log = join(dir, logName);
  writeFileSync(log, '');
  const proc = spawn('python3', [join(srcdir, 'tests/integration', script),
    '--log', log, '--lifetime', '60'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: proc.stdout });
    rl.once('line', (l) => resolve({ port: Number(l), log, proc }));
    proc.once('exit', () => reject(new Error('the HTTP target did not start')));
  });
}

// The target's log so far, one object per line.
export function jsonLines(log) {
  return readFileSync(log, 'utf8').split('\n').filter((l) => l)
    .map((l) => JSON.parse(l));
}
