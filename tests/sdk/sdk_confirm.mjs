// Human confirmation through the official MCP TypeScript SDK client
// (docs/design.md section 8.2): the client declares form elicitation and
// answers each elicitation/create with its handler, as a human would.
// Accepting with the right retyped value reaches the HTTP target exactly
// once; a wrong value, a decline, a cancel, no answer before the tool's
// timeout_s, a client without the capability and a call the client
// cancels while it waits each reach it zero times, end denied, and say
// why; a read call in the same session runs while a confirmation waits.
// The v2 client pinned to 2026-07-28 gets the question in an
// input_required result and retries with the answer; without elicitation
// it gets the revision's error -32021 (MissingRequiredClientCapability),
// zero requests.
// Each case posts to its own path, so the target's log counts it alone.
// Prints TAP.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check, finish, jsonLines as requests, loadSdk, serverSection, sp,
  startTarget, writeSecret } from './sdk_lib.mjs';

const sdk = await loadSdk();

function writePolicy(dir, port) {
  const token = writeSecret(dir, 'api.token', 'sdk-confirm-secret-7d41\n');
  const create = (name, confirm) => ({
    name, description: 'Create an item.', target: 'api', scope: 'write',
    mutating: true, confirm,
    http: { method: 'POST', path: '/items/{tag}',
      body: { name: '{name}', qty: '{qty}' } },
    params: { tag: { type: 'string', maxLength: 32 },
      name: { type: 'string', maxLength: 80 },
      qty: { type: 'integer', minimum: 1, maximum: 100 } },
  });
  const policy = {
    sallyport: 1,
    server: serverSection('sdk-confirm'),
    limits: { call_timeout_ms: 10000 },
    audit: { path: join(dir, 'audit.jsonl') },
    credentials: { 'api-token': { type: 'bearer', file: token } },
    targets: { api: { type: 'http', base_url: `http://127.0.0.1:${port}`,
      credential: 'api-token' } },
    tools: [
      create('create_item', { message: 'Create {qty} x {name} ({tag})',
        retype: 'qty', timeout_s: 60 }),
      create('create_quick', { retype: 'qty', timeout_s: 2 }),
      create('create_plain', true),
      { name: 'get_item', description: 'Read one item.', target: 'api',
        scope: 'read', http: { method: 'GET', path: '/items/{id}' },
        params: { id: { type: 'string', maxLength: 64 } } },
    ],
    profiles: { default: { scopes: ['read', 'write'] } },
  };
  const path = join(dir, 'policy.json');
  writeFileSync(path, JSON.stringify(policy));
  return path;
}

const dir = mkdtempSync(join(tmpdir(), 'sp-sdk-confirm-'));
mkdirSync(join(dir, 'cwd'));
const target = await startTarget(dir, 'http_target.py', 'requests.jsonl');
const config = writePolicy(dir, target.port);
const posts = (tag) => requests(target.log)
  .filter((q) => q.method === 'POST' && q.path === `/items/${tag}`);
const decisions = () => readFileSync(join(dir, 'audit.jsonl'), 'utf8')
  .split('\n').filter((l) => l).map((l) => JSON.parse(l))
  .filter((r) => r.kind === 'confirmation');
// The executor answers the frontend and audits through the broker on two
// channels, so a decision's record may land just after the answer: wait
// for it, with a budget far above need.
async function until(cond, ms = 10000) {
  const end = Date.now() + ms;
  while (Date.now() < end && !cond())
    await new Promise((r) => setTimeout(r, 20));
  return cond();
}

function connect(elicitation) {
  const transport = new sdk.StdioClientTransport({
    command: sp, args: ['mcp', '--config', config], cwd: join(dir, 'cwd'),
    stderr: 'pipe',
  });
  const client = new sdk.Client({ name: 'sallyport-sdk-confirm',
    version: '1.0.0' }, elicitation ? { capabilities: { elicitation: {} } } :
    undefined);
  return { client, transport };
}

// What the handler does next: a function of (request, extra).
let answer = () => ({ action: 'decline' });
const asked = [];
const name = 'widget "$(id)"\n-x \u00e9t\u00e9';
// As the question shows it: a value's line break escaped there.
const shown = name.replace(/\n/g, '\\u{000A}');
const call = (client, tool, tag, qty, opts) => client.callTool({ name: tool,
  arguments: { tag, name, qty } }, undefined, opts);

