// @ts-check
// A bank's card dispute (a customer contests a card charge) as an
// orchestrator drives it: the model's dirty tool-call arguments go to slotd
// every turn, and slotd's action says what to do next. In the middle the
// user asks for the card's balance: a turn on another tool, in the same
// conversation, which parks the dispute; the balance is looked up and
// recorded, and the next turn on the dispute comes back to it (resumed)
// with a notice of what it holds and still needs. Prints each question; exits 1 when a
// step's action, or whether it resumed, is not the expected one.
//
//   SLOTD_ADDR=127.0.0.1:50051 [SLOTD_API_KEY=...] node dispute.mjs
import { randomUUID } from 'node:crypto';

import { SlotdClient, fromStruct } from './slotd.mjs';

const addr = process.env.SLOTD_ADDR ?? '127.0.0.1:50051';
const slotd = new SlotdClient(addr, { apiKey: process.env.SLOTD_API_KEY });

const conversation_id = `node-example-${randomUUID()}`;
const tool = 'bank.open_dispute';
// Each turn is sent with the time the user's message came: slotd tells a
// user's digression from the parallel tool calls of one model message by
// the time between turns (more than two seconds). This example plays the
// messages 20 seconds apart, ending now: slotd accepts a client's clock
// within a few minutes of its own, and resolves "вчера" with it.
const start = Date.now() - 120_000;
/** @param {number} i */
const messageTime = (i, after = 0) => {
  const ms = start + i * 20_000 + after;
  return { seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 };
};

/**
 * What the user says, what the model extracted (and for which tool, when
 * not the dispute), the action slotd must answer and whether it resumes.
 */
const steps = [
  { user: 'Списали дважды вчера 1 200,50 по карте на 4417',
    args: { card_last4: '•• 4417', operation_date: 'вчера', amount: '1 200,50 ₽' }, expect: 'ACTION_ASK' },
  { user: 'Стоп, а сколько вообще на этой карте?', tool: 'bank.check_balance',
    args: { card_last4: '' }, expect: 'ACTION_READY' },
  { user: 'Ладно. Да, дубль', args: { reason: 'Duplicate' }, expect: 'ACTION_ASK', resumed: true },
  { user: 'Первая была op-20260822-0117',
    args: { original_operation_id: 'op-20260822-0117', reason: null, amount: '' }, expect: 'ACTION_CONFIRM' },
  { user: 'Да, всё верно', confirm: true, expect: 'ACTION_READY' },
];

let failed = false;
let ready = null;
try {
  // The schema to give the model as the tool's parameters. The model calls
  // the tool by the provider's name (OpenAI's names have no dots): map it
  // back to the contract's name for slotd.
  const schema = await slotd.toolSchema(tool, 'openai');
  const toolByName = { [schema.name]: tool };
  console.log(`tool for the model: ${schema.name} (slotd's ${toolByName[schema.name]}), ` +
    `properties ${Object.keys(schema.parameters?.properties ?? {}).join(', ')}`);

  for (const [i, step] of steps.entries()) {
    const req = { conversation_id, tool: step.tool ?? tool, locale: 'ru', time_zone: 'Europe/Moscow', now: messageTime(i) };
    if (step.args) Object.assign(req, { arguments: step.args });
    if (step.confirm !== undefined) Object.assign(req, { confirmation: { accept: step.confirm } });
    const { response: r, attempts } = await slotd.turn(req);

    console.log(`\nstep ${i + 1} (${req.tool}) user: ${step.user}`);
    for (const ch of r.changes ?? []) if (ch.message) console.log(`  slotd says: ${ch.message}`);
    // Back on a parked session: tell the user what it holds and still
    // needs. Any other notice (an expired conversation starting over, tools
    // an exclusive one closed) is said too.
    if (r.resumed) console.log(`  resumed: ${r.notice}`);
    else if (r.notice) console.log(`  notice: ${r.notice}`);
    // The conversation's other open sessions, parked while this tool is used.
    if (r.open_sessions?.length) {
      console.log(`  parked: ${r.open_sessions.map((/** @type {any} */ o) => `${o.tool} (missing ${(o.missing ?? []).join(', ') || 'nothing'})`).join('; ')}`);
    }
    switch (r.action) {
      case 'ACTION_ASK': // say the question
      case 'ACTION_RECONFIRM': // ask, then send {confirmation: {accept}}
      case 'ACTION_CONFIRM':
        console.log(`  ${r.action}: ${r.question.text}`);
        if (r.question.allowed_values?.length) console.log(`  allowed: ${r.question.allowed_values.join(', ')}`);
        break;
      case 'ACTION_READY': // call the backend with the idempotency key, then CompleteSession
        console.log(`  ACTION_READY: call the backend with ${JSON.stringify(fromStruct(r.arguments))}, key ${r.idempotency_key}`);
        if (!step.tool) {
          ready = r;
          break;
        }
        {
          // The balance check is a read-only look-up: call the backend at
          // once, record its outcome, and give the output to the model. The
          // check is over; the dispute's next turn still comes back to it.
          const balance = await slotd.completeSession({
            conversation_id, tool: step.tool, idempotency_key: r.idempotency_key, now: messageTime(i, 5_000),
            result: { available: '15230.40', currency: 'RUB', account_ref: 'internal-77' },
          });
          console.log(`  ${step.tool} completed: ${JSON.stringify(fromStruct(balance.output))}`);
        }
        break;
      case 'ACTION_REPAIR': // hand the problem with its allowed values back to the model
        console.log(`  ACTION_REPAIR: ${JSON.stringify(r.problem)}`);
        break;
      default:
        console.log(`  ${r.action}`);
    }
    if (r.problem) console.log(`  problem for the model: ${r.problem.title}`);
    if (attempts > 1) console.log(`  (took ${attempts} attempts)`);
    if (r.action !== step.expect) {
      console.error(`step ${i + 1}: expected ${step.expect}, got ${r.action}`);
      failed = true;
      break;
    }
    // proto3 leaves a false bool out of the message: undefined is false.
    if (Boolean(r.resumed) !== (step.resumed ?? false)) {
      console.error(`step ${i + 1}: expected resumed ${step.resumed ?? false}, got ${Boolean(r.resumed)}`);
      failed = true;
      break;
    }
  }

  if (!failed && ready) {
    // The backend accepted the dispute: record it; the output goes back to the model.
    const done = await slotd.completeSession({
      conversation_id, tool, idempotency_key: ready.idempotency_key,
      result: { status: 'accepted', case_id: 'DSP-7781', review_deadline: '2026-09-22' },
    });
    console.log(`\ncompleted: ${done.session.status}, output for the model ${JSON.stringify(fromStruct(done.output))}`);
    if (done.session.status !== 'SESSION_STATUS_COMPLETED') {
      console.error(`CompleteSession: expected SESSION_STATUS_COMPLETED, got ${done.session.status}`);
      failed = true;
    }
  }
} catch (err) {
  const e = /** @type {any} */ (err);
  console.error(`slotd call failed: ${e.message}${e.problem ? ` — ${JSON.stringify(e.problem)}` : ''}`);
  failed = true;
} finally {
  slotd.close();
}
process.exit(failed ? 1 : 0);
