// What the SDK client tests share: TAP output, loading the official MCP
// SDK (or skipping when `npm ci` has not run in tests/sdk), and starting
// one of the integration tests' HTTP targets on a free port.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, writeFileSync,
  writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
// name daemon then, as tests/integration/sptest/policy.py does.
export function serverSection(name) {
  return process.geteuid() === 0 ? { name, run_as: 'daemon' } : { name };
}

export function finish() {
  console.log(`1..${count}`);
  process.exit(failures ? 1 : 0);
}

// The SDK's client, stdio transport and types, merged.  Only an SDK that
// is not installed at all is a skip (counted, with its reason); one that is
// installed but fails to load is a failure, not a skip.
const sdkDir = join(dirname(fileURLToPath(import.meta.url)),
  'node_modules', '@modelcontextprotocol', 'sdk');

export async function loadSdk() {
  if (!existsSync(join(sdkDir, 'package.json'))) {
    check('MCP SDK client # SKIP not installed: run `npm ci` in tests/sdk ' +
      '(contrib/bootstrap check does)', true);
    finish();
  }
  try {
    return {
      ...(await import('@modelcontextprotocol/sdk/client/index.js')),
      ...(await import('@modelcontextprotocol/sdk/client/stdio.js')),
      ...(await import('@modelcontextprotocol/sdk/types.js')),
    };
  } catch (e) {
    check('MCP SDK client loads (installed in ' + sdkDir + ')', false,
      String(e?.stack ?? e));
    finish();
  }
}

// tests/integration/SCRIPT on a free port, logging to DIR/LOGNAME as JSON
// lines; resolves to { port, log, proc }.
export function startTarget(dir, script, logName) {
  const log = join(dir, logName);
  writeFileSync(log, '');
  const proc = spawn('python3', [join(srcdir, 'tests/integration', script),
    '--log', log, '--lifetime', '3600'], { stdio: ['ignore', 'pipe', 'inherit'] });
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

// Until pred holds for a line of log, or ms pass; the lines then.
export async function waitFor(log, pred, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end && !jsonLines(log).some(pred))
    await new Promise((r) => setTimeout(r, 20));
  return jsonLines(log);
}

// sp was built with AddressSanitizer (the binary names __asan_init).
export function sanitized() {
  try {
    return readFileSync(sp).includes('__asan_init');
  } catch {
    return false;
  }
}

// DIR/NAME, mode 0600, holding text (a credential file).
export function writeSecret(dir, name, text) {
  const path = join(dir, name);
  const fd = openSync(path, 'w', 0o600);
  writeSync(fd, text);
  closeSync(fd);
  return path;
}
