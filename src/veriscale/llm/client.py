"""An OpenAI-compatible chat client with caching, backoff, a concurrency bound and accounting.

Works with any endpoint that speaks ``POST /v1/chat/completions`` (hosted APIs,
vLLM, Ollama, llama.cpp server). Unlike the authors' client, transient errors
(connection, timeout, 429, 5xx) are retried with exponential backoff, other
errors are reported as such rather than as an "[LLM ERROR]" string that could
be parsed as an answer, and nothing here raises for one failed request.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from veriscale.llm.cache import ResponseCache, request_key
from veriscale.llm.config import Endpoint, LLMConfig

T = TypeVar("T")
R = TypeVar("R")

Message = dict[str, str]


@dataclass(frozen=True)
class ChatResponse:
    """One answer (or the reason there is none: ``error`` non-empty)."""

    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error


@dataclass
class ModelUsage:
    requests: int = 0  # HTTP requests that returned an answer
    cache_hits: int = 0
    retries: int = 0  # transient failures that were retried
    errors: int = 0  # requests that finally failed
    parse_failures: int = 0  # answers that could not be used
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


@dataclass
class UsageLedger:
    """Token, request and cost counters per model, safe to update from many threads."""

    models: dict[str, ModelUsage] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, model: str, **deltas: float) -> None:
        with self._lock:
            usage = self.models.setdefault(model, ModelUsage())
            for name, delta in deltas.items():
                setattr(usage, name, getattr(usage, name) + delta)

    def total(self) -> ModelUsage:
        out = ModelUsage()
        with self._lock:
            for usage in self.models.values():
                for name in vars(out):
                    setattr(out, name, getattr(out, name) + getattr(usage, name))
        return out

    def to_dict(self) -> dict[str, Any]:
        """The manifest form: totals plus one entry per model (never an API key)."""
        with self._lock:
            per_model = {m: dict(vars(u)) for m, u in sorted(self.models.items())}
        total = dict(vars(self.total()))
        total["cost_usd"] = round(total["cost_usd"], 6)
        for entry in per_model.values():
            entry["cost_usd"] = round(entry["cost_usd"], 6)
        return {"total": total, "models": per_model}


def is_transient(exc: BaseException) -> bool:
    """Connection problems, timeouts, rate limits and server errors are worth retrying."""
    import openai

    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return False


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
        self._slots = threading.BoundedSemaphore(config.concurrency)
        self._clients: dict[tuple[str | None, str], Any] = {}
        self._clients_lock = threading.Lock()

    # ------------------------------------------------------------------ requests

    @staticmethod
    def build_request(endpoint: Endpoint, messages: Sequence[Message], attempt: int = 0) -> dict:
        """The request body; ``attempt`` > 0 only enters the cache key, so a re-ask
        after an unusable answer is a new (and again reproducible) request."""
        body: dict[str, Any] = {"model": endpoint.model, "messages": [dict(m) for m in messages]}
        if endpoint.temperature is not None:
            body["temperature"] = endpoint.temperature
        if endpoint.max_tokens is not None:
            body["max_tokens"] = endpoint.max_tokens
        if endpoint.seed is not None:
            body["seed"] = endpoint.seed
        if attempt:
            body["x_veriscale_attempt"] = attempt
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

    def _call(self, endpoint: Endpoint, body: dict[str, Any]) -> tuple[str, int, int]:
        params = {k: v for k, v in body.items() if not k.startswith("x_veriscale")}
        with self._slots:
            resp = self._sdk(endpoint).chat.completions.create(**params)
        choices = getattr(resp, "choices", None) or []
        text = ""
        if choices:
            message = getattr(choices[0], "message", None)
            text = (getattr(message, "content", None) or "") if message is not None else ""
        usage = getattr(resp, "usage", None)
        pt = int(getattr(usage, "prompt_tokens", 0) or 0) if usage is not None else 0
        ct = int(getattr(usage, "completion_tokens", 0) or 0) if usage is not None else 0
        return text, pt, ct

    def complete(
        self, endpoint: Endpoint, messages: Sequence[Message], *, attempt: int = 0
    ) -> ChatResponse:
        """One chat completion; served from the cache when the same request was made before."""
        body = self.build_request(endpoint, messages, attempt)
        key = request_key(body)
        model = endpoint.model
        if self.cache is not None and self.config.cache:
            hit = self.cache.get(key)
            if hit is not None:
                self.ledger.add(model, cache_hits=1)
                return ChatResponse(
                    text=hit.get("text", ""),
                    model=model,
                    prompt_tokens=int(hit.get("prompt_tokens", 0)),
                    completion_tokens=int(hit.get("completion_tokens", 0)),
                    cached=True,
                )

        def count_retry(state: RetryCallState) -> None:
            self.ledger.add(model, retries=1)

        retrying = Retrying(
            stop=stop_after_attempt(self.config.max_attempts),
            wait=wait_exponential(
                multiplier=self.config.backoff_initial, max=self.config.backoff_max
            ),
            retry=retry_if_exception(is_transient),
            before_sleep=count_retry,
            reraise=True,
        )
        try:
            text, pt, ct = retrying(self._call, endpoint, body)
        except Exception as exc:  # one failed request is a recorded error, never a crash
            self.ledger.add(model, errors=1)
            return ChatResponse(text="", model=model, error=f"{type(exc).__name__}: {exc}")
        self.ledger.add(
            model,
            requests=1,
            prompt_tokens=pt,
            completion_tokens=ct,
            cost_usd=self.config.cost(model, pt, ct),
        )
        if self.cache is not None and self.config.cache:
            self.cache.put(
                key, body, {"text": text, "prompt_tokens": pt, "completion_tokens": ct}
            )
        return ChatResponse(text=text, model=model, prompt_tokens=pt, completion_tokens=ct)

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
