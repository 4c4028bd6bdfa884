// Drive a server with the official JavaScript A2A client (@a2a-js/sdk); print one JSON object.
//
// Run by tests/interop/test_sdk_js.py (from a copy next to the node_modules that `npm ci`
// installed from this folder's package-lock.json):
//
//     node client.mjs BASE_URL {JSONRPC,HTTP+JSON} {1.0,0.3} WEBHOOK_URL TOKEN
//
// VERSION 1.0 uses the SDK's default factories; VERSION 0.3 enables the SDK's v0.3
// compatibility layer (`legacyCompat: { enabled: true }` on the card resolver and on both
// transport factories), and hands the factory the card as a v0.3 client sees it (the
// v0.3 fields only), so the factory picks the LegacyJsonRpcTransport/LegacyRestTransport.
//
// Every step is recorded as {"ok": VALUE} or {"error": {...}} (what the SDK raised). Values
// are the SDK's parsed objects serialised with the SDK's own ProtoJSON `toJSON`.

import {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  SendMessageRequest,
  SendMessageResponse,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import * as errors from '@a2a-js/sdk/errors';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';

const [baseUrl, binding, version, hookUrl, token] = process.argv.slice(2);
const legacy = version === '0.3';
const STREAM_TIMEOUT_MS = 15000;
const SEMANTIC = [
  'TaskNotFoundError',
  'TaskNotCancelableError',
  'PushNotificationNotSupportedError',
  'UnsupportedOperationError',
  'ContentTypeNotSupportedError',
  'InvalidAgentResponseError',
  'ExtendedAgentCardNotConfiguredError',
  'ExtensionSupportRequiredError',
  'VersionNotSupportedError',
  'RequestMalformedError',
];

const out = {
  sdk_version: JSON.parse(
    readFileSync(new URL('./node_modules/@a2a-js/sdk/package.json', import.meta.url), 'utf8'),
  ).version,
  binding,
  version,
};

/** What the SDK raised: its class (by `instanceof`), transport details, message. */
function describe(err) {
  const described = {
    name: err?.name ?? typeof err,
    type: SEMANTIC.find((name) => err instanceof errors[name]) ?? null,
    message: String(err?.message ?? err),
  };
  for (const key of ['transport', 'statusCode', 'envelopeCode']) {
    if (err?.[key] !== undefined) described[key] = err[key];
  }
  if (err?.cause !== undefined) described.cause = describe(err.cause);
  return described;
}

/** Run one step: out[name] = {ok: value} or {error: what the SDK raised}. */
async function step(name, fn) {
  try {
    out[name] = { ok: await fn() };
  } catch (err) {
    out[name] = { error: describe(err) };
  }
  return out[name].ok;
}

const result = (value) =>
  SendMessageResponse.toJSON({
    payload: 'messageId' in value ? { $case: 'message', value } : { $case: 'task', value },
  });

function request(text, { taskId = '', contextId = '', configuration } = {}) {
  return SendMessageRequest.fromJSON({
    message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], taskId, contextId },
    ...(configuration ? { configuration } : {}),
  });
}

/** Every event of a stream (bounded in time, so that a stream that never ends fails). */
async function collect(events, onEvent) {
  const seen = [];
  for await (const event of events) {
    seen.push(StreamResponse.toJSON(event));
    if (onEvent) await onEvent(seen.length);
  }
  return seen;
}

const guard = () => ({ signal: AbortSignal.timeout(STREAM_TIMEOUT_MS) });
const subscription = (id) => SubscribeToTaskRequest.fromJSON({ id });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// --- discovery and client selection ------------------------------------------------------

const compat = legacy ? { legacyCompat: { enabled: true } } : undefined;
const resolver = new DefaultAgentCardResolver(compat);
const transports = () => [new JsonRpcTransportFactory(compat), new RestTransportFactory(compat)];

function factory(options = {}) {
  return new ClientFactory({ transports: transports(), cardResolver: resolver, ...options });
}

function selected(client) {
  return {
    // The bundle names some classes `_Name` (`var Name = class _Name`).
    class: client.transport.constructor.name.replace(/^_/, ''),
    protocolName: client.transport.protocolName,
    protocolVersion: client.protocolVersion,
    endpoint: client.transport.endpoint,
  };
}