const { client, transport } = connect(true);
client.setRequestHandler(sdk.ElicitRequestSchema, (request, extra) => {
  asked.push(request.params);
  return answer(request, extra);
});
try {
  await client.connect(transport);

  answer = () => ({ action: 'accept', content: { qty: '7' } });
  let r = await call(client, 'create_item', 'right', 7);
  check('accept, the right value retyped: ok, and exactly one request at ' +
    'the target', r.structuredContent?.outcome === 'ok' &&
    posts('right').length === 1, [r, posts('right')]);
  check('... the question was the policy\'s message with the values, and ' +
    'asked for qty', asked[0]?.message === `Create 7 x ${shown} (right)` &&
    asked[0]?.requestedSchema?.required?.[0] === 'qty', asked[0]);
  check('... the body the target got carries the confirmed values',
    JSON.parse(posts('right')[0]?.body ?? '{}').qty === 7, posts('right'));

  answer = () => ({ action: 'accept', content: { qty: '8' } });
  r = await call(client, 'create_item', 'wrong', 7);
  check('accept with a wrong retyped value: denied, zero requests',
    r.isError === true && r.structuredContent?.outcome === 'denied' &&
    posts('wrong').length === 0, [r, posts('wrong')]);
  check('... saying the typed value is not this call\'s',
    /typed to confirm is not this call/.test(r.structuredContent?.message),
    r.structuredContent);

  answer = () => ({ action: 'decline' });
  r = await call(client, 'create_item', 'decline', 7);
  check('decline: denied, zero requests, saying the human declined',
    r.structuredContent?.outcome === 'denied' && posts('decline').length === 0 &&
    /declined/.test(r.structuredContent?.message), [r, posts('decline')]);

  answer = () => ({ action: 'cancel' });
  r = await call(client, 'create_item', 'cancel', 7);
  check('cancel: denied, zero requests, saying the human dismissed it',
    r.structuredContent?.outcome === 'denied' && posts('cancel').length === 0 &&
    /dismissed/.test(r.structuredContent?.message), [r, posts('cancel')]);

  answer = () => new Promise(() => {});	// a human who never answers
  const t0 = Date.now();
  r = await call(client, 'create_quick', 'silent', 7);
  check('no answer before timeout_s (2 s): denied, zero requests, saying ' +
    'it expired', r.structuredContent?.outcome === 'denied' &&
    posts('silent').length === 0 &&
    /before it expired/.test(r.structuredContent?.message) &&
    Date.now() - t0 >= 1900, [r, posts('silent'), Date.now() - t0]);

  answer = () => ({ action: 'accept', content: { confirm: true } });
  r = await call(client, 'create_plain', 'plain', 3);
  check('confirm: true, accepted with its boolean: ok, one request',
    r.structuredContent?.outcome === 'ok' && posts('plain').length === 1 &&
    asked.at(-1)?.requestedSchema?.properties?.confirm?.type === 'boolean',
    [r, asked.at(-1)]);

  // A confirmation waits while a read call of the same session runs.
  let release;
  answer = () => new Promise((res) => { release = res; });
  const waiting = call(client, 'create_item', 'later', 9);
  while (release === undefined)
    await new Promise((res) => setTimeout(res, 10));
  const read = await client.callTool({ name: 'get_item',
    arguments: { id: 'during' } });
  check('a read call while a confirmation waits: answered ok at once',
    read.structuredContent?.outcome === 'ok' && posts('later').length === 0,
    [read, posts('later')]);
  release({ action: 'accept', content: { qty: '9' } });
  r = await waiting;
  check('... and the confirmation, answered after it, then acts once',
    r.structuredContent?.outcome === 'ok' && posts('later').length === 1, r);

  // The client cancels the call while the human has not answered.
  let aborted;
  answer = (req, extra) => new Promise((res) => {
    extra.signal.addEventListener('abort', () => { aborted = true; res({
      action: 'cancel' }); });
  });
  const ctl = new AbortController();
  const before = asked.length;
  const pending = call(client, 'create_item', 'withdrawn', 7,
    { signal: ctl.signal }).catch((e) => e);
  while (asked.length === before)
    await new Promise((res) => setTimeout(res, 10));
  ctl.abort('the user changed their mind');
  await pending;
  await until(() => aborted === true &&
    decisions().some((d) => d.decision === 'withdrawn'));
  check('notifications/cancelled while waiting: zero requests, the wait ' +
    'ended (audited withdrawn)', posts('withdrawn').length === 0 &&
    decisions().some((d) => d.decision === 'withdrawn'), decisions());
  check('... and the client was told its question is moot', aborted === true,
    aborted);
  const log = readFileSync(join(dir, 'audit.jsonl'), 'utf8').split('\n')
    .filter((l) => l).map((l) => JSON.parse(l));
  const intents = log.filter((x) => x.kind === 'intent' &&
    x.tool.startsWith('create_'));
  check('each confirm call\'s intent comes after its "accepted" record, ' +
    'and only accepted calls have one', intents.length === 3 &&
    intents.every((i) => log.some((x) => x.kind === 'confirmation' &&
      x.call === i.call && x.decision === 'accepted' && x.seq < i.seq)),
    intents);
  check('... the retyped value recorded as its shape only',
    decisions().filter((d) => d.retyped !== undefined)
      .every((d) => /^string\(\d+\)$/.test(d.retyped)) &&
    !log.some((x) => x.retyped === '8' || x.retyped === '7'), decisions());
} catch (e) {
  check('the SDK session ran without an exception', false, String(e?.stack));
} finally {
  await client.close();
}

