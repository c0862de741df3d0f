// The official MCP TypeScript SDK client (tests/sdk/package.json pins the
// version; `contrib/bootstrap check` runs `npm ci` here) drives the real
// `sp mcp` over StdioClientTransport: initialize, listTools, callTool
// with good arguments against a local HTTP target (structuredContent
// validated by the SDK against the tool's outputSchema) and with bad
// arguments (isError).  Prints TAP.
import { mkdtempSync, openSync, writeFileSync, closeSync, writeSync,
  mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check, finish, jsonLines as requests, loadSdk, serverSection, sp,
  startTarget } from './sdk_lib.mjs';

const sdk = await loadSdk();

function writePolicy(dir, port) {
  const token = join(dir, 'api.token');
  const fd = openSync(token, 'w', 0o600);
  writeSync(fd, 'sdk-test-secret-91c2\n');
  closeSync(fd);
  const policy = {
    sallyport: 1,
    server: serverSection('sdk-test'),
    limits: { call_timeout_ms: 5000 },
    audit: { path: join(dir, 'audit.jsonl') },
    credentials: { 'api-token': { type: 'bearer', file: token } },
    targets: { api: { type: 'http', base_url: `http://127.0.0.1:${port}`,
      credential: 'api-token' } },
    tools: [{ name: 'get_item', description: 'Read one item.',
      target: 'api', scope: 'read',
      http: { method: 'GET', path: '/items/{id}' },
      params: { id: { type: 'integer', minimum: 1, maximum: 1000 } } },
    { name: 'get_status', description: 'Ask the target for one status.',
      target: 'api', scope: 'read',
      http: { method: 'GET', path: '/status/{code}' },
      params: { code: { type: 'integer', minimum: 200, maximum: 599 } } }],
    profiles: { default: { scopes: ['read'] } },
  };
  const path = join(dir, 'policy.json');
  writeFileSync(path, JSON.stringify(policy));
  return path;
}

const dir = mkdtempSync(join(tmpdir(), 'sp-sdk-'));
mkdirSync(join(dir, 'cwd'));
const target = await startTarget(dir, 'http_target.py', 'requests.jsonl');
// No --profile: Node gives the child a socketpair as stdin, and a client
// of our own uid must still get "default" (broker/peer.h).
const transport = new sdk.StdioClientTransport({
  command: sp, args: ['mcp', '--config', writePolicy(dir, target.port)],
  cwd: join(dir, 'cwd'), stderr: 'pipe',
});
let stderr = '';
transport.stderr?.on('data', (d) => { stderr += d; });
const client = new sdk.Client({ name: 'sallyport-sdk-test', version: '1.0.0' });
try {
  await client.connect(transport);
  check('initialize: the SDK accepts the server',
    client.getServerVersion()?.name === 'sdk-test', client.getServerVersion());
  check('... and tools are a capability', client.getServerCapabilities()?.tools !== undefined,
    client.getServerCapabilities());

  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === 'get_item');
  check('listTools: get_item with an inputSchema and an outputSchema',
    tools.length === 2 && tool?.inputSchema?.type === 'object' &&
    tool?.outputSchema?.type === 'object', tools);

  const good = await client.callTool({ name: 'get_item', arguments: { id: 42 } });
  check('callTool with good arguments: outcome ok, not an error',
    good.isError !== true && good.structuredContent?.outcome === 'ok', good);
  const seen = requests(target.log);
  check('... and the target saw exactly that request once',
    seen.length === 1 && seen[0].path === '/items/42', seen);
  check('... the text block is the structuredContent, compact',
    good.content?.[0]?.type === 'text' &&
    good.content[0].text === JSON.stringify(good.structuredContent), good.content);

  const before = requests(target.log).length;
  const bad = await client.callTool({ name: 'get_item', arguments: { id: 'x"$(id)' } });
  check('callTool with bad arguments: isError with outcome invalid',
    bad.isError === true && bad.structuredContent?.outcome === 'invalid', bad);
  check('... and nothing reached the target', requests(target.log).length === before,
    requests(target.log));
  const zero = await client.callTool({ name: 'get_item', arguments: { id: 0 } });
  check('callTool below the minimum: isError, invalid',
    zero.isError === true && zero.structuredContent?.outcome === 'invalid', zero);

  // An answered request with an error status is no success to a model.
  for (const code of [404, 500, 201]) {
    const r = await client.callTool({ name: 'get_status', arguments: { code } });
    check(`callTool answered ${code}: outcome ok, isError ${code >= 400}`,
      r.isError === (code >= 400) && r.structuredContent?.outcome === 'ok' &&
      r.structuredContent?.http?.status === code, r);
  }
  const asked = requests(target.log).filter((q) => q.path.startsWith('/status/'));
  check('... and the target saw each status request once',
    asked.map((q) => q.path).join() === '/status/404,/status/500,/status/201', asked);
} catch (e) {
  check('the SDK session ran without an exception', false, `${e.stack}\n${stderr}`);
} finally {
  await client.close();
  target.proc.kill();
}
finish();
