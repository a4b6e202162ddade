"""An OpenAI-compatible chat client with caching, backoff, a concurrency bound and accounting.

Works with any endpoint that speaks ``POST /v1/chat/completions`` (hosted APIs,
vLLM, Ollama, llama.cpp server). Transient errors (connection, timeout, 429,
5xx) are retried with jittered exponential backoff that honours
``Retry-After``, within an overall deadline per request. A request that finally
fails is recorded and never cached. An endpoint that cannot answer at all
(authentication, missing model, every request failing) marks the client
*unavailable*: the provider then stops the run or, if the config says so, falls
back offline loudly.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_before_delay,
    wait_random_exponential,
)

from veriscale.llm.cache import ResponseCache, request_key
from veriscale.llm.config import Endpoint, LLMConfig

T = TypeVar("T")
R = TypeVar("R")

Message = dict[str, str]


class LLMUnavailable(RuntimeError):
    """The endpoint cannot answer at all; the run stops (unless ``fallback = "offline"``)."""


@dataclass(frozen=True)
class ChatResponse:
    """One answer (or the reason there is none: ``error`` non-empty).

    ``reasoning`` is the model's thinking when the API returns it separately
    (``reasoning_content``); it is kept apart from ``text`` and never parsed.
    """

    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    error: str = ""
    finish_reason: str = ""
    reasoning: str = ""

    @property
    def ok(self) -> bool:
        return not self.error

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


USAGE_FIELDS = (
    "requests", "cache_hits", "retries", "errors", "parse_failures", "reasks", "truncated",
    "usage_missing", "prompt_tokens", "completion_tokens", "cached_prompt_tokens",
    "cached_completion_tokens", "cost_usd",
)


@dataclass
class ModelUsage:
    requests: int = 0  # paid HTTP requests that returned an answer
    cache_hits: int = 0  # answers served from the cache (cost nothing)
    retries: int = 0  # transient failures that were retried
    errors: int = 0  # requests that finally failed (never cached)
    parse_failures: int = 0  # answers that could not be used
    reasks: int = 0  # paid re-asks after an unusable, truncated or empty answer
    truncated: int = 0  # answers cut by the token limit (finish_reason "length")
    usage_missing: int = 0  # answers without a usage block: tokens and cost unknown
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0  # tokens of cache hits, at $0
    cached_completion_tokens: int = 0
    cost_usd: float = 0.0


def _usage_dict(usage: ModelUsage, priced: bool | None) -> dict[str, Any]:
    out: dict[str, Any] = dict(vars(usage))
    out["cost_usd"] = round(out["cost_usd"], 6)
    if priced is not None:
        out["priced"] = priced
    return out


@dataclass
class UsageLedger:
    """Token, request and cost counters per model, safe to update from many threads.

    With a ``store`` (the run directory's cache database) every delta is also
    added to cumulative counters on disk, so reruns and resumed runs add up.
    """

    models: dict[str, ModelUsage] = field(default_factory=dict)
    store: ResponseCache | None = None
    priced: Callable[[str], bool] | None = None
    fallback: dict[str, Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, model: str, **deltas: float) -> None:
        with self._lock:
            usage = self.models.setdefault(model, ModelUsage())
            for name, delta in deltas.items():
                setattr(usage, name, getattr(usage, name) + delta)
        if self.store is not None:
            with contextlib.suppress(Exception):  # accounting must never break a request
                self.store.add_usage(model, deltas)

    def total(self) -> ModelUsage:
        out = ModelUsage()
        with self._lock:
            for usage in self.models.values():
                for name in vars(out):
                    setattr(out, name, getattr(out, name) + getattr(usage, name))
        return out

    def _all_runs(self) -> dict[str, ModelUsage]:
        if self.store is None:
            with self._lock:
                return {m: ModelUsage(**vars(u)) for m, u in self.models.items()}
        out: dict[str, ModelUsage] = {}
        for model, counters in self.store.usage().items():
            u = ModelUsage()
            for name, value in counters.items():
                if name in USAGE_FIELDS:
                    setattr(u, name, value if name == "cost_usd" else int(value))
            out[model] = u
        return out

    def to_dict(self) -> dict[str, Any]:
        """The manifest form (never an API key): ``total``/``models`` over every run of
        the run directory, ``this_run`` for this invocation; unpriced models flagged."""
        every = self._all_runs()
        total = ModelUsage()
        for u in every.values():
            for name in vars(total):
                setattr(total, name, getattr(total, name) + getattr(u, name))
        priced = self.priced or (lambda m: True)
        unpriced = sorted(m for m, u in every.items() if u.requests and not priced(m))
        out: dict[str, Any] = {
            "total": _usage_dict(total, None),
            "models": {m: _usage_dict(u, priced(m)) for m, u in sorted(every.items())},
            "this_run": _usage_dict(self.total(), None),
        }
        if unpriced:
            out["unpriced_models"] = unpriced
            out["cost_note"] = ("cost_usd is a lower bound: no [llm.prices] entry for "
                                + ", ".join(unpriced))
        if total.usage_missing:
            out["usage_note"] = f"{total.usage_missing} answers carried no usage block"
        if self.fallback:
            out["fallback"] = dict(self.fallback)
        return out


# ---------------------------------------------------------------------- errors


def status_of(exc: BaseException) -> int | None:
    code = getattr(exc, "status_code", None)
    return code if isinstance(code, int) else None


def is_transient(exc: BaseException) -> bool:
    """Connection problems, timeouts, rate limits and server errors are worth retrying."""
    import openai

    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, _UnreadableBody):
        return True
    code = status_of(exc)
    if code is not None:
        return code in (408, 409, 429) or code >= 500
    return False


def fatal_reason(exc: BaseException) -> str | None:
    """Why no request to this endpoint can succeed (401/403: the key; 404: the model
    or the URL), or ``None`` for a failure that may be particular to one request."""
    code = status_of(exc)
    message = _error_message(exc)
    if code in (401, 403):
        return f"authentication failed (HTTP {code}): {message}"
    if code == 404:
        return f"model or endpoint not found (HTTP 404): {message}"
    return None


def _error_message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:300]
        if isinstance(body.get("message"), str):
            return body["message"][:300]
    return str(exc)[:300]


def retry_after_seconds(headers: Any, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` / ``retry-after-ms`` header asks to wait (None: no header)."""
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000.0)
        value = headers.get("retry-after")
    except Exception:
        return None
    if value is None:
        return None
    value = str(value).strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class RetryAfterWait:
    """Full-jitter exponential backoff, but never shorter than the server's Retry-After."""

    def __init__(self, initial: float, maximum: float) -> None:
        self.jitter = wait_random_exponential(multiplier=initial, max=maximum)

    def __call__(self, state: RetryCallState) -> float:
        wait = float(self.jitter(state))
        exc = state.outcome.exception() if state.outcome is not None else None
        response = getattr(exc, "response", None)
        asked = retry_after_seconds(getattr(response, "headers", None))
        return max(wait, asked) if asked is not None else wait


