"""The role API the pipeline calls, implemented by the OpenAI-backed and the offline provider.

    seed_inputs(task, n)               -> SeedResult      (inputs with provenance)
    decompose(task)                    -> Decomposition
    specifications(task, decomposition)-> SpecResult      (Spec.origin = provenance)
    adversaries(task, spec, n)         -> AdversaryResult (Implementation.origin / target_spec)

Both providers never raise for a bad answer: an unusable answer is re-asked
(``parse_attempts``, each re-ask a changed request), then recorded in ``issues``;
per-role accounting (asked, proposed, kept, dropped by reason, offline share) is
in each result's ``llm`` dict. A dead endpoint raises :class:`LLMUnavailable`.
Generated code is screened (:mod:`veriscale.backends.screen`) before it is returned.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from veriscale.backends.answers import ParseError, Rejection, answer_text, rejection_kind
from veriscale.backends.base import Spec
from veriscale.backends.language import language_of, plugin_for
from veriscale.backends.screen import untrusted_problem
from veriscale.benchmark.model import Task
from veriscale.llm import prompts
from veriscale.llm.cache import ResponseCache
from veriscale.llm.client import ChatClient, LLMUnavailable, UsageLedger
from veriscale.llm.config import Endpoint, LLMConfig, load_llm_config
from veriscale.llm.offline import (
    OfflineProvider,
    flawed_specs,
    offline_adversaries,
    offline_decomposition,
)
from veriscale.llm.parsers import (
    Decomposition,
    ParsedAdversaries,
    parse_decomposition,
    parse_inputs,
    parse_red_team_answer,
)
from veriscale.llm.results import AdversaryResult, SeedResult, SpecResult

T = TypeVar("T")
R = TypeVar("R")


@runtime_checkable
class Provider(Protocol):
    name: str

    def seed_inputs(self, task: Task, n: int, *, round_index: int = 0) -> SeedResult: ...

    def decompose(self, task: Task) -> Decomposition: ...

    def specifications(self, task: Task, decomposition: Decomposition | None = None
                       ) -> SpecResult: ...

    def adversaries(self, task: Task, spec: Spec, n: int | None = None) -> AdversaryResult: ...


CONTINUE = ("Your answer was cut off by the length limit. Continue exactly where it "
            "stopped, without repeating anything and without any preamble.")


def _reask_feedback(why: str) -> str:
    return (f"That answer could not be used: {why[:300]}. Answer again, following the "
            "required format exactly, with only the final answer.")


def _bump(counter: dict[str, int], kind: str, by: int = 1) -> None:
    if by:
        counter[kind] = counter.get(kind, 0) + by


def merge_accounting(parts: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Sum per-role accounting dicts (ints add, dicts of ints add, strings join)."""
    out: dict[str, Any] = {}
    for part in parts:
        for key, value in (part or {}).items():
            if isinstance(value, (bool, str)):
                out[key] = value if key not in out or out[key] == value else "mixed"
            elif isinstance(value, (int, float)):
                out[key] = out.get(key, 0) + value
            elif isinstance(value, dict):
                inner = out.setdefault(key, {})
                for k, v in value.items():
                    inner[k] = inner.get(k, 0) + v
    return out


