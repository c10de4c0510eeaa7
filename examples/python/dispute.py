"""A bank's card dispute (a customer contests a card charge) as an
orchestrator drives it over slotd's HTTP/JSON gateway: the model's dirty
tool-call arguments go to slotd every turn, and slotd's action says what to
do next. Prints each action and question; exits 1 when a step's action is
not the expected one.

    SLOTD_HTTP_ADDR=127.0.0.1:8080 [SLOTD_API_KEY=...] python3 dispute.py

No clock is sent: slotd's own decides what "вчера" is.
"""

import json
import sys
import uuid

import slotd

TOOL = "bank.open_dispute"

# What the user says, what the model extracted, and the action slotd must answer.
STEPS = [
    {"user": "Списали дважды вчера 1 200,50 по карте на 4417",
     "args": {"card_last4": "•• 4417", "operation_date": "вчера", "amount": "1 200,50 ₽"},
     "expect": "ACTION_ASK"},
    {"user": "Да, дубль", "args": {"reason": "Duplicate"}, "expect": "ACTION_ASK"},
    {"user": "Первая была op-20260822-0117",
     "args": {"original_operation_id": "op-20260822-0117", "reason": None, "amount": ""},
     "expect": "ACTION_CONFIRM"},
    {"user": "Да, всё верно", "confirm": True, "expect": "ACTION_READY"},
]


def show(obj):
    return json.dumps(obj, ensure_ascii=False, sort_keys=True)


def on_retry(attempt, wait, err):
    why = " (the problem says retryable)" if err.problem else ""
    print("  delivery %d failed: %s%s; sending it again in %.1fs" % (attempt, err, why, wait), flush=True)


def main():
    client = slotd.Client(on_retry=on_retry)
    conversation_id = "python-example-%s" % uuid.uuid4()
    print("conversation: %s at %s" % (conversation_id, client.base))

    # The schema to give the model as the tool's parameters. The model calls
    # the tool by the provider's name (OpenAI's names have no dots): map it
    # back to the contract's name for slotd.
    schema = client.tool_schema(TOOL, "openai")
    tool_by_name = {schema["name"]: TOOL}
    print("tool for the model: %s (slotd's %s), properties %s" % (
        schema["name"], tool_by_name[schema["name"]],
        ", ".join(sorted((schema.get("parameters") or {}).get("properties", {})))))

    ready = None
    for i, step in enumerate(STEPS, 1):
        print("\nstep %d user: %s" % (i, step["user"]), flush=True)
        # One turn_id per logical turn, made from the user's message: a
        # retry, or a crash of the orchestrator mid-turn, sends it again.
        req = {"conversation_id": conversation_id, "tool": tool_by_name[schema["name"]],
               "turn_id": "%s/msg-%d" % (conversation_id, i),
               "locale": "ru", "time_zone": "Europe/Moscow"}
        if "args" in step:
            req["arguments"] = step["args"]
        if "confirm" in step:
            req["confirmation"] = {"accept": step["confirm"]}
        reply = client.turn(req)
        r = reply.body

        for ch in r.get("changes") or []:
            if ch.get("message"):
                print("  slotd says: %s" % ch["message"])
        if r.get("notice"):
            print("  slotd says: %s" % r["notice"])
        action = r.get("action")
        if action in ("ACTION_ASK", "ACTION_RECONFIRM", "ACTION_CONFIRM", "ACTION_RESUME"):
            # Say the question; a RECONFIRM, CONFIRM or RESUME is answered
            # with {"confirmation": {"accept": ...}}.
            q = r.get("question") or {}
            print("  %s: %s" % (action, q.get("text", "")))
            if q.get("allowed_values"):
                print("  allowed: %s" % ", ".join(q["allowed_values"]))
        elif action == "ACTION_READY":
            # Call the backend with the arguments and the idempotency key,
            # then CompleteSession.
            print("  ACTION_READY: call the backend with %s, key %s" % (show(r.get("arguments")), r.get("idempotency_key")))
            ready = r
        elif action == "ACTION_REPAIR":
            # Hand the problem with its allowed values back to the model.
            print("  ACTION_REPAIR: %s" % show(r.get("problem")))
        else:
            print("  %s" % action)
        if r.get("problem"):
            print("  problem for the model: %s" % r["problem"].get("title"))
        if reply.attempts > 1:
            print("  (took %d attempts)" % reply.attempts)
        if reply.replayed:
            print("  replayed: slotd answered turn %s with the stored response of an earlier delivery" % r.get("turn_id"))
        if action != step["expect"]:
            print("step %d: expected %s, got %s" % (i, step["expect"], action), file=sys.stderr)
            return 1

    # The backend accepted the dispute: record its raw result. The output is
    # what goes back to the model, shaped by the tool's output contract:
    # risk_score, which the contract does not list, is dropped.
    done = client.complete_session({
        "conversation_id": conversation_id,
        "idempotency_key": ready["idempotency_key"],
        "result": {"status": "accepted", "case_id": "DSP-7781", "risk_score": 0.12},
    }).body
    status = (done.get("session") or {}).get("status")
    print("\ncompleted: %s, output for the model %s" % (status, show(done.get("output"))))
    if status != "SESSION_STATUS_COMPLETED":
        print("CompleteSession: expected SESSION_STATUS_COMPLETED, got %s" % status, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except slotd.SlotdError as e:
        print("slotd call failed after %d attempt(s): %s%s" % (
            e.attempts, e, " — %s" % show(e.problem) if e.problem else ""), file=sys.stderr)
        sys.exit(1)