# ---------------------------------------------------------------------- bodies


class _UnreadableBody(ValueError):
    """A 200 response whose body is neither a completion nor an SSE stream of one."""


@dataclass
class Completion:
    text: str
    reasoning: str
    finish_reason: str
    usage: dict[str, Any] | None


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _message_reasoning(message: dict[str, Any]) -> str:
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def read_completion(body: str) -> Completion:
    """Text, set-aside reasoning, finish reason and usage of a response body.

    Accepts a JSON completion and also an SSE stream (``data: {...}`` chunks),
    which some servers send even to non-streaming requests; anything else is
    unreadable, so it is retried and never cached as an empty success.
    """
    stripped = body.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError as exc:
            raise _UnreadableBody(f"response is not JSON: {exc}") from None
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list):
            raise _UnreadableBody("response has no choices")
        first = choices[0] if choices and isinstance(choices[0], dict) else {}
        message = first.get("message") if isinstance(first.get("message"), dict) else {}
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else None
        return Completion(_content_text(message.get("content")), _message_reasoning(message),
                          str(first.get("finish_reason") or ""), usage)
    if stripped.startswith(("data:", "event:", ":")):
        text: list[str] = []
        reasoning: list[str] = []
        finish = ""
        usage = None
        chunks = 0
        for line in stripped.splitlines():
            line = line.strip()
            if not line.startswith("data:"):
                continue
            payload = line[5:].strip()
            if payload == "[DONE]":
                continue
            try:
                chunk = json.loads(payload)
            except ValueError:
                continue
            chunks += 1
            if isinstance(chunk.get("usage"), dict):
                usage = chunk["usage"]
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or choice.get("message") or {}
                text.append(_content_text(delta.get("content")))
                reasoning.append(_message_reasoning(delta))
                finish = str(choice.get("finish_reason") or finish)
        if not chunks:
            raise _UnreadableBody("event stream without a completion chunk")
        return Completion("".join(text), "".join(reasoning), finish, usage)
    raise _UnreadableBody(f"response body is not a completion: {stripped[:80]!r}")