class LLMProvider:
    """Roles answered by OpenAI-compatible endpoints, with the offline fallbacks of the paper.

    A request that finally fails is recorded against its task
    (:meth:`take_request_failures`), so the pipeline stores that task's stage as
    provisional and the next run asks again. When the endpoint cannot answer at
    all (``client.unavailable``) the roles raise :class:`LLMUnavailable` (the run
    stops), or with ``fallback = "offline"`` answer offline and say so.
    """

    name = "openai"

    def __init__(
        self,
        config: LLMConfig,
        *,
        seed: int = 0,
        cache: ResponseCache | None = None,
        example_limit: int = 5,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        self.config = config
        self.client = ChatClient(config, cache, UsageLedger(store=cache, priced=config.priced))
        self.usage = self.client.ledger
        self.example_limit = example_limit
        self.offline = OfflineProvider(seed)
        self.notify = notify or _stderr_notice
        self._failures: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        return self.client.map(fn, items)

    # ------------------------------------------------------------------ health

    def stopped(self) -> str:
        """Why the run must stop ("" while it may go on)."""
        return self.client.unavailable if self.config.fallback == "stop" else ""

    def take_request_failures(self, task_id: str) -> list[str]:
        """The failed requests recorded for ``task_id`` since the last call (then cleared)."""
        with self._lock:
            return self._failures.pop(task_id, [])

    def _failed(self, task: Task, message: str) -> None:
        with self._lock:
            self._failures.setdefault(task.id, []).append(message[:300])
        self._check_available()

    def _check_available(self) -> bool:
        """False when the roles must answer offline; raises when the run must stop."""
        why = self.client.unavailable
        if not why:
            return True
        if self.config.fallback == "stop":
            raise LLMUnavailable(why)
        with self._lock:
            first = not self.usage.fallback
            if first:
                self.usage.fallback = {"mode": "offline", "reason": why}
        if first:
            self.notify(f"LLM endpoint unusable, continuing OFFLINE (fallback = \"offline\"): "
                        f"{why}. Stages that needed it are not stored as final; "
                        "the next run asks again.")
        return False

    def _offline_now(self, task: Task, role: str) -> bool:
        """True (after recording) when ``role`` must answer offline for ``task``."""
        if self._check_available():
            return False
        self._failed(task, f"{task.id}: {role}: offline fallback: {self.client.unavailable}")
        return True

    # ------------------------------------------------------------------ asking

    def _ask(
        self,
        task: Task,
        role: str,
        endpoint: Endpoint,
        messages: list[dict[str, str]],
        parse: Callable[[str, bool], T],
        variant: int = 0,
        stats: dict[str, int] | None = None,
    ) -> tuple[T | None, list[str]]:
        """Ask, parse, and re-ask on an unusable answer; (result or None, issues).

        Every re-ask changes the request: after a truncated answer it raises the
        token budget (or, without one, asks the model to continue and parses the
        joined text); after an empty or unusable one it says why. At most
        ``parse_attempts`` paid asks; each re-ask is counted in the ledger.
        """
        issues: list[str] = []
        stats = stats if stats is not None else {}
        tries = self.config.parse_attempts
        where = f"{task.id}: {role}: {endpoint.model}"
        convo = list(messages)
        prefix = ""
        limit = endpoint.token_limit
        budget = limit[1] if limit else None
        for attempt in range(tries):
            resp = self.client.complete(endpoint, convo, variant=variant,
                                        max_tokens=budget if attempt else None)
            if attempt and not resp.cached and resp.ok:
                self.usage.add(endpoint.model, reasks=1)
                _bump(stats, "reasks")
            if not resp.ok:
                issues.append(f"{where}: request failed: {resp.error}"[:500])
                _bump(stats, "requests_failed")
                self._failed(task, f"{where}: {resp.error}")
                return None, issues  # transient errors were already retried with backoff
            text = prefix + resp.text
            if resp.truncated:
                _bump(stats, "truncated")
            try:
                return parse(text, resp.truncated), issues
            except Exception as exc:  # any parser surprise is an unusable answer
                self.usage.add(endpoint.model, parse_failures=1)
                kind = "unusable answer" if isinstance(exc, ParseError) else type(exc).__name__
                if resp.truncated:
                    kind = (f"answer cut at {resp.completion_tokens or '?'} tokens "
                            f"(finish_reason=length); {kind}")
                elif not answer_text(resp.text).strip():
                    kind = "empty answer" + (" (only reasoning)" if resp.reasoning
                                             or resp.text.strip() else "")
                issues.append(f"{where}: attempt {attempt + 1}/{tries}: {kind}: {exc}"[:500])
            if attempt + 1 >= tries:
                break
            if resp.truncated and budget is not None:
                budget *= 2  # the same question with room to finish
                issues.append(f"{where}: re-asking with {limit[0] if limit else 'max_tokens'}"
                              f"={budget}")
            elif resp.truncated and resp.text.strip():
                prefix = text
                convo = [*convo, {"role": "assistant", "content": resp.text},
                         {"role": "user", "content": CONTINUE}]
            else:
                shown = answer_text(resp.text)[-4000:] or "(empty)"
                convo = [*messages, {"role": "assistant", "content": shown},
                         {"role": "user", "content": _reask_feedback(str(issues[-1]))}]
                prefix = ""
        return None, issues

    # ------------------------------------------------------------------ roles

    def seed_inputs(self, task: Task, n: int, *, round_index: int = 0) -> SeedResult:
        result = SeedResult()
        if n <= 0:
            return result
        endpoints = self.config.endpoints("seeds")
        if self._offline_now(task, "seeds"):
            fallback = self.offline.seed_inputs(task, n, round_index=round_index)
            fallback.issues.append(f"{task.id}: seeds: offline fallback (endpoint unusable)")
            fallback.llm = {"asked": 0, "offline_fallback": len(fallback)}
            return fallback
        messages = prompts.seed_messages(task, n, example_limit=self.example_limit)
        stats: dict[str, Any] = {"asked": n * len(endpoints), "proposed": 0, "kept": 0}
        dropped: dict[str, int] = {}

        def one(endpoint: Endpoint) -> tuple[Any, list[str], str]:
            last: dict[str, Any] = {}

            def parse(text: str, truncated: bool) -> Any:
                parsed = parse_inputs(text, task.signature)
                last["parsed"] = parsed
                if not parsed.inputs:
                    raise ParseError(f"none of the {parsed.proposed} proposed inputs is usable: "
                                     + "; ".join(parsed.reasons[:3]))
                return parsed

            parsed, issues = self._ask(task, "seeds", endpoint, messages, parse, round_index,
                                       stats)
            final = parsed or last.get("parsed")
            if final is not None:
                with self._lock:
                    stats["proposed"] += final.proposed
                    for kind, count in final.dropped.items():
                        _bump(dropped, kind, count)
                if final.reasons:
                    issues.append(f"{task.id}: seeds: {endpoint.model}: dropped "
                                  f"{sum(final.dropped.values())} of {final.proposed}: "
                                  + "; ".join(final.reasons))
            return parsed, issues, endpoint.model

        for parsed, issues, model in self.map(one, endpoints):
            result.issues.extend(issues)
            if parsed is None:
                continue
            result.ill_typed += parsed.ill_typed
            result.duplicates += parsed.duplicates
            for inp in parsed.inputs:
                if not result.add(inp, f"llm:{model}"):
                    _bump(dropped, "duplicate")
        if self._offline_now(task, "seeds") and not result.inputs:
            fallback = self.offline.seed_inputs(task, n, round_index=round_index)
            for inp, prov in fallback:
                result.add(inp, prov)
            stats["offline_fallback"] = len(fallback)
        stats["kept"] = sum(1 for p in result.provenance if p.startswith("llm:"))
        stats["dropped"] = dropped
        result.llm = stats
        return result

    def decompose(self, task: Task) -> Decomposition:
        endpoints = self.config.endpoints("decompose")
        issues: list[str] = []
        if endpoints and not self._offline_now(task, "decompose"):
            endpoint = endpoints[0]

            def parse(text: str, truncated: bool) -> Decomposition:
                d = parse_decomposition(text)
                return Decomposition(d.input_model, d.output_model, f"llm:{endpoint.model}")

            found, issues = self._ask(
                task, "decompose", endpoint, prompts.decompose_messages(task), parse
            )
            if found is not None:
                return found
        # Unlike the authors' "Failed to call the LLM" text, a failure falls back to the
        # description's own sections, so the spec prompts stay meaningful.
        fallback = offline_decomposition(task)
        return Decomposition(fallback.input_model, fallback.output_model,
                             "offline-fallback: " + ("; ".join(issues)[:300] or "offline"))

    def _screen_spec(self, task: Task, spec: Spec) -> Spec:
        lang = language_of(task)
        for part, kind in ((spec.precond_aux, "commands"), (spec.precond, "term"),
                           (spec.postcond_aux, "commands"), (spec.postcond, "term")):
            why = untrusted_problem(part, lang, kind) if part else None
            if why:
                raise ParseError(f"unsafe specification: {why}")
        return spec

    def specifications(
        self, task: Task, decomposition: Decomposition | None = None
    ) -> SpecResult:
        d = decomposition or self.decompose(task)
        plugin = plugin_for(task)
        endpoints = self.config.endpoints("spec")
        result = SpecResult()
        stats: dict[str, Any] = {"asked": len(endpoints), "kept": 0}
        dropped: dict[str, int] = {}
        if not self._offline_now(task, "spec"):
            messages = prompts.spec_messages(task, d.input_model, d.output_model)

            def one(endpoint: Endpoint) -> tuple[Spec | None, list[str]]:
                origin = f"llm:{endpoint.model}"

                def parse(text: str, truncated: bool) -> Spec:
                    spec = plugin.parse_spec_answer(text, task, origin, truncated=truncated)
                    return self._screen_spec(task, spec)

                return self._ask(task, "spec", endpoint, messages, parse, stats=stats)

            seen: set[str] = set()
            for spec, issues in self.map(one, endpoints):
                result.issues.extend(issues)
                if spec is None:
                    _bump(dropped, "unusable")
                elif spec.id in seen:
                    _bump(dropped, "duplicate")
                else:
                    seen.add(spec.id)
                    result.specs.append(spec)
        stats["kept"] = len(result.specs)
        stats["dropped"] = dropped
        if not result.specs and (self.config.fallback_offline or self.usage.fallback):
            result.specs = flawed_specs(task)
            stats["offline_fallback"] = len(result.specs)
            result.issues.append(
                f"{task.id}: spec: no usable LLM specification; "
                f"{len(result.specs)} GT-derived flawed specifications used instead"
            )
        result.llm = stats
        return result

    def adversaries(self, task: Task, spec: Spec, n: int | None = None) -> AdversaryResult:
        count = n or 5
        lang = language_of(task)
        plugin = plugin_for(lang)
        endpoints = self.config.endpoints("redteam")
        rejected: list[str] = []
        stats: dict[str, Any] = {"asked": count * len(endpoints), "proposed": 0, "kept": 0}
        dropped: dict[str, int] = {}
        result = AdversaryResult()
        if not self._offline_now(task, "redteam"):
            messages = prompts.adversary_messages(task, spec, count)

            def one(endpoint: Endpoint) -> tuple[Any, list[str]]:
                origin = f"llm:{endpoint.model}"

                def parse(text: str, truncated: bool) -> Any:
                    impls, bad = parse_red_team_answer(plugin, text, task, origin, spec.id,
                                                       truncated=truncated)
                    parsed = ParsedAdversaries(impls, bad)
                    safe = []
                    for impl in parsed.implementations:
                        why = untrusted_problem(impl.code, lang)
                        if why:
                            parsed.rejected.append(Rejection(f"unsafe: {why}", "unsafe"))
                        else:
                            safe.append(impl)
                    with self._lock:
                        stats["proposed"] += len(parsed.implementations) + sum(
                            1 for r in parsed.rejected if rejection_kind(r) != "unsafe")
                        for r in parsed.rejected:
                            _bump(dropped, rejection_kind(r))
                    rejected.extend(f"{task.id}: redteam: {endpoint.model}: {r}"
                                    for r in parsed.rejected)
                    if not safe:
                        raise ParseError("no safe adversarial implementation")
                    parsed.implementations = safe
                    return parsed

                return self._ask(task, "redteam", endpoint, messages, parse, stats=stats)

            seen: set[str] = set()
            for parsed, issues in self.map(one, endpoints):
                result.issues.extend(issues)
                if parsed is None:
                    continue
                for impl in parsed.implementations:
                    if impl.id not in seen:
                        seen.add(impl.id)
                        result.implementations.append(impl)
                    else:
                        _bump(dropped, "duplicate")
        result.rejected.extend(rejected)
        stats["kept"] = len(result.implementations)
        stats["dropped"] = dropped
        if not result.implementations and (self.config.fallback_offline or self.usage.fallback):
            fallback = offline_adversaries(task, spec.id)
            result.implementations = fallback.implementations
            result.rejected.extend(fallback.rejected)
            stats["offline_fallback"] = len(fallback.implementations)
            result.issues.append(
                f"{task.id}: redteam: no usable LLM adversary for {spec.id}; "
                f"{len(fallback.implementations)} offline adversaries used instead"
            )
        result.llm = stats
        return result


def _stderr_notice(message: str) -> None:
    from rich.console import Console

    Console(stderr=True).print(f"[bold red]LLM:[/] {message}")


def request_failures(provider: Any, task_id: str) -> list[str]:
    """Failed LLM requests of ``task_id`` (any provider; offline has none)."""
    take = getattr(provider, "take_request_failures", None)
    return list(take(task_id)) if callable(take) else []


def raise_if_stopped(provider: Any) -> None:
    """Raise :class:`LLMUnavailable` when the provider says the run must stop."""
    stopped = getattr(provider, "stopped", None)
    why = stopped() if callable(stopped) else ""
    if why:
        usage = getattr(provider, "usage", None)
        if usage is not None and not getattr(usage, "fallback", None):
            usage.fallback = {"mode": "stop", "reason": why}
        raise LLMUnavailable(why)


def usage_summary(provider: Any, llm: Any, cache_path: Path | str) -> dict[str, Any]:
    """The manifest's ``llm_usage``: cumulative over every run of the run directory,
    also when this run asked nothing (every stage resumed, the provider never made)."""
    usage = getattr(provider, "usage", None) if provider is not None else None
    if usage is not None and hasattr(usage, "to_dict"):
        data = usage.to_dict()
        return data if data.get("models") or not isinstance(provider, OfflineProvider) else {}
    try:
        config = load_llm_config(llm)
    except Exception:
        return {}
    if config.offline or not Path(cache_path).is_file():
        return {}
    store = ResponseCache(cache_path)
    try:
        return UsageLedger(store=store, priced=config.priced).to_dict()
    finally:
        store.close()


def make_provider(
    llm: dict[str, Any] | LLMConfig | None = None,
    *,
    backend: str = "",
    seed: int = 0,
    cache_path: Path | str | None = None,
    example_limit: int = 5,
) -> OfflineProvider | LLMProvider:
    """The provider a run config asks for: offline unless an endpoint/model is configured.

    ``backend`` is accepted for the record; the task itself says which language
    plug-in's prompt parts and parsers are used.
    """
    config = load_llm_config(llm)
    if config.offline:
        return OfflineProvider(seed)
    # The database also keeps cumulative usage, so it exists even with cache = false.
    cache = ResponseCache(cache_path) if cache_path is not None else None
    return LLMProvider(config, seed=seed, cache=cache, example_limit=example_limit)
