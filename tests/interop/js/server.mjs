// A peer A2A server on the official JavaScript SDK (@a2a-js/sdk 1.x, express), for the
// tests of our client (tests/interop/peers/, the js_peer fixture).
//
//     node server.mjs --port 0
//
// Binds 127.0.0.1 (port 0: the system picks one), prints "PORT <n>" as its first line of
// stdout, then serves, until SIGTERM or SIGINT:
//   - the card at /.well-known/agent-card.json, two v1.0 interfaces, JSON-RPC first;
//   - JSON-RPC (v1.0 only: the SDK's default, no legacyCompat) at /jsonrpc;
//   - HTTP+JSON (v1.0 only) under /rest (POST /rest/message:send ...).
//
// The agent behaves as the other peers do (tests/interop/peers/README.md): "stream",
// "wait", "ask" (then any text), "slow", anything else is echoed.
//
// Run it next to node_modules (tests/interop/js_env.py copies it there).

import http from 'node:http';
import { randomUUID } from 'node:crypto';

import express from 'express';
import { AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import {
  agentCardHandler,
  jsonRpcHandler,
  restHandler,
  UserBuilder,
} from '@a2a-js/sdk/server/express';

const HOST = '127.0.0.1';
const JSONRPC_PATH = '/jsonrpc';
const REST_PATH = '/rest';
const STREAM_CHUNKS = 5;
const STREAM_PAUSE_MS = 50;
const SLOW_MS = 3000;
const QUESTION = 'what next?';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => new Date().toISOString();

function textPart(text) {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

function textOf(message) {
  return (message?.parts ?? [])
    .filter((part) => part.content?.$case === 'text')
    .map((part) => part.content.value)
    .join('\n');
}

function agentMessage(taskId, contextId, text) {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The peers' common agent, on the SDK's executor API (events published on the bus). */
class PeerExecutor {
  /** taskId -> contextId, for every task this process ran (cancelTask gets an id only). */
  contexts = new Map();
  /** taskId -> resolve() of a "wait" task. */
  waiting = new Map();

  async execute(requestContext, bus) {
    const { taskId, contextId } = requestContext;
    const message = requestContext.userMessage;
    const text = textOf(message);
    const existing = requestContext.task;
    const followUp = existing?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED;
    this.contexts.set(taskId, contextId);
    const status = (state, reply) =>
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: {
            state,
            message: reply === undefined ? undefined : agentMessage(taskId, contextId, reply),
            timestamp: now(),
          },
          metadata: undefined,
        }),
      );
    const artifact = (artifactId, name, text, append, lastChunk) =>
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId,
            name,
            description: '',
            parts: [textPart(text)],
            metadata: undefined,
            extensions: [],
          },
          append,
          lastChunk,
          metadata: undefined,
        }),
      );

    if (!existing) {
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
          artifacts: [],
          history: [message],
          metadata: undefined,
        }),
      );
    }
    if (followUp) {
      status(TaskState.TASK_STATE_COMPLETED, `got: ${text}`);
      return;
    }
    status(TaskState.TASK_STATE_WORKING);
    if (text === 'stream') {
      const artifactId = randomUUID();
      for (let i = 0; i < STREAM_CHUNKS; i++) {
        if (i) await sleep(STREAM_PAUSE_MS);
        artifact(artifactId, 'chunks', `chunk ${i}`, i > 0, i === STREAM_CHUNKS - 1);
      }
      status(TaskState.TASK_STATE_COMPLETED);
    } else if (text === 'wait') {
      // Until cancelTask publishes the canceled status and releases it.
      await new Promise((resolve) => this.waiting.set(taskId, resolve));
    } else if (text === 'ask') {
      status(TaskState.TASK_STATE_INPUT_REQUIRED, QUESTION);
    } else {
      if (text === 'slow') await sleep(SLOW_MS);
      const reply = `echo: ${text}`;
      artifact(randomUUID(), 'echo', reply, false, false);
      status(TaskState.TASK_STATE_COMPLETED, reply);
    }
  }

  async cancelTask(taskId, bus) {
    const contextId = this.contexts.get(taskId) ?? '';
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: now() },
        metadata: undefined,
      }),
    );
    const release = this.waiting.get(taskId);
    this.waiting.delete(taskId);
    release?.();
  }
}

function makeCard(baseUrl) {
  const iface = (path, protocolBinding) => ({
    url: baseUrl + path,
    protocolBinding,
    tenant: '',
    protocolVersion: '1.0',
  });
  return {
    name: 'Peer (@a2a-js/sdk 1.x)',
    description: "Echoes text; 'stream', 'wait', 'ask' and 'slow' do more (see README).",
    supportedInterfaces: [iface(JSONRPC_PATH, 'JSONRPC'), iface(REST_PATH, 'HTTP+JSON')],
    provider: undefined,
    version: '1.0.0',
    capabilities: {
      streaming: true,
      pushNotifications: false,
      extensions: [],
      extendedAgentCard: false,
    },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'echo',
        name: 'Echo',
        description: 'Echoes the text; stream, wait, ask and slow do more.',
        tags: ['echo'],
        examples: ['hello', 'stream', 'wait', 'ask', 'slow'],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

function makeApp(baseUrl) {
  const requestHandler = new DefaultRequestHandler(
    makeCard(baseUrl),
    new InMemoryTaskStore(),
    new PeerExecutor(),
  );
  const userBuilder = UserBuilder.noAuthentication;
  const app = express();
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
  app.use(JSONRPC_PATH, jsonRpcHandler({ requestHandler, userBuilder }));
  app.use(REST_PATH, restHandler({ requestHandler, userBuilder }));
  return app;
}

function main() {
  const args = process.argv.slice(2);
  const at = args.indexOf('--port');
  const port = at >= 0 ? Number(args[at + 1]) : 0;
  if (!Number.isInteger(port) || port < 0) {
    console.error(`usage: node server.mjs --port N (got ${args.join(' ')})`);
    process.exit(2);
  }
  const server = http.createServer();
  server.on('error', (err) => {
    console.error(err);
    process.exit(1);
  });
  server.listen(port, HOST, () => {
    const bound = server.address().port;
    server.on('request', makeApp(`http://${HOST}:${bound}`));
    process.stdout.write(`PORT ${bound}\n`);
  });
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main();
