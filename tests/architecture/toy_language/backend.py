"""The toy language's oracle: every question answered by the evaluator."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toy_language.expr import ExprError, evaluate
from toy_language.plugin import LANGUAGE
from veriscale.backends.base import (
    BackendStats,
    Classification,
    Implementation,
    Label,
    Outcome,
    Spec,
    Verdict,
    Verdicts,
)
from veriscale.benchmark.model import Input, Task
from veriscale.values import check


class ExprBackend:
    name = "expr"

    def __init__(self, **_options: Any) -> None:
        self.stats = BackendStats()

    def _env(self, task: Task, inp: Input) -> dict[str, Any]:
        return {p.name: v for p, v in zip(task.signature.params, inp, strict=True)}

    def _holds(self, expr: str, env: dict[str, Any]) -> tuple[Verdict, str]:
        self.stats.checks += 1
        try:
            got = evaluate(expr, env)
        except ExprError as exc:
            return Verdict.ERROR, str(exc)
        return (Verdict.of(got), "") if isinstance(got, bool) else (Verdict.ERROR, "not a bool")

    def check_inputs(self, task: Task, inputs: Sequence[Input]) -> list[str | None]:
        types = [p.type for p in task.signature.params]
        return [next((w for t, v in zip(types, inp, strict=True) if (w := check(t, v))), None)
                for inp in inputs]

    def classify(self, task: Task, inputs: Sequence[Input]) -> list[Classification]:
        pre = task.section(LANGUAGE).precond
        out = []
        for inp in inputs:
            verdict, why = self._holds(pre, self._env(task, inp))
            label = {Verdict.TRUE: Label.EXPECTED, Verdict.FALSE: Label.UNEXPECTED}.get(
                verdict, Label.UNKNOWN)
            out.append(Classification(label, "decide", why))
        return out

    def run(self, task: Task, impl: Implementation | None,
            inputs: Sequence[Input]) -> list[Outcome]:
        code = task.section(LANGUAGE).code if impl is None else impl.code
        out = []
        for inp in inputs:
            self.stats.checks += 1
            try:
                value = evaluate(code, self._env(task, inp))
            except ExprError as exc:
                out.append(Outcome(False, error=f"error: {exc}"))
                continue
            why = check(task.signature.return_type, value)
            out.append(Outcome(False, error=f"ill_typed: {why}") if why else Outcome(True, value))
        return out

    def precondition_holds(self, task: Task, spec: Spec | None,
                           inputs: Sequence[Input]) -> Verdicts:
        pre = task.section(LANGUAGE).precond if spec is None or spec.precond is None \
            else spec.precond
        got = [self._holds(pre, self._env(task, inp)) for inp in inputs]
        return Verdicts([v for v, _ in got], [w for _, w in got])

    def postcondition_holds(self, task: Task, spec: Spec | None,
                            pairs: Sequence[tuple[Input, Any]]) -> Verdicts:
        post = task.section(LANGUAGE).postcond if spec is None or spec.postcond is None \
            else spec.postcond
        got = [self._holds(post, {**self._env(task, inp), "result": out}) for inp, out in pairs]
        return Verdicts([v for v, _ in got], [w for _, w in got])

    def compile(self, task: Task, impl: Implementation | None = None,
                spec: Spec | None = None) -> str | None:
        from toy_language.plugin import screen

        texts = [impl.code] if impl else []
        if spec is not None:
            texts += [t for t in (spec.precond, spec.postcond) if t]
        return next((f"compile: {w}" for t in texts if (w := screen(t))), None)

    def close(self) -> None:
        return None