// The card is resolved relative to the base URL, so the base of a mount below the root
// (aiohttp's /a2a) has to end with "/" (as for any relative URL reference).
const cardBase = baseUrl + '/';
let card;
if (legacy) {
  // The resolver would see our supportedInterfaces and read the card as v1.0; a v0.3 server
  // publishes the v0.3 fields only, so hand the factory the card without supportedInterfaces
  // (its resolver then parses it with the SDK's v0.3 card parser).
  const rawCard = await (await fetch(new URL('.well-known/agent-card.json', cardBase))).json();
  const v03 = { ...rawCard };
  delete v03.supportedInterfaces;
  card = resolver.normalizeAgentCard(v03);
  out.card = { ok: AgentCard.toJSON(card) };
  // The same factory given our full card (both versions listed) prefers the 1.0 interface.
  await step('dual_card_selection', async () =>
    selected(await factory({ preferredTransports: [binding] }).createFromAgentCard(rawCard)),
  );
  // ... and given the card's 0.3 interfaces only, the legacy transport again.
  await step('v03_interfaces_selection', async () => {
    const only = {
      ...rawCard,
      supportedInterfaces: rawCard.supportedInterfaces.filter((i) => i.protocolVersion === '0.3'),
    };
    return selected(await factory({ preferredTransports: [binding] }).createFromAgentCard(only));
  });
} else {
  card = await resolver.resolve(cardBase);
  out.card = { ok: AgentCard.toJSON(card) };
  await step('default_selection', async () => selected(await factory().createFromUrl(cardBase)));
}

const make = (clientConfig = {}) =>
  factory({ preferredTransports: [binding], clientConfig }).createFromAgentCard(card);
const blocking = await make();
const polling = await make({ polling: true });
out.selection = { ok: selected(blocking) };

async function send(text, options) {
  return result(await blocking.sendMessage(request(text, options)));
}

async function hold() {
  const reply = result(
    await blocking.sendMessage(request('hold', { configuration: { returnImmediately: true } })),
  );
  if (!reply.task) throw new Error(`hold: no task in ${JSON.stringify(reply)}`);
  return reply.task;
}

const release = (taskId) => send(`release ${taskId}`);

const getTask = async (id, extra = {}) =>
  Task.toJSON(await blocking.getTask(GetTaskRequest.fromJSON({ id, ...extra })));
const cancelTask = async (id) =>
  Task.toJSON(await blocking.cancelTask(CancelTaskRequest.fromJSON({ id })));

async function waitFor(taskId, state) {
  for (let i = 0; i < 500; i++) {
    const task = await getTask(taskId);
    if (task.status?.state === state) return task;
    await sleep(20);
  }
  throw new Error(`task ${taskId} never reached ${state}`);
}

// --- send ----------------------------------------------------------------------------------

const sent = await step('send_blocking', () => send('echo hello'));
await step('send_message_reply', () => send('release nothing'));
await step('send_to_terminal', () => send('again', { taskId: sent?.task?.id ?? 'none' }));

const held = await step('send_non_blocking', async () =>
  result(await polling.sendMessage(request('hold'))),
);
if (held?.task) {
  await step('non_blocking_working', () => waitFor(held.task.id, 'TASK_STATE_WORKING'));
  await release(held.task.id);
  await step('non_blocking_completed', () => waitFor(held.task.id, 'TASK_STATE_COMPLETED'));
}

// --- stream --------------------------------------------------------------------------------

const streamed = await step('stream', () =>
  collect(blocking.sendMessageStream(request('stream 3'), guard())),
);
await step('stream_message_reply', () =>
  collect(blocking.sendMessageStream(request('release streamed'), guard())),
);

// --- get and list --------------------------------------------------------------------------

const streamedId = streamed?.[0]?.task?.id ?? 'none';
await step('get', () => getTask(streamedId, { historyLength: 1 }));
await step('get_missing', () => getTask('no-such-task'));

if (!legacy) {
  const contextId = randomUUID();
  const first = await send('echo one', { contextId });
  const second = await send('echo two', { contextId });
  await send('echo elsewhere');
  out.list_ids = { ok: [first.task?.id, second.task?.id] };
  const list = async (params) => {
    const listed = await blocking.listTasks(ListTasksRequest.fromJSON({ contextId, ...params }));
    return ListTasksResponse.toJSON(listed);
  };
  await step('list', () => list({}));
  const page1 = await step('list_page1', () => list({ pageSize: 1 }));
  await step('list_page2', () => list({ pageSize: 1, pageToken: page1?.nextPageToken ?? '' }));
  await step('list_completed_with_artifacts', () =>
    list({ status: 'TASK_STATE_COMPLETED', includeArtifacts: true }),
  );
}

// --- cancel --------------------------------------------------------------------------------

await step('cancel', async () => {
  const task = await hold();
  out.cancel_task_id = { ok: task.id };
  return cancelTask(task.id);
});
const canceledId = out.cancel_task_id?.ok ?? 'none';
await step('cancel_get', () => getTask(canceledId));
await step('cancel_again', () => cancelTask(canceledId));
await step('cancel_missing', () => cancelTask('no-such-task'));

// --- subscribe -----------------------------------------------------------------------------

const subscribed = await hold();
out.subscribe_task_id = { ok: subscribed.id };
await step('subscribe', () =>
  collect(blocking.resubscribeTask(subscription(subscribed.id), guard()), async (count) => {
    // The subscription is open (it starts with the task snapshot): release the task.
    if (count === 1) await step('subscribe_release', () => release(subscribed.id));
  }),
);
await step('subscribe_terminal', () =>
  collect(blocking.resubscribeTask(subscription(subscribed.id), guard())),
);
await step('subscribe_missing', () =>
  collect(blocking.resubscribeTask(subscription('no-such-task'), guard())),
);

