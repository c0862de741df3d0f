// The official v2 client (@modelcontextprotocol/client, the version
// tests/sdk pins) against the real `sp mcp` of the test build, in the two
// modes that probe with server/discover on a disposable sibling process
// ({ pin: '2026-07-28' } and 'auto'), then the v1 client
// (@modelcontextprotocol/sdk) on the legacy era (docs/design.md section
// 5).  For each v2 mode: the session speaks 2026-07-28; listTools; a
// call that reaches the target once; invalid arguments and an unknown
// tool that reach nothing; an aborted call whose cancel reaches the
// target; a call longer than the client's request timeout that completes
// because it carries a progress token (the test build shortens the
// progress interval with SP_TEST_PROGRESS_MS), while the same call without
// one is cut by that timeout; and one connect leaves one session in the
// audit log although two processes were started (the probe's sibling
// answered only server/discover).  The v1 client's long call completes
// on progress too.  Prints TAP.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync }
  from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, finish, jsonLines, loadSdk, sanitized, serverSection,
  startTarget,
  waitFor, writeSecret } from './sdk_lib.mjs';

const v1 = await loadSdk();
// As loadSdk(): not installed is a skip, installed but broken a failure.
let v2;
const v2Dir = join(dirname(fileURLToPath(import.meta.url)), 'node_modules',
  '@modelcontextprotocol', 'client');
if (!existsSync(join(v2Dir, 'package.json'))) {
  check('MCP v2 client # SKIP not installed: run `npm ci` in tests/sdk', true);
  finish();
}
try {
  v2 = { ...(await import('@modelcontextprotocol/client')),
    ...(await import('@modelcontextprotocol/client/stdio')) };
} catch (e) {
  check('MCP v2 client loads (installed in ' + v2Dir + ')', false,
    String(e?.stack ?? e));
  finish();
}

const spTest = join(process.env.SP_BUILDDIR ?? '.', 'tests', 'sp-test');
const PROGRESS_MS = 200;	// the test build's tick, not 15 s
const TIMEOUT_MS = 1500;	// the client's request timeout here
const SLOW_MS = 4 * TIMEOUT_MS;	// a call well past that timeout

function writePolicy(dir, port) {
  const token = writeSecret(dir, 'api.token', 'sdk-v2-secret-0b44\n');
  const policy = {
    sallyport: 1,
    server: serverSection('sdk-v2'),
    limits: { call_timeout_ms: 4 * SLOW_MS, max_inflight: 4 },
    audit: { path: join(dir, 'audit.jsonl') },
    credentials: { 'api-token': { type: 'bearer', file: token } },
    targets: { api: { type: 'http', base_url: `http://127.0.0.1:${port}`,
      credential: 'api-token' } },
    tools: [{ name: 'fetch', description: 'Fetch a path of the target.',
      target: 'api', scope: 'read',
      http: { method: 'GET', path: '/{a}/{b}' },
      params: { a: { type: 'string', maxLength: 32 },
        b: { type: 'string', maxLength: 32 } } },
    { name: 'get_item', description: 'Read one item.', target: 'api',
      scope: 'read', http: { method: 'GET', path: '/items/{id}' },
      params: { id: { type: 'integer', minimum: 1, maximum: 1000 } } }],
    profiles: { default: { scopes: ['read'] } },
  };
  const path = join(dir, 'policy.json');
  writeFileSync(path, JSON.stringify(policy));
  return path;
}

async function rejection(promise) {
  try {
    await promise;
    return null;
  } catch (e) {
    return e;
  }
}

// The command: a shell that notes each start in DIR/starts, then sp.
function serverParams(sdk, dir, config) {
  return {
    command: '/bin/sh',
    args: ['-c', `echo start >> '${join(dir, 'starts')}'; exec "$0" "$@"`,
      spTest, 'mcp', '--config', config],
    cwd: join(dir, 'cwd'), stderr: 'pipe',
    env: { ...sdk.getDefaultEnvironment(),
      SP_TEST_PROGRESS_MS: String(PROGRESS_MS) },
  };
}

function starts(dir) {
  try {
    return readFileSync(join(dir, 'starts'), 'utf8').split('\n')
      .filter((l) => l).length;
  } catch {
    return 0;
  }
}

function kinds(dir) {
  return jsonLines(join(dir, 'audit.jsonl')).map((r) => r.kind);
}

// callTool with request options: v1 takes a result schema before them,
// v2 does not.
function callTool(client, params, options) {
  return client instanceof v1.Client ?
    client.callTool(params, undefined, options) :
    client.callTool(params, options);
}

// What both clients must get from one tools/call past their timeout.
async function longCalls(label, client, target) {
  const seen = [];
  const t0 = Date.now();
  const done = await callTool(client, { name: 'fetch',
    arguments: { a: 'slow', b: String(SLOW_MS) } }, {
    timeout: TIMEOUT_MS, resetTimeoutOnProgress: true,
    onprogress: (p) => seen.push(p.progress),
  });
  check(`${label}: a call of ${SLOW_MS} ms under a ${TIMEOUT_MS} ms ` +
    'request timeout completes on progress',
  done.isError === false && done.structuredContent?.outcome === 'ok' &&
    Date.now() - t0 >= SLOW_MS, done);
  check(`${label}: ... progress came, each value above the last`,
    seen.length >= 3 && seen.every((v, i) => i === 0 || v > seen[i - 1]),
    seen);
  const cut = await rejection(callTool(client, { name: 'fetch',
    arguments: { a: 'slow', b: String(SLOW_MS + 1) } },
  { timeout: TIMEOUT_MS }));
  check(`${label}: the same call without a progress token is cut by the ` +
    'timeout', cut !== null && /timed out|timeout/i.test(String(cut)),
  String(cut));
  const cutPath = `/slow/${SLOW_MS + 1}`;
  const aborted = await waitFor(target.log, (e) => e.event === 'aborted' &&
    e.path === cutPath, SLOW_MS);
  check(`${label}: ... and the client's cancel reached the target`,
    aborted.some((e) => e.event === 'aborted' && e.path === cutPath),
    aborted.slice(-3));
}

