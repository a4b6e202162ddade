"""What a prover backend remembers of checks that stopped it (a time-out, a crash).

A check of a function that ran out of its time (or took the prover down) on one input
will most likely do so on any input no smaller: the backend answers those UNKNOWN at
once, in every later file, instead of paying the limit again. Smaller inputs still run.
Size is the check's text length, the same measure the backends order checks by.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Generic, TypeVar

Why = TypeVar("Why")


class StopMemory(Generic[Why]):
    """Per key (a function of one candidate, as the backend names it), the smallest
    check that stopped the prover and why; shared by the backend's threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._smallest: dict[Hashable, tuple[int, Why]] = {}

    def remember(self, key: Hashable, size: int, why: Why) -> None:
        """Keep ``size`` (and ``why``) if it is the smallest stop of ``key`` so far."""
        with self._lock:
            known = self._smallest.get(key)
            if known is None or size < known[0]:
                self._smallest[key] = (size, why)

    def covering(self, key: Hashable, size: int) -> Why | None:
        """Why a check of ``key`` this large is not to be run (``None``: run it)."""
        with self._lock:
            known = self._smallest.get(key)
        return known[1] if known is not None and size >= known[0] else None

    def __bool__(self) -> bool:
        with self._lock:
            return bool(self._smallest)
