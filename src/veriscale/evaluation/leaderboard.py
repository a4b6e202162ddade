"""Several models on several suites: the paper's Figure 5 and its comparisons.

Pure functions over :class:`~veriscale.evaluation.harness.EvaluationReport`\\ s (one
per model and suite): each model's scores with both bounds and the gap between
them, its drop from the first suite (the original) with a bootstrap confidence
interval over tasks, each suite's ranking of the models and how far two rankings
agree (Kendall's tau). The command that evaluates and prints lives in
``commands/leaderboard.py``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from veriscale.evaluation.harness import EvaluationReport

HEADLINE = ("code", "precond_postcond")
"""The paper's two scores: CodeGen (code) and SpecGen sound & complete (both halves)."""
TITLES_SHORT = {"code": "code", "precond_postcond": "spec s&c"}


def per_task(report: EvaluationReport, metric: str, bound: str) -> dict[str, float]:
    """Each task's pass@1 on ``metric`` (the share of its samples that pass)."""
    out: dict[str, float] = {}
    for t in report.tasks:
        n, c = t.counts(metric, bound)
        out[t.task_id] = c / n if n else 0.0
    return out


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def drop_interval(base: Mapping[str, float], other: Mapping[str, float], *, rounds: int = 1000,
                  seed: int = 0, level: float = 0.95) -> tuple[float, float, float] | None:
    """(drop, low, high): mean score on ``base`` minus on ``other`` over the tasks both
    have, with a percentile bootstrap interval (tasks resampled with replacement,
    ``rounds`` times, seeded). None without a common task."""
    tasks = sorted(set(base) & set(other))
    if not tasks:
        return None
    diffs = [base[t] - other[t] for t in tasks]
    drop = sum(diffs) / len(diffs)
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(rounds))
    tail = (1 - level) / 2
    lo = means[min(rounds - 1, int(tail * rounds))]
    hi = means[min(rounds - 1, int((1 - tail) * rounds))]
    return drop, lo, hi


def ranks(scores: Mapping[str, float]) -> dict[str, float]:
    """1 for the best score; tied models share the mean of their places."""
    order = sorted(scores, key=lambda m: -scores[m])
    out: dict[str, float] = {}
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        for m in order[i:j + 1]:
            out[m] = (i + j) / 2 + 1
        i = j + 1
    return out


def kendall_tau(a: Mapping[str, float], b: Mapping[str, float]) -> float | None:
    """Kendall's tau-b between two scorings of the same models (None below two models,
    or where one scoring ties them all)."""
    from scipy.stats import kendalltau

    models = sorted(set(a) & set(b))
    if len(models) < 2:
        return None
    tau = kendalltau([a[m] for m in models], [b[m] for m in models]).statistic
    return None if tau != tau else float(tau)  # NaN: a constant scoring


@dataclass
class Leaderboard:
    """``reports[suite][model]``; the first suite is the one drops are measured from."""

    suites: list[str]
    models: list[str]
    reports: dict[str, dict[str, EvaluationReport]]
    metrics: tuple[str, ...] = HEADLINE
    rounds: int = 1000
    seed: int = 0
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    def score(self, suite: str, model: str, metric: str, bound: str = "lower") -> float | None:
        return self.reports[suite][model].score(metric, bound)

    def gap(self, suite: str, model: str, metric: str) -> float | None:
        lo, up = self.score(suite, model, metric), self.score(suite, model, metric, "upper")
        return None if lo is None or up is None else up - lo

    def drop(self, suite: str, model: str, metric: str, bound: str = "lower"
             ) -> tuple[float, float, float] | None:
        """The drop from the first suite, with its interval (None on the first)."""
        if suite == self.suites[0]:
            return None
        key = ("drop", suite, model, metric, bound)
        if key not in self._cache:
            self._cache[key] = drop_interval(
                per_task(self.reports[self.suites[0]][model], metric, bound),
                per_task(self.reports[suite][model], metric, bound),
                rounds=self.rounds, seed=self.seed)
        return self._cache[key]

    def ranking(self, suite: str, metric: str, bound: str = "lower") -> dict[str, float]:
        return ranks({m: self.score(suite, m, metric, bound) or 0.0 for m in self.models})

    def tau(self, a: str, b: str, metric: str, bound: str = "lower") -> float | None:
        """Kendall's tau between suite ``a``'s and suite ``b``'s scores of the models."""
        return kendall_tau({m: self.score(a, m, metric, bound) or 0.0 for m in self.models},
                           {m: self.score(b, m, metric, bound) or 0.0 for m in self.models})

    def rows(self) -> list[dict[str, Any]]:
        """One flat row per (suite, model, metric): what the CSV holds."""
        out = []
        for suite in self.suites:
            rank = {m: self.ranking(suite, m) for m in self.metrics}
            for model in self.models:
                for metric in self.metrics:
                    d = self.drop(suite, model, metric)
                    out.append({
                        "suite": suite, "model": model, "metric": metric,
                        "lower": self.score(suite, model, metric),
                        "upper": self.score(suite, model, metric, "upper"),
                        "gap": self.gap(suite, model, metric),
                        "rank": rank[metric][model],
                        "drop": d[0] if d else None,
                        "drop_low": d[1] if d else None,
                        "drop_high": d[2] if d else None,
                        "tasks": len(self.reports[suite][model].tasks),
                        "wall_seconds": round(self.reports[suite][model].wall_seconds, 3),
                    })
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "suites": self.suites, "models": self.models, "metrics": list(self.metrics),
            "bootstrap": {"rounds": self.rounds, "seed": self.seed, "level": 0.95},
            "rows": self.rows(),
            "kendall_tau": {
                metric: {f"{a} vs {b}": self.tau(a, b, metric)
                         for i, a in enumerate(self.suites) for b in self.suites[i + 1:]}
                for metric in self.metrics},
            "reports": {s: {m: r.to_json() for m, r in by.items()}
                        for s, by in self.reports.items()},
        }
