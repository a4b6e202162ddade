"""What a prover backend remembers of checks that stopped it (a time-out, a crash).

A check of a function that ran out of its time (or took the prover down) on one input
will most likely do so on any input no smaller: the backend answers those UNKNOWN at
once, in every later file, instead of paying the limit again. Smaller inputs still run.
Size is the check's text length, the same measure the backends order checks by.

A run directory keeps this memory (:meth:`StopMemory.keep_in`, a table of the run's
oracle cache): stops are never cached as answers (they may be the machine's fault), so
without it a resumed run paid every stop again (831 Lean checks, 25 minutes, on the
189 VERINA tasks).
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from collections.abc import Hashable
from typing import Any, Generic, Protocol, TypeVar

Why = TypeVar("Why")


class StopStore(Protocol):
    """Where stops outlive the process (the oracle cache's ``stops`` table)."""

    def load_stops(self, namespace: str) -> list[tuple[str, int, Any]]: ...

    def put_stop(self, namespace: str, key: str, size: int, why: Any) -> None: ...


@functools.lru_cache(maxsize=4096)
def stop_key(key: Hashable) -> str:
    """A key's stable name across processes (keys hold candidate code: hashed). Cached:
    a backend asks it for every check of a file while its memory holds any stop, and
    the checks of one function share their key."""
    blob = json.dumps(key, ensure_ascii=False, default=repr)
    return hashlib.sha256(blob.encode()).hexdigest()


def _tuples(value: Any) -> Any:
    """JSON's lists back into the tuples a backend stored."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


class StopMemory(Generic[Why]):
    """Per key (a function of one candidate, as the backend names it), the smallest
    check that stopped the prover and why; shared by the backend's threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._smallest: dict[str, tuple[int, Why]] = {}
        self._store: StopStore | None = None
        self._namespace = ""

    def keep_in(self, store: StopStore, namespace: str) -> None:
        """Load the stops ``store`` holds under ``namespace`` (who stopped: the backend
        and its limits) and write each new one there too."""
        loaded = store.load_stops(namespace)
        with self._lock:
            self._store, self._namespace = store, namespace
            for name, size, why in loaded:
                self._keep_locked(name, size, _tuples(why))

    def _keep_locked(self, name: str, size: int, why: Why) -> bool:
        """Keep the stop if it is the smallest of ``name`` so far (the caller holds the
        lock); whether it was."""
        known = self._smallest.get(name)
        if known is not None and size >= known[0]:
            return False
        self._smallest[name] = (size, why)
        return True

    def remember(self, key: Hashable, size: int, why: Why) -> None:
        """Keep ``size`` (and ``why``) if it is the smallest stop of ``key`` so far."""
        name = stop_key(key)
        with self._lock:
            if not self._keep_locked(name, size, why):
                return
            store, namespace = self._store, self._namespace
        if store is not None:
            store.put_stop(namespace, name, size, why)

    def covering(self, key: Hashable, size: int) -> Why | None:
        """Why a check of ``key`` this large is not to be run (``None``: run it)."""
        name = stop_key(key)
        with self._lock:
            known = self._smallest.get(name)
        return known[1] if known is not None and size >= known[0] else None

    def __len__(self) -> int:
        with self._lock:
            return len(self._smallest)

    def __bool__(self) -> bool:
        return len(self) > 0