// A subscription to an input-required task stays open across the follow-up turn.
const asking = await send('ask');
const askingId = asking.task?.id ?? 'none';
out.subscribe_input_required_task_id = { ok: askingId };
let answered = false;
const answer = async () => {
  if (answered) return;
  answered = true;
  await step('subscribe_input_required_answer', () =>
    send('Ada', { taskId: askingId, contextId: asking.task?.contextId ?? '' }),
  );
};
await step('subscribe_input_required', () =>
  collect(blocking.resubscribeTask(subscription(askingId), guard()), async (count) => {
    if (count === 1) await answer();
  }),
);
await answer(); // (if the subscription failed before its first event)

// --- push notification configs (the webhook hears the rest of the task) -------------------

const pushed = await hold();
out.push_task_id = { ok: pushed.id };
const pushConfig = async (params) =>
  TaskPushNotificationConfig.toJSON(
    await blocking.createTaskPushNotificationConfig(
      TaskPushNotificationConfig.fromJSON({ taskId: pushed.id, ...params }),
    ),
  );
const listConfigs = async (taskId) =>
  ListTaskPushNotificationConfigsResponse.toJSON(
    await blocking.listTaskPushNotificationConfig(
      ListTaskPushNotificationConfigsRequest.fromJSON({ taskId }),
    ),
  );
await step('push_create', () =>
  pushConfig({
    id: 'cfg-1',
    url: hookUrl,
    token: 'tok-1',
    authentication: { scheme: 'Bearer', credentials: 's3cret' },
  }),
);
const other = await step('push_create_other', () =>
  pushConfig(legacy ? { id: 'cfg-2', url: hookUrl + '?other' } : { url: hookUrl + '?other' }),
);
const otherId = other?.id ?? 'none';
await step('push_get', async () =>
  TaskPushNotificationConfig.toJSON(
    await blocking.getTaskPushNotificationConfig(
      GetTaskPushNotificationConfigRequest.fromJSON({ taskId: pushed.id, id: 'cfg-1' }),
    ),
  ),
);
await step('push_list', () => listConfigs(pushed.id));
await step('push_delete', async () => {
  await blocking.deleteTaskPushNotificationConfig(
    DeleteTaskPushNotificationConfigRequest.fromJSON({ taskId: pushed.id, id: otherId }),
  );
  return null;
});
await step('push_list_after_delete', () => listConfigs(pushed.id));
await step('push_get_deleted', async () =>
  TaskPushNotificationConfig.toJSON(
    await blocking.getTaskPushNotificationConfig(
      GetTaskPushNotificationConfigRequest.fromJSON({ taskId: pushed.id, id: otherId }),
    ),
  ),
);
await step('push_list_missing_task', () => listConfigs('no-such-task'));
await step('push_create_missing_task', () =>
  pushConfig({ taskId: 'no-such-task', id: 'cfg-3', url: hookUrl }),
);
await release(pushed.id);
await step('push_completed', () => waitFor(pushed.id, 'TASK_STATE_COMPLETED'));

// A webhook given with the message is registered for the new task.
await step('push_in_send', async () => {
  const configuration = {
    returnImmediately: true,
    taskPushNotificationConfig: { url: hookUrl + '?send', token: 't' },
  };
  const reply = result(await blocking.sendMessage(request('hold', { configuration })));
  out.push_in_send_task_id = { ok: reply.task?.id };
  const listed = await listConfigs(reply.task.id);
  await release(reply.task.id);
  await waitFor(reply.task.id, 'TASK_STATE_COMPLETED');
  return listed;
});

// --- multi-turn ----------------------------------------------------------------------------

const asked = await step('ask', () => send('ask'));
await step('answer', () =>
  send('Ada', { taskId: asked?.task?.id ?? 'none', contextId: asked?.task?.contextId ?? '' }),
);
const askedStreaming = await step('ask_streaming', () =>
  collect(blocking.sendMessageStream(request('ask'), guard())),
);
await step('answer_streaming', () =>
  collect(
    blocking.sendMessageStream(
      request('Grace', { taskId: askedStreaming?.[0]?.task?.id ?? 'none' }),
      guard(),
    ),
  ),
);

// --- the extended card ---------------------------------------------------------------------

await step('extended_card', async () => {
  const client = await make();
  const options = { serviceParameters: { Authorization: `Bearer ${token}` } };
  return AgentCard.toJSON(await client.getAgentCard(options));
});
await step('extended_card_anonymous', async () =>
  AgentCard.toJSON(await (await make()).transport.getExtendedAgentCard({ tenant: '' })),
);

process.stdout.write(JSON.stringify(out) + '\n');
