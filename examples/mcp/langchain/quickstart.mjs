// @ts-check
// The README's quick start through LangChain's MCP adapters
// (@langchain/mcp-adapters), which validate a tool's input against its
// inputSchema before they call it: the dispute from the first dirty turn to
// READY and slotd_complete. Each step prints one JSON object on stdout;
// integration/langchain_test.go runs it against a real slotd.
//
//   SLOTD_MCP_URL=http://127.0.0.1:8080/mcp SLOTD_API_KEY=... node quickstart.mjs
import { MultiServerMCPClient } from "@langchain/mcp-adapters";

const url = process.env.SLOTD_MCP_URL ?? "http://127.0.0.1:8080/mcp";
const key = process.env.SLOTD_API_KEY ?? "";

/** @param {object} obj */
function out(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

const client = new MultiServerMCPClient({
  mcpServers: {
    slotd: { transport: "http", url, headers: key ? { Authorization: `Bearer ${key}` } : {} },
  },
  throwOnLoadError: true,
});

let calls = 0;

/**
 * Calls a tool as an agent does, with a tool call: the adapter validates the
 * arguments first, and the message's artifact carries the structured result.
 * @param {string} step
 * @param {import("@langchain/core/tools").StructuredToolInterface} tool
 * @param {Record<string, unknown>} args
 */
async function call(step, tool, args) {
  const msg = await tool.invoke({ type: "tool_call", id: `call_${++calls}`, name: tool.name, args });
  const artifacts = /** @type {Array<{type: string, data?: any}>} */ (msg.artifact ?? []);
  const structured = artifacts.find((a) => a.type === "mcp_structured_content")?.data ?? null;
  out({ step, structured, text: textOf(msg.content) });
  return structured ?? {};
}

/**
 * The text the model reads: the adapter keeps a text block that came with
 * structured content as that block, serialized.
 * @param {unknown} content
 */
function textOf(content) {
  if (Array.isArray(content)) return content.map((c) => (c.type === "text" ? c.text : "")).join("");
  if (typeof content !== "string") return "";
  try {
    const block = JSON.parse(content);
    return typeof block?.text === "string" ? block.text : content;
  } catch {
    return content;
  }
}

try {
  // getTools() connects once; every call below goes through that session.
  const tools = await client.getTools();
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  const dispute = byName.bank_open_dispute;
  const complete = byName.slotd_complete;
  out({ step: "tools", tools: tools.map((t) => t.name) });

  // A value no normalizer could make an amount is still refused on the
  // client: the schema is lenient where slotd cleans, not everywhere.
  try {
    await dispute.invoke({ amount: true });
    out({ step: "not-validated", error: "the adapter let a boolean amount through" });
  } catch (e) {
    out({ step: "refused-on-client", error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
  }

  // The README's values, as a model sends them, in the first turn.
  await call("dirty", dispute, { card_last4: "•• 4417", operation_date: "вчера", amount: "1 200,50 ₽", reason: "Duplicate" });
  await call("operation", dispute, { original_operation_id: "op-20260822-0117" });
  const ready = await call("approve", dispute, { slotd_confirm: true });
  await call("complete", complete, {
    idempotency_key: ready.idempotency_key,
    result: { status: "accepted", case_id: "DSP-7781", review_deadline: "2026-09-21" },
  });
  out({ done: "quickstart" });
} finally {
  await client.close();
}