// The v2 client on 2026-07-28: the question comes back as input_required
// and the client's multi-round-trip driver asks its handler, then retries
// with the answer and the requestState.
async function loadV2() {
  try {
    return { ...(await import('@modelcontextprotocol/client')),
      ...(await import('@modelcontextprotocol/client/stdio')) };
  } catch (e) {
    check('the v2 client loads', false, String(e?.stack ?? e));
    return null;
  }
}

// A v2 client pinned to 2026-07-28 on sp mcp, declaring capabilities.
function modernClient(v2, capabilities) {
  const transport = new v2.StdioClientTransport({ command: sp,
    args: ['mcp', '--config', config], cwd: join(dir, 'cwd'),
    stderr: 'pipe' });
  const c = new v2.Client({ name: 'sallyport-sdk-confirm-v2',
    version: '1.0.0' }, { capabilities,
    versionNegotiation: { mode: { pin: '2026-07-28' } } });
  return { c, transport };
}

async function modern() {
  const v2 = await loadV2();
  if (v2 === null)
    return;
  const { c, transport } = modernClient(v2, { elicitation: {} });
  let reply = { action: 'accept', content: { qty: '4' } };
  const seen = [];
  c.setRequestHandler('elicitation/create', (request) => {
    seen.push(request.params);
    return reply;
  });
  try {
    await c.connect(transport);
    let r = await c.callTool({ name: 'create_item',
      arguments: { tag: 'v2-right', name, qty: 4 } });
    check('v2 client, 2026-07-28: the human\'s accept comes back through ' +
      'input_required, one request', r.structuredContent?.outcome === 'ok' &&
      posts('v2-right').length === 1 &&
      seen[0]?.message === `Create 4 x ${shown} (v2-right)`, [r, seen]);
    reply = { action: 'accept', content: { qty: '5' } };
    r = await c.callTool({ name: 'create_item',
      arguments: { tag: 'v2-wrong', name, qty: 4 } });
    check('... a wrong retyped value: denied, zero requests',
      r.structuredContent?.outcome === 'denied' &&
      posts('v2-wrong').length === 0, r);
    reply = { action: 'decline' };
    r = await c.callTool({ name: 'create_item',
      arguments: { tag: 'v2-decline', name, qty: 4 } });
    check('... a decline: denied, zero requests',
      r.structuredContent?.outcome === 'denied' &&
      posts('v2-decline').length === 0, r);
    check('... each question went out in an input_required result (the ' +
      'first round audited "relayed")', await until(() => decisions()
      .filter((d) => d.decision === 'relayed').length === 3),
    decisions().slice(-9));
  } catch (e) {
    check('the v2 session ran without an exception', false, String(e?.stack));
  } finally {
    await c.close();
  }
}
await modern();

// The v2 client without elicitation: -32021 naming the capability, as
// the SDK's MissingRequiredClientCapabilityError; nothing sent.
async function modernBare() {
  const v2 = await loadV2();
  if (v2 === null)
    return;
  const { c, transport } = modernClient(v2, {});
  try {
    await c.connect(transport);
    let err = null;
    try {
      await c.callTool({ name: 'create_item',
        arguments: { tag: 'v2-bare', name, qty: 3 } });
    } catch (e) {
      err = e;
    }
    check('v2 client without elicitation: error -32021 naming it, zero ' +
      'requests', err?.code === -32021 &&
      err instanceof v2.MissingRequiredClientCapabilityError &&
      err.requiredCapabilities?.elicitation !== undefined &&
      posts('v2-bare').length === 0, [String(err), err?.data,
      posts('v2-bare')]);
  } catch (e) {
    check('the v2 session without elicitation ran', false,
      String(e?.stack));
  } finally {
    await c.close();
  }
}
await modernBare();

// A client that did not declare elicitation: denied at once.
const bare = connect(false);
try {
  await bare.client.connect(bare.transport);
  const t0 = Date.now();
  const r = await call(bare.client, 'create_item', 'bare', 7);
  check('a client without elicitation: denied at once, zero requests',
    r.structuredContent?.outcome === 'denied' && posts('bare').length === 0 &&
    Date.now() - t0 < 10000, [r, posts('bare')]);
  check('... saying this client cannot ask for a confirmation',
    /this client cannot ask for one/.test(r.structuredContent?.message) &&
    await until(() => decisions().at(-1)?.decision === 'unsupported'),
    [r, decisions().at(-1)]);
} catch (e) {
  check('the SDK session without elicitation ran', false, String(e?.stack));
} finally {
  await bare.client.close();
  target.proc.kill();
}
finish();