# ---------------------------------------------------------------------- client


class ChatClient:
    """Chat completions through the ``openai`` SDK, one SDK client per (endpoint, key variable)."""

    def __init__(
        self,
        config: LLMConfig,
        cache: ResponseCache | None = None,
        ledger: UsageLedger | None = None,
    ) -> None:
        self.config = config
        self.cache = cache
        self.ledger = ledger if ledger is not None else UsageLedger()
        if self.ledger.store is None and cache is not None:
            self.ledger.store = cache
        if self.ledger.priced is None:
            self.ledger.priced = config.priced
        self._slots = threading.BoundedSemaphore(config.concurrency)
        self._clients: dict[tuple[str | None, str], Any] = {}
        self._clients_lock = threading.Lock()
        self._health: dict[tuple[str | None, str], int] = {}  # consecutive final failures
        self.unavailable: str = ""  # set once the endpoint cannot answer at all

    # ------------------------------------------------------------------ requests

    @staticmethod
    def build_request(
        endpoint: Endpoint, messages: Sequence[Message], variant: int = 0,
        max_tokens: int | None = None,
    ) -> dict:
        """The request body. ``variant`` > 0 only enters the cache key (another round
        of the same question); ``max_tokens`` overrides the endpoint's budget (a re-ask
        after truncation)."""
        body: dict[str, Any] = {"model": endpoint.model, "messages": [dict(m) for m in messages]}
        if endpoint.temperature is not None:
            body["temperature"] = endpoint.temperature
        limit = endpoint.token_limit
        if max_tokens is not None:
            body[limit[0] if limit else "max_completion_tokens"] = max_tokens
        elif limit is not None:
            body[limit[0]] = limit[1]
        if endpoint.reasoning_effort is not None:
            body["reasoning_effort"] = endpoint.reasoning_effort
        if endpoint.seed is not None:
            body["seed"] = endpoint.seed
        for key, value in endpoint.extra_body.items():
            body.setdefault(key, value)
        if variant:
            body["x_veriscale_variant"] = variant
        return body

    def _sdk(self, endpoint: Endpoint) -> Any:
        import openai

        env = endpoint.api_key_env or self.config.api_key_env
        key = (endpoint.base_url, env)
        with self._clients_lock:
            client = self._clients.get(key)
            if client is None:
                # Local servers (vLLM, Ollama) need no key; the SDK insists on one.
                api_key = os.environ.get(env) or "not-set"
                client = openai.OpenAI(
                    api_key=api_key,
                    base_url=endpoint.base_url,
                    timeout=self.config.timeout,
                    max_retries=0,  # tenacity does the retrying, with our policy
                )
                self._clients[key] = client
        return client

    def _call(self, endpoint: Endpoint, body: dict[str, Any], deadline: float) -> Completion:
        params = {k: v for k, v in body.items() if not k.startswith("x_veriscale")}
        known = {"model", "messages", "temperature", "max_tokens", "max_completion_tokens",
                 "reasoning_effort", "seed"}
        extra = {k: params.pop(k) for k in list(params) if k not in known}
        timeout = max(1.0, min(self.config.timeout, deadline - time.monotonic()))
        with self._slots:
            raw = self._sdk(endpoint).chat.completions.with_raw_response.create(
                **params, extra_body=extra or None,
                extra_headers=dict(endpoint.extra_headers) or None, timeout=timeout,
            )
            text = raw.http_response.text
        return read_completion(text)

    def complete(
        self, endpoint: Endpoint, messages: Sequence[Message], *, variant: int = 0,
        max_tokens: int | None = None,
    ) -> ChatResponse:
        """One chat completion; served from the cache when the same request was made before."""
        body = self.build_request(endpoint, messages, variant, max_tokens)
        key = request_key(body)
        model = endpoint.model
        use_cache = self.cache is not None and self.config.cache
        if use_cache:
            hit = self.cache.get(key)
            if hit is not None:
                pt, ct = int(hit.get("prompt_tokens", 0)), int(hit.get("completion_tokens", 0))
                self.ledger.add(model, cache_hits=1, cached_prompt_tokens=pt,
                                cached_completion_tokens=ct)
                return ChatResponse(
                    text=hit.get("text", ""), model=model, prompt_tokens=pt,
                    completion_tokens=ct, cached=True,
                    finish_reason=str(hit.get("finish_reason", "")),
                    reasoning=str(hit.get("reasoning", "")),
                )
        if self.unavailable:
            return ChatResponse(text="", model=model, error=f"unavailable: {self.unavailable}")

        def count_retry(state: RetryCallState) -> None:
            self.ledger.add(model, retries=1)

        deadline = time.monotonic() + self.config.request_deadline
        retrying = Retrying(
            stop=stop_after_attempt(self.config.max_attempts)
            | stop_before_delay(self.config.request_deadline),
            wait=RetryAfterWait(self.config.backoff_initial, self.config.backoff_max),
            retry=retry_if_exception(is_transient),
            before_sleep=count_retry,
            reraise=True,
        )
        try:
            got: Completion = retrying(self._call, endpoint, body, deadline)
        except Exception as exc:  # one failed request is a recorded error, never a crash
            self.ledger.add(model, errors=1)
            return ChatResponse(text="", model=model, error=self._failed(endpoint, exc))
        self._health[(endpoint.base_url, model)] = 0
        usage = got.usage or {}
        pt = int(usage.get("prompt_tokens") or 0)
        ct = int(usage.get("completion_tokens") or 0)
        self.ledger.add(
            model, requests=1, prompt_tokens=pt, completion_tokens=ct,
            cost_usd=self.config.cost(model, pt, ct), usage_missing=0 if got.usage else 1,
            truncated=1 if got.finish_reason == "length" else 0,
        )
        if use_cache and got.text.strip():  # an empty answer is asked again next time
            self.cache.put(key, body, {
                "text": got.text, "prompt_tokens": pt, "completion_tokens": ct,
                "finish_reason": got.finish_reason, "reasoning": got.reasoning,
            })
        return ChatResponse(text=got.text, model=model, prompt_tokens=pt, completion_tokens=ct,
                            finish_reason=got.finish_reason, reasoning=got.reasoning)

    def _failed(self, endpoint: Endpoint, exc: Exception) -> str:
        """The error text of a failed request; marks the client unavailable when the
        endpoint cannot answer at all."""
        code = status_of(exc)
        text = f"{type(exc).__name__}" + (f" (HTTP {code})" if code else "")
        text += f": {_error_message(exc)}"
        where = f"{endpoint.model} at {endpoint.base_url or 'the default endpoint'}"
        fatal = fatal_reason(exc)
        key = (endpoint.base_url, endpoint.model)
        with self._clients_lock:
            self._health[key] = self._health.get(key, 0) + 1
            failures = self._health[key]
            if fatal and not self.unavailable:
                self.unavailable = f"{where}: {fatal}"
            elif failures >= self.config.max_consecutive_failures and not self.unavailable:
                self.unavailable = (f"{where}: {failures} requests in a row failed "
                                    f"(after retries); last: {text}")
        return text

    # ------------------------------------------------------------------ fan-out

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """``fn`` over ``items`` on a thread pool, results in input order.

        The HTTP bound is the semaphore in :meth:`complete`, so nesting ``map``
        calls never exceeds ``config.concurrency`` requests in flight.
        """
        items = list(items)
        if len(items) <= 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(max_workers=min(len(items), self.config.concurrency)) as pool:
            return list(pool.map(fn, items))
