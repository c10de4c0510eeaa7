// @ts-check
// slotd's MCP endpoint as the official TypeScript SDK's client sees it, over
// Streamable HTTP. Each scenario prints one JSON object per step on stdout;
// integration/mcp_test.go runs them against a real slotd and checks what
// they print.
//
//   SLOTD_MCP_URL=http://127.0.0.1:8080/mcp SLOTD_API_KEY=... node client.mjs dispute
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const url = new URL(process.env.SLOTD_MCP_URL ?? "http://127.0.0.1:8080/mcp");
const key = process.env.SLOTD_API_KEY ?? "";
const tool = "bank_open_dispute";
// What a model sends for the dispute example: dirty, as models send it.
const dirtyDispute = { card_last4: "•• 4417", operation_date: "вчера", amount: "1 200,50 ₽" };
const operation = { original_operation_id: "op-20260822-0117" };
const backendResult = { status: "accepted", case_id: "DSP-7781", review_deadline: "2026-09-21", internal_score: 0.93 };

/** @param {object} obj */
function out(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

/**
 * @param {{key?: string, elicit?: (params: any) => any}} [opts]
 */
async function connect(opts = {}) {
  const client = new Client(
    { name: "slotd-mcp-test", version: "1.0.0" },
    opts.elicit ? { capabilities: { elicitation: { form: {} } } } : {},
  );
  if (opts.elicit) {
    const answer = opts.elicit;
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      const result = answer(req.params);
      out({ step: "elicitation", message: req.params.message, schema: req.params.requestedSchema, answer: result });
      return result;
    });
  }
  const headers = opts.key ? { Authorization: `Bearer ${opts.key}` } : undefined;
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
  await client.connect(transport);
  // Listing the tools makes the client check every later result against
  // the tool's outputSchema.
  const { tools } = await client.listTools();
  out({ step: "connected", protocolVersion: transport.protocolVersion, sessionId: transport.sessionId ?? null, tools: tools.map((t) => t.name) });
  return { client, tools };
}

/**
 * @param {Client} client
 * @param {string} step
 * @param {string} name
 * @param {Record<string, unknown>} args
 */
async function call(client, step, name, args) {
  const res = await client.callTool({ name, arguments: args });
  const content = /** @type {Array<{type: string, text?: string}>} */ (res.content);
  out({
    step,
    isError: res.isError ?? false,
    structured: res.structuredContent ?? null,
    text: content.map((c) => (c.type === "text" ? c.text : "")).join(""),
  });
  return /** @type {any} */ (res.structuredContent ?? {});
}

const scenarios = {
  async tools() {
    const { client, tools } = await connect({ key });
    out({ step: "tools", tools });
    await client.close();
  },

  // The dispute example to READY, then the backend's result recorded.
  async dispute() {
    const { client } = await connect({ key });
    await call(client, "dirty", tool, dirtyDispute);
    await call(client, "reason", tool, { reason: "Duplicate" });
    await call(client, "operation", tool, operation);
    const ready = await call(client, "approve", tool, { slotd_confirm: true });
    await call(client, "complete", "slotd_complete", { idempotency_key: ready.idempotency_key, result: backendResult });
    await client.close();
  },

  // A reason slotd cannot map to its enum: asked again, with what fits.
  async refused() {
    const { client } = await connect({ key });
    await call(client, "refused", tool, { ...dirtyDispute, reason: "chargeback" });
    await client.close();
  },

  // Two clients are two MCP sessions, and two conversations.
  async two() {
    const a = await connect({ key });
    const b = await connect({ key });
    await call(a.client, "a1", tool, dirtyDispute);
    await call(b.client, "b1", tool, { reason: "fraud" });
    await call(a.client, "a2", tool, { reason: "Duplicate" });
    await a.client.close();
    await b.client.close();
  },

  async nokey() {
    try {
      await connect({});
      out({ step: "nokey", connected: true });
    } catch (e) {
      const err = /** @type {any} */ (e);
      out({ step: "nokey", connected: false, code: err.code ?? null, message: String(err.message ?? err) });
    }
  },

  // A client that can show forms: slotd asks the user itself, except for
  // the operation id, which is sensitive and goes back to the model.
  async elicit() {
    const { client } = await connect({
      key,
      elicit: (params) => {
        const props = Object.keys(params.requestedSchema?.properties ?? {});
        if (props.length === 0) return { action: "accept" };
        if (props.includes("reason")) return { action: "accept", content: { reason: "duplicate" } };
        return { action: "decline" };
      },
    });
    await call(client, "dirty", tool, dirtyDispute);
    const ready = await call(client, "operation", tool, operation);
    await call(client, "complete", "slotd_complete", { idempotency_key: ready.idempotency_key, result: backendResult });
    await client.close();
  },
};

const name = process.argv[2] ?? "dispute";
const scenario = scenarios[/** @type {keyof typeof scenarios} */ (name)];
if (!scenario) {
  out({ error: `no scenario ${name}; one of ${Object.keys(scenarios).join(", ")}` });
  process.exit(2);
}
try {
  await scenario();
  out({ done: name });
} catch (e) {
  const err = /** @type {any} */ (e);
  out({ error: String(err?.message ?? err), code: err?.code ?? null });
  process.exit(1);
}