async function v2Session(label, mode) {
  const dir = mkdtempSync(join(tmpdir(), 'sp-sdk-v2-'));
  mkdirSync(join(dir, 'cwd'));
  const target = await startTarget(dir, 'front_target.py', 'events.jsonl');
  const transport = new v2.StdioClientTransport(
    serverParams(v2, dir, writePolicy(dir, target.port)));
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; });
  const client = new v2.Client({ name: 'sallyport-sdk-v2', version: '1.0.0' },
    { versionNegotiation: { mode } });
  const requests = () => jsonLines(target.log).filter(
    (e) => e.event === 'request').length;
  try {
    await client.connect(transport);
    const list = await client.listTools();
    // the session's process may start its shell only when written to
    check(`${label}: the session speaks 2026-07-28, found by a probe on a ` +
      'second process', client.getNegotiatedProtocolVersion() ===
      '2026-07-28' && starts(dir) === 2 &&
      client.getServerVersion()?.name === 'sdk-v2',
    [client.getNegotiatedProtocolVersion(), starts(dir),
      client.getServerVersion()]);
    check(`${label}: listTools names the policy's tools in its order`,
      list.tools.map((t) => t.name).join() === 'fetch,get_item', list);
    const ok = await client.callTool({ name: 'fetch',
      arguments: { a: 'it"em', b: 'n\u00e9 $(x)' } });
    check(`${label}: a call is ok, structured, and reached the target once`,
      ok.isError === false && ok.structuredContent?.outcome === 'ok' &&
      requests() === 1, [ok, requests()]);
    const bad = await client.callTool({ name: 'get_item',
      arguments: { id: '-1' } });
    check(`${label}: invalid arguments are an invalid result`,
      bad.isError === true && bad.structuredContent?.outcome === 'invalid',
      bad);
    const unknown = await rejection(client.callTool({ name: 'no_such',
      arguments: {} }));
    check(`${label}: an unknown tool is a -32602 naming the tools`,
      unknown?.code === -32602 && String(unknown).includes('get_item'),
      String(unknown));
    check(`${label}: ... neither reached the target`, requests() === 1,
      requests());
    const ac = new AbortController();
    const slow = rejection(callTool(client, { name: 'fetch',
      arguments: { a: 'slow', b: '9000' } }, { signal: ac.signal }));
    await waitFor(target.log, (e) => e.path === '/slow/9000', 5000);
    ac.abort('user "stop"');
    const aborted = await slow;
    const seen = await waitFor(target.log, (e) => e.event === 'aborted' &&
      e.path === '/slow/9000', 5000);
    check(`${label}: an aborted call rejects and its cancel reaches the ` +
      'target', aborted !== null && seen.some((e) => e.event === 'aborted' &&
      e.path === '/slow/9000'), [String(aborted), seen.slice(-2)]);
    await longCalls(label, client, target);
  } catch (e) {
    check(`${label}: the session ran without an exception`, false,
      `${e.stack}\n${stderr}`);
  } finally {
    await client.close();
    const k = kinds(dir);
    // Under ASan a confined child cannot exit cleanly (its exit path
    // calls sigaltstack, which the filter kills), so the killed probe's
    // session does not end 0 and is audited: the normal build checks it.
    if (sanitized()) {
      check(`${label}: one connect, one session in the audit log # SKIP ` +
        'sanitizer build: its children cannot exit 0, so the probe is ' +
        'audited', true);
    } else check(`${label}: one connect, two processes, one session in the audit ` +
      'log', starts(dir) === 2 &&
      k.filter((x) => x === 'session-start').length === 1 &&
      k.filter((x) => x === 'session-end').length === 1 &&
      k[0] === 'session-start', [starts(dir), k]);
    target.proc.kill();
  }
}

async function v1Session() {
  const dir = mkdtempSync(join(tmpdir(), 'sp-sdk-v1-'));
  mkdirSync(join(dir, 'cwd'));
  const target = await startTarget(dir, 'front_target.py', 'events.jsonl');
  const transport = new v1.StdioClientTransport(
    serverParams(v1, dir, writePolicy(dir, target.port)));
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; });
  const client = new v1.Client({ name: 'sallyport-sdk-v1', version: '1.0.0' });
  try {
    await client.connect(transport);
    check('v1: the session speaks 2025-11-25 on one process',
      client.getServerVersion()?.name === 'sdk-v2' && starts(dir) === 1,
      [client.getServerVersion(), starts(dir)]);
    await longCalls('v1', client, target);
  } catch (e) {
    check('v1: the session ran without an exception', false,
      `${e.stack}\n${stderr}`);
  } finally {
    await client.close();
    const k = kinds(dir);
    check('v1: one session in the audit log', k[0] === 'session-start' &&
      k.filter((x) => x === 'session-start').length === 1, k);
    target.proc.kill();
  }
}

await v2Session('v2 pinned', { pin: '2026-07-28' });
await v2Session('v2 auto', 'auto');
await v1Session();
finish();
