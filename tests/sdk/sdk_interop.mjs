// The official MCP TypeScript SDK client (the version tests/sdk pins)
// against the real `sp mcp` with max_inflight 1, for what sdk_client.mjs
// does not cover: the negotiated version is one the SDK supports; ping;
// an unknown tool and an unknown method are JSON-RPC errors with the
// codes the SDK reports (-32602, -32601); a callTool aborted through an
// AbortSignal while it fills the in-flight table sends
// notifications/cancelled, which reaches the target (the slow request is
// aborted) and gets no answer, and a ping right after it is answered at
// once; structured results of several calls pass the SDK's outputSchema
// check; close() ends sp with status 0 before the SDK's SIGTERM.  Prints TAP.
import { mkdtempSync, openSync, writeFileSync, closeSync, writeSync,
  mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check, finish, loadSdk, sanitized, serverSection, sp, startTarget,
  waitFor } from './sdk_lib.mjs';

const sdk = await loadSdk();

function writePolicy(dir, port) {
  const token = join(dir, 'api.token');
  const fd = openSync(token, 'w', 0o600);
  writeSync(fd, 'sdk-interop-secret-5e17\n');
  closeSync(fd);
  const policy = {
    sallyport: 1,
    server: serverSection('sdk-interop'),
    limits: { call_timeout_ms: 8000, max_inflight: 1 },
    audit: { path: join(dir, 'audit.jsonl') },
    credentials: { 'api-token': { type: 'bearer', file: token } },
    targets: { api: { type: 'http', base_url: `http://127.0.0.1:${port}`,
      credential: 'api-token' } },
    tools: [{ name: 'fetch', description: 'Fetch a path of the target.',
      target: 'api', scope: 'read',
      http: { method: 'GET', path: '/{a}/{b}' },
      params: { a: { type: 'string', maxLength: 32 },
        b: { type: 'string', maxLength: 32 } } }],
    profiles: { default: { scopes: ['read'] } },
  };
  const path = join(dir, 'policy.json');
  writeFileSync(path, JSON.stringify(policy));
  return path;
}

async function rpcError(promise) {
  try {
    await promise;
    return null;
  } catch (e) {
    return e;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'sp-sdk-interop-'));
mkdirSync(join(dir, 'cwd'));
const target = await startTarget(dir, 'front_target.py', 'events.jsonl');
const transport = new sdk.StdioClientTransport({
  command: sp, args: ['mcp', '--config', writePolicy(dir, target.port)],
  cwd: join(dir, 'cwd'), stderr: 'pipe',
});
let stderr = '';
transport.stderr?.on('data', (d) => { stderr += d; });
const client = new sdk.Client({ name: 'sallyport-sdk-interop', version: '1.0.0' });
let child;
try {
  await client.connect(transport);
  child = transport._process;	// to read its exit status after close()
  check('initialize: the SDK accepted the server and its version',
    client.getServerVersion()?.name === 'sdk-interop' &&
    client.getServerCapabilities()?.tools?.listChanged === false,
    [client.getServerVersion(), client.getServerCapabilities()]);
  check('ping is answered', JSON.stringify(await client.ping()) === '{}');

  const unknownTool = await rpcError(client.callTool({ name: 'no_such',
    arguments: {} }));
  check('an unknown tool is an McpError -32602 naming the tools',
    unknownTool instanceof sdk.McpError && unknownTool.code === -32602 &&
    unknownTool.message.includes('fetch'), String(unknownTool));
  const unknownMethod = await rpcError(client.request(
    { method: 'resources/list', params: {} }, sdk.ListResourcesResultSchema));
  check('an unknown method is an McpError -32601',
    unknownMethod instanceof sdk.McpError && unknownMethod.code === -32601,
    String(unknownMethod));

  await client.listTools();	// the SDK caches outputSchema validators
  const quick = [];
  for (const b of ['a"b', 'n\u00e9', '%2e%2e'])
    quick.push(await client.callTool({ name: 'fetch', arguments: { a: 'x', b } }));
  check('three calls one after another: each ok and structured',
    quick.every((r) => r.isError === false &&
      r.structuredContent?.outcome === 'ok' &&
      r.structuredContent?.external_data === true), quick);

  // The slow call fills the table (max_inflight 1); abort it.
  const ac = new AbortController();
  const slow = rpcError(client.callTool({ name: 'fetch',
    arguments: { a: 'slow', b: '5000' } }, undefined, { signal: ac.signal }));
  await waitFor(target.log, (e) => e.path === '/slow/5000', 3000);
  const t0 = Date.now();
  ac.abort('user "stop"');
  const aborted = await slow;
  await client.ping();
  const waited = Date.now() - t0;
  check('an aborted callTool rejects, and a ping right after is answered ' +
    'at once although the table is full', aborted !== null && waited < 2000,
  [String(aborted), waited]);
  const seen = await waitFor(target.log, (e) => e.event === 'aborted', 3000);
  check('... the cancel reached the target: the slow request was aborted',
    seen.some((e) => e.event === 'aborted' && e.path === '/slow/5000') &&
    !seen.some((e) => e.event === 'answered'), seen);
  const after = await client.callTool({ name: 'fetch',
    arguments: { a: 'after', b: 'cancel' } });
  check('... and the next call runs', after.isError === false &&
    after.structuredContent?.outcome === 'ok', after);
} catch (e) {
  check('the SDK session ran without an exception', false, `${e.stack}\n${stderr}`);
} finally {
  const t1 = Date.now();
  await client.close();
  // The SDK ends stdin, waits 2 s, then sends SIGTERM: sp must end first.
  // Under ASan a sandboxed process cannot exit cleanly (its exit path
  // makes a call the filter kills; tests/integration/sptest/run.py
  // sanitized_build), so there only the time and the absence of the
  // SDK's signals are checked.
  const clean = sanitized() ? !['SIGTERM', 'SIGKILL'].includes(child?.signalCode)
    : child?.exitCode === 0 && child?.signalCode === null;
  check('close() ends sp at end of input, status 0, before the SDK ' +
    'resorts to SIGTERM', clean && Date.now() - t1 < 2000,
  [child?.exitCode, child?.signalCode, stderr]);
  target.proc.kill();
}
finish();
