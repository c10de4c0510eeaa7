"""A small slotd client for Python orchestrators.

It speaks to slotd's HTTP/JSON gateway with the standard library only
(urllib.request, json): copy this file into your orchestrator, no packages
to install. Bodies are slotd's gRPC messages as JSON with the proto field
names (docs/orchestrator.md); enums are names ("ACTION_ASK"), int64 values
are strings ("version": "3").

Two rules keep turns safe:

1. One turn_id per logical turn, reused on every retry. slotd applies a
   turn_id once and answers a repeat with the stored response; the response
   header ``slotd-replayed: true`` says the answer is that of an earlier
   delivery (``Reply.replayed``).
2. Retry only when slotd's problem (an ``application/problem+json`` body,
   RFC 9457) says ``retryable``, after its ``retry_after_seconds`` or the
   ``Retry-After`` header, a bounded number of times and never past the
   call's deadline. A failure that never reached slotd (connection refused
   or reset, our own timeout) has no problem and is retried the same way:
   with the same turn_id that is safe. Anything else is raised at once as
   ``SlotdError``.

A business outcome (a refused value that is asked again, a REPAIR) is not an
error: it is a 200 whose body has ``problem`` set. Hand it to the model; the
same arguments would get the same answer.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import random
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass
from typing import Callable, Optional

DEFAULT_ADDR = "127.0.0.1:8080"
PROBLEM_CONTENT_TYPE = "application/problem+json"
REPLAYED_HEADER = "Slotd-Replayed"


class SlotdError(Exception):
    """A call that failed for good.

    ``problem`` is slotd's RFC 9457 document (a dict), None when slotd's
    answer was not one or when slotd was never reached; ``status`` is the
    HTTP status, 0 when there was no answer; ``attempts`` is how many times
    the request was sent.
    """

    def __init__(self, message: str, *, status: int = 0, problem: Optional[dict] = None,
                 attempts: int = 1, retry_after: Optional[float] = None):
        super().__init__(message)
        self.status = status
        self.problem = problem
        self.attempts = attempts
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        """Whether another delivery of the same request may succeed."""
        if self.status == 0:
            return True  # slotd was not reached: a repeat is safe
        return bool(self.problem and self.problem.get("retryable") is True)

    @property
    def owner_action_required(self) -> bool:
        """Whether a person must fix something (a key, a request, a contract)."""
        return bool(self.problem and self.problem.get("owner_action_required") is True)


@dataclass(frozen=True)
class Reply:
    """A successful call: the JSON body, whether it was the stored answer of
    an earlier delivery (``slotd-replayed: true``), and how many deliveries
    it took."""

    body: dict
    replayed: bool
    attempts: int


# on_retry(attempt, wait_seconds, error) is called before each wait.
RetryHook = Callable[[int, float, SlotdError], None]


class Client:
    """slotd over HTTP/JSON.

    addr is host:port (or a full http:// or https:// URL), by default
    SLOTD_HTTP_ADDR or 127.0.0.1:8080; api_key is sent as a bearer token, by
    default SLOTD_API_KEY. Each call makes at most max_attempts deliveries,
    waits at most max_delay seconds between two, and gives up when timeout
    seconds have passed since it began.
    """

    def __init__(self, addr: Optional[str] = None, *, api_key: Optional[str] = None,
                 max_attempts: int = 5, max_delay: float = 5.0, timeout: float = 10.0,
                 on_retry: Optional[RetryHook] = None):
        addr = addr or os.environ.get("SLOTD_HTTP_ADDR") or DEFAULT_ADDR
        self.base = addr.rstrip("/") if "://" in addr else "http://" + addr
        self.api_key = api_key if api_key is not None else os.environ.get("SLOTD_API_KEY", "")
        self.max_attempts = max(1, max_attempts)
        self.max_delay = max_delay
        self.timeout = timeout
        self.on_retry = on_retry

    def turn(self, req: dict) -> Reply:
        """One logical turn: a TurnRequest as a dict, ``arguments`` as the
        model sent them. Without a ``turn_id`` one is made here, once, and
        every retry of this call reuses it. Send no ``now``: slotd's clock
        decides what "вчера" is."""
        body = dict(req)
        if not body.get("turn_id"):
            body["turn_id"] = str(uuid.uuid4())
        return self._call("POST", "/v1/turn", body)

    def complete_session(self, req: dict) -> Reply:
        """Records the backend's outcome after READY: a CompleteSessionRequest
        with ``idempotency_key`` and either ``result`` (the raw JSON the
        backend answered) or ``failure``. A repeat gets the stored answer."""
        return self._call("POST", "/v1/session/complete", req)

    def tool_schema(self, tool: str, provider: str = "openai") -> dict:
        """The tool's input schema for the model, in the provider's form
        ("openai", "anthropic" or "plain"): name, description, parameters."""
        path = "/v1/contracts/%s/schema?%s" % (
            urllib.parse.quote(tool, safe=""), urllib.parse.urlencode({"provider": provider}))
        return self._call("GET", path).body

    def get_session(self, conversation_id: str) -> dict:
        """The conversation's session: slots, missing, status, version."""
        path = "/v1/session?" + urllib.parse.urlencode({"conversation_id": conversation_id})
        return self._call("GET", path).body["session"]

    def _call(self, method: str, path: str, body: Optional[dict] = None) -> Reply:
        deadline = time.monotonic() + self.timeout
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        attempt = 0
        while True:
            attempt += 1
            try:
                return self._once(method, path, data, deadline, attempt)
            except SlotdError as err:
                err.attempts = attempt
                if not err.retryable or attempt >= self.max_attempts:
                    raise
                # slotd's wait when it names one, else a short backoff; with
                # jitter, so that clients that failed together spread out.
                base = err.retry_after or 0.2 * 2 ** (attempt - 1)
                wait = min(base * (1 + random.random() / 5), self.max_delay)
                if time.monotonic() + wait >= deadline:
                    raise
                if self.on_retry:
                    self.on_retry(attempt, wait, err)
                time.sleep(wait)

    def _once(self, method: str, path: str, data: Optional[bytes], deadline: float, attempt: int) -> Reply:
        headers = {"Accept": "application/json, " + PROBLEM_CONTENT_TYPE}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.api_key:
            headers["Authorization"] = "Bearer " + self.api_key
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        left = deadline - time.monotonic()
        if left <= 0:
            raise SlotdError("%s %s: the deadline passed" % (method, path))
        try:
            with urllib.request.urlopen(req, timeout=left) as resp:
                raw = resp.read()
                replayed = resp.headers.get(REPLAYED_HEADER, "").lower() == "true"
        except urllib.error.HTTPError as e:
            raise _refusal(method, path, e) from None
        except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
            # No answer from slotd: refused, reset, or our own timeout.
            reason = getattr(e, "reason", e)
            raise SlotdError("%s %s: slotd did not answer: %s" % (method, path, reason)) from None
        try:
            return Reply(body=json.loads(raw.decode("utf-8")), replayed=replayed, attempts=attempt)
        except ValueError as e:
            raise SlotdError("%s %s: the answer is not JSON: %s" % (method, path, e), status=200) from None


def _refusal(method: str, path: str, e: urllib.error.HTTPError) -> SlotdError:
    """The SlotdError of an HTTP error answer: its problem when the body is
    one, and the wait it names."""
    try:
        raw = e.read()
    except (OSError, http.client.HTTPException):
        raw = b""
    problem = None
    if e.headers.get("Content-Type", "").split(";")[0].strip() == PROBLEM_CONTENT_TYPE:
        try:
            doc = json.loads(raw.decode("utf-8"))
            problem = doc if isinstance(doc, dict) else None
        except ValueError:
            pass
    retry_after = None
    if problem and isinstance(problem.get("retry_after_seconds"), (int, float)) and problem["retry_after_seconds"] > 0:
        retry_after = float(problem["retry_after_seconds"])
    else:
        retry_after = _retry_after_header(e.headers.get("Retry-After"))
    what = problem.get("title", "") if problem else raw[:200].decode("utf-8", "replace")
    return SlotdError("%s %s: %d %s" % (method, path, e.code, what), status=e.code, problem=problem,
                      retry_after=retry_after)


def _retry_after_header(value: Optional[str]) -> Optional[float]:
    """Retry-After as seconds (RFC 9110: delay-seconds or an HTTP-date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value) or None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time()) or None
