"""The role API the pipeline calls, implemented by the OpenAI-backed and the offline provider.

    seed_inputs(task, n)               -> SeedResult      (inputs with provenance)
    decompose(task)                    -> Decomposition
    specifications(task, decomposition)-> SpecResult      (Spec.origin = provenance)
    adversaries(task, spec, n)         -> AdversaryResult (Implementation.origin / target_spec)

Both providers never raise for a bad answer: an unusable answer is re-asked
(``parse_attempts``), then recorded in ``issues``. Generated code is screened
(:mod:`veriscale.backends.screen`) before it is returned.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from veriscale.backends.base import Spec
from veriscale.backends.screen import untrusted_problem
from veriscale.benchmark.model import Task
from veriscale.llm import prompts
from veriscale.llm import signatures as S
from veriscale.llm.cache import ResponseCache
from veriscale.llm.client import ChatClient, UsageLedger
from veriscale.llm.config import Endpoint, LLMConfig, load_llm_config
from veriscale.llm.offline import (
    OfflineProvider,
    flawed_specs,
    offline_adversaries,
    offline_decomposition,
)
from veriscale.llm.parsers import (
    Decomposition,
    ParseError,
    parse_adversaries,
    parse_decomposition,
    parse_inputs,
    parse_lean_spec,
    parse_python_spec,
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


class LLMProvider:
    """Roles answered by OpenAI-compatible endpoints, with the offline fallbacks of the paper."""

    name = "openai"

    def __init__(
        self,
        config: LLMConfig,
        *,
        seed: int = 0,
        cache: ResponseCache | None = None,
        example_limit: int = 5,
    ) -> None:
        self.config = config
        self.client = ChatClient(config, cache, UsageLedger())
        self.usage = self.client.ledger
        self.example_limit = example_limit
        self.offline = OfflineProvider(seed)

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        return self.client.map(fn, items)

    # ------------------------------------------------------------------ asking

    def _ask(
        self,
        task: Task,
        role: str,
        endpoint: Endpoint,
        messages: list[dict[str, str]],
        parse: Callable[[str], T],
        variant: int = 0,
    ) -> tuple[T | None, list[str]]:
        """Ask, parse, re-ask on an unusable answer; (result or None, issues)."""
        issues: list[str] = []
        tries = self.config.parse_attempts
        for attempt in range(tries):
            resp = self.client.complete(endpoint, messages, attempt=variant * tries + attempt)
            where = f"{task.id}: {role}: {endpoint.model}"
            if not resp.ok:
                issues.append(f"{where}: request failed: {resp.error}")
                return None, issues  # transient errors were already retried with backoff
            try:
                return parse(resp.text), issues
            except Exception as exc:  # any parser surprise is an unusable answer
                self.usage.add(endpoint.model, parse_failures=1)
                kind = "unusable answer" if isinstance(exc, ParseError) else type(exc).__name__
                issues.append(f"{where}: attempt {attempt + 1}/{tries}: {kind}: {exc}"[:500])
        return None, issues

    # ------------------------------------------------------------------ roles

    def seed_inputs(self, task: Task, n: int, *, round_index: int = 0) -> SeedResult:
        result = SeedResult()
        if n <= 0:
            return result
        messages = prompts.seed_messages(task, n, example_limit=self.example_limit)

        def one(endpoint: Endpoint) -> tuple[Any, list[str], str]:
            counts = {"ill_typed": 0}

            def parse(text: str) -> Any:
                parsed = parse_inputs(text, task.signature)
                counts["ill_typed"] += parsed.ill_typed
                if not parsed.inputs:
                    raise ParseError(f"all {parsed.ill_typed} proposed inputs are ill-typed")
                return parsed

            parsed, issues = self._ask(task, "seeds", endpoint, messages, parse, round_index)
            if parsed is not None:
                parsed.ill_typed = counts["ill_typed"]
            elif counts["ill_typed"]:
                issues.append(f"{task.id}: seeds: {counts['ill_typed']} ill-typed inputs dropped")
            return parsed, issues, endpoint.model

        for parsed, issues, model in self.map(one, self.config.endpoints("seeds")):
            result.issues.extend(issues)
            if parsed is None:
                continue
            result.ill_typed += parsed.ill_typed
            result.duplicates += parsed.duplicates
            for inp in parsed.inputs:
                result.add(inp, f"llm:{model}")
        return result

    def decompose(self, task: Task) -> Decomposition:
        endpoints = self.config.endpoints("decompose")
        issues: list[str] = []
        if endpoints:
            endpoint = endpoints[0]

            def parse(text: str) -> Decomposition:
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
                             "offline-fallback: " + "; ".join(issues)[:300])

    def _screen_spec(self, task: Task, spec: Spec) -> Spec:
        lang = S.language(task)
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
        messages = prompts.spec_messages(task, d.input_model, d.output_model)
        lang = S.language(task)

        def one(endpoint: Endpoint) -> tuple[Spec | None, list[str]]:
            origin = f"llm:{endpoint.model}"

            def parse(text: str) -> Spec:
                if lang == "python":
                    spec = parse_python_spec(text, task.signature, origin)
                else:
                    spec = parse_lean_spec(text, task.signature, origin)
                return self._screen_spec(task, spec)

            return self._ask(task, "spec", endpoint, messages, parse)

        result = SpecResult()
        seen: set[str] = set()
        for spec, issues in self.map(one, self.config.endpoints("spec")):
            result.issues.extend(issues)
            if spec is not None and spec.id not in seen:
                seen.add(spec.id)
                result.specs.append(spec)
        if not result.specs and self.config.fallback_offline:
            result.specs = flawed_specs(task)
            result.issues.append(
                f"{task.id}: spec: no usable LLM specification; "
                f"{len(result.specs)} GT-derived flawed specifications used instead"
            )
        return result

    def adversaries(self, task: Task, spec: Spec, n: int | None = None) -> AdversaryResult:
        count = n or 5
        messages = prompts.adversary_messages(task, spec, count)
        lang = S.language(task)
        rejected: list[str] = []

        def one(endpoint: Endpoint) -> tuple[Any, list[str]]:
            origin = f"llm:{endpoint.model}"

            def parse(text: str) -> Any:
                parsed = parse_adversaries(
                    text, task.signature, lang, origin=origin, target_spec=spec.id
                )
                safe = []
                for impl in parsed.implementations:
                    why = untrusted_problem(impl.code, lang)
                    if why:
                        parsed.rejected.append(f"unsafe: {why}")
                    else:
                        safe.append(impl)
                rejected.extend(f"{task.id}: redteam: {endpoint.model}: {r}"
                                for r in parsed.rejected)
                if not safe:
                    raise ParseError("no safe adversarial implementation")
                parsed.implementations = safe
                return parsed

            return self._ask(task, "redteam", endpoint, messages, parse)

        result = AdversaryResult()
        seen: set[str] = set()
        for parsed, issues in self.map(one, self.config.endpoints("redteam")):
            result.issues.extend(issues)
            if parsed is None:
                continue
            for impl in parsed.implementations:
                if impl.id not in seen:
                    seen.add(impl.id)
                    result.implementations.append(impl)
        result.rejected.extend(rejected)
        if not result.implementations and self.config.fallback_offline:
            fallback = offline_adversaries(task, spec.id)
            result.implementations = fallback.implementations
            result.rejected.extend(fallback.rejected)
            result.issues.append(
                f"{task.id}: redteam: no usable LLM adversary for {spec.id}; "
                f"{len(fallback.implementations)} offline adversaries used instead"
            )
        return result


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
    (Lean or Python) prompts and parsers use.
    """
    config = load_llm_config(llm)
    if config.offline:
        return OfflineProvider(seed)
    cache = ResponseCache(cache_path) if (config.cache and cache_path is not None) else None
    return LLMProvider(config, seed=seed, cache=cache, example_limit=example_limit)
