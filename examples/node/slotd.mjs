// @ts-check
// A small slotd client for Node.js orchestrators: @grpc/grpc-js with the
// committed .proto files loaded at run time (no code generation), plain JSON
// in and out, and the two rules that keep turns safe:
//   1. one turn_id per logical turn, reused on every retry (slotd applies a
//      turn_id once and answers a repeat with the stored response);
//   2. retry only when slotd's Problem (in the gRPC status details) says
//      retryable, after retry_after_seconds — bounded, with jitter, never
//      past the deadline. A business outcome (a refused value, REPAIR) is a
//      normal response with `problem` set: hand it to the model, never retry.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The folder holding slotd/v1/slotd.proto: the repository's api/proto. */
export const PROTO_DIR = process.env.SLOTD_PROTO_DIR ?? path.join(here, '..', '..', 'api', 'proto');
const PROTO_FILE = 'slotd/v1/slotd.proto';

const definition = protoLoader.loadSync(PROTO_FILE, {
  includeDirs: [PROTO_DIR],
  keepCase: true, // proto field names: conversation_id, turn_id, retry_after_seconds
  enums: String, // "ACTION_ASK", not 1
  longs: String, // session.version is int64
  oneofs: true, // google.protobuf.Value says which kind it holds
});
const slotdv1 = /** @type {any} */ (grpc.loadPackageDefinition(definition)).slotd.v1;

// The Problem in an error's status details is decoded with protobufjs: the
// status (google.rpc.Status) wraps it in a google.protobuf.Any.
const root = new protobuf.Root();
root.loadSync(path.join(PROTO_DIR, PROTO_FILE), { keepCase: true });
protobuf.parse(
  'syntax = "proto3"; package google.rpc;' +
    'message Status { int32 code = 1; string message = 2; repeated Any details = 3; }' +
    'message Any { string type_url = 1; bytes value = 2; }',
  root,
  { keepCase: true },
);
const StatusType = root.lookupType('google.rpc.Status');
const ProblemType = root.lookupType('slotd.v1.Problem');

/**
 * The slotd.v1.Problem of a failed call; null when slotd did not answer
 * (the transport failed).
 * @param {any} err a grpc-js ServiceError
 * @returns {any | null}
 */
export function problemOf(err) {
  const bin = err?.metadata?.get('grpc-status-details-bin')?.[0];
  if (!bin) return null;
  const status = /** @type {any} */ (StatusType.decode(bin));
  for (const d of status.details ?? []) {
    if (String(d.type_url).endsWith('/slotd.v1.Problem')) {
      return ProblemType.toObject(ProblemType.decode(d.value), { defaults: true, enums: String, longs: String });
    }
  }
  return null;
}

// google.protobuf.Struct and Value, to and from plain JSON. proto-loader takes
// the well-known types from protobufjs, whose field names are camelCase.
/** @param {any} v */
export function toValue(v) {
  if (v === null || v === undefined) return { nullValue: 'NULL_VALUE' };
  if (typeof v === 'number') return { numberValue: v };
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (Array.isArray(v)) return { listValue: { values: v.map(toValue) } };
  return { structValue: toStruct(v) };
}
/** @param {Record<string, any>} obj */
export function toStruct(obj) {
  return { fields: Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, toValue(v)])) };
}
/** @param {any} v */
export function fromValue(v) {
  if (!v) return undefined;
  switch (v.kind) {
    case 'nullValue': return null;
    case 'numberValue': return v.numberValue;
    case 'stringValue': return v.stringValue;
    case 'boolValue': return v.boolValue;
    case 'listValue': return (v.listValue.values ?? []).map(fromValue);
    case 'structValue': return fromStruct(v.structValue);
    default: return undefined;
  }
}
/** @param {any} s */
export function fromStruct(s) {
  if (!s) return undefined;
  return Object.fromEntries(Object.entries(s.fields ?? {}).map(([k, v]) => [k, fromValue(v)]));
}

export class SlotdClient {
  /**
   * @param {string} addr host:port of slotd's gRPC listener
   * @param {{apiKey?: string, maxAttempts?: number, maxDelayMs?: number, timeoutMs?: number}} [opts]
   */
  constructor(addr, opts = {}) {
    this.service = new slotdv1.SlotService(addr, grpc.credentials.createInsecure());
    this.apiKey = opts.apiKey ?? '';
    this.maxAttempts = opts.maxAttempts ?? 5;
    this.maxDelayMs = opts.maxDelayMs ?? 5000;
    this.timeoutMs = opts.timeoutMs ?? 10000;
  }

  close() {
    this.service.close();
  }

  /**
   * One logical turn. `req` is a TurnRequest with `arguments` as plain JSON;
   * the turn_id is made here once (unless given) and reused on every retry.
   * @param {Record<string, any>} req
   * @returns {Promise<{response: any, replayed: boolean, attempts: number}>}
   */
  async turn(req) {
    const msg = { ...req, turn_id: req.turn_id ?? randomUUID() };
    if (req.arguments) msg.arguments = toStruct(req.arguments);
    return this.#call('Turn', msg);
  }

  /** @param {Record<string, any>} req a CompleteSessionRequest; `result` as plain JSON */
  async completeSession(req) {
    const msg = { ...req };
    if ('result' in req) msg.result = toValue(req.result);
    return (await this.#call('CompleteSession', msg)).response;
  }

  /** @param {string} tool @param {string} provider "openai", "anthropic" or "plain" */
  async toolSchema(tool, provider) {
    const { response } = await this.#call('GetToolSchema', { tool, provider });
    return { ...response, parameters: fromStruct(response.parameters) };
  }

  /**
   * @param {string} method
   * @param {any} msg
   * @returns {Promise<{response: any, replayed: boolean, attempts: number}>}
   */
  async #call(method, msg) {
    const deadline = Date.now() + this.timeoutMs;
    for (let attempt = 1; ; attempt++) {
      try {
        const { response, replayed } = await this.#once(method, msg, deadline);
        return { response, replayed, attempts: attempt };
      } catch (err) {
        const problem = problemOf(err);
        // slotd's problem decides; without one slotd was not reached, and
        // only the transport's UNAVAILABLE is worth another try.
        const retryable = problem ? problem.retryable : /** @type {any} */ (err).code === grpc.status.UNAVAILABLE;
        if (!retryable || attempt >= this.maxAttempts) throw Object.assign(/** @type {any} */ (err), { problem, attempts: attempt });
        const base = problem?.retry_after_seconds > 0 ? problem.retry_after_seconds * 1000 : 200 * 2 ** (attempt - 1);
        const wait = Math.min(base * (1 + 0.2 * Math.random()), this.maxDelayMs);
        if (Date.now() + wait >= deadline) throw Object.assign(/** @type {any} */ (err), { problem, attempts: attempt });
        await sleep(wait);
      }
    }
  }

  /** @param {string} method @param {any} msg @param {number} deadline */
  #once(method, msg, deadline) {
    const md = new grpc.Metadata();
    if (this.apiKey) md.set('authorization', `Bearer ${this.apiKey}`);
    return new Promise((resolve, reject) => {
      let replayed = false;
      const call = this.service[method](msg, md, { deadline }, (/** @type {any} */ err, /** @type {any} */ response) =>
        err ? reject(err) : resolve({ response, replayed }));
      call.on('metadata', (/** @type {grpc.Metadata} */ h) => { replayed = h.get('slotd-replayed')[0] === 'true'; });
    });
  }
}
