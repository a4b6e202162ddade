"""pass@k with the unbiased estimator (Chen et al. 2021), as VERINA computes it.

For a task with ``n`` samples of which ``c`` pass, pass@k = 1 − C(n−c, k)/C(n, k),
evaluated as the product 1 − Π_{i=n−c+1..n} (1 − k/i) so that large ``n`` never
overflows or loses precision in binomials.
"""

from __future__ import annotations

from collections.abc import Iterable


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of ``k`` samples drawn from ``n`` passes."""
    if not (0 <= c <= n):
        raise ValueError(f"need 0 <= c <= n, got n={n} c={c}")
    if not (1 <= k <= n):
        raise ValueError(f"need 1 <= k <= n, got n={n} k={k}")
    if n - c < k:
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


def mean_pass_at_k(counts: Iterable[tuple[int, int]], k: int) -> float | None:
    """Average pass@k over tasks given ``(n, c)`` per task.

    ``None`` when some task has fewer than ``k`` samples (pass@k is then undefined;
    VERINA silently reports 1.0 for such a task when ``c < n``, which we do not).
    A task with no samples at all counts as 0 (the model produced nothing usable).
    """
    values: list[float] = []
    for n, c in counts:
        if n == 0:
            values.append(0.0)
            continue
        if n < k:
            return None
        values.append(pass_at_k(n, c, k))
    return sum(values) / len(values) if values else None
