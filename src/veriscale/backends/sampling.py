"""Deterministic choice of distinct flawed candidates, shared by the language plug-ins'
code and spec mutants (the driver is :mod:`veriscale.evaluation.mutants`)."""

from __future__ import annotations

import random
from collections.abc import Callable

DEFAULT_MAX_PER_KIND = 20


def pick_distinct(items: list[tuple[str, str]], limit: int, seed: int, key: str,
          original: str, normalise: Callable[[str], str]) -> list[tuple[str, str]]:
    """Distinct mutants (operator, text) that differ from the original; at most ``limit``."""
    seen = {normalise(original)}
    uniq: list[tuple[str, str]] = []
    for op, text in items:
        norm = normalise(text)
        if norm in seen:
            continue
        seen.add(norm)
        uniq.append((op, text))
    if len(uniq) <= limit:
        return uniq
    rng = random.Random(f"{seed}:{key}")
    keep = sorted(rng.sample(range(len(uniq)), limit))
    return [uniq[i] for i in keep]
