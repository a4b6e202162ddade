"""A content-addressed SQLite cache in front of any backend.

Oracle answers depend only on the task's code, the candidate code or spec, and
the item; so they are cached under a hash of exactly those. Reruns, resumed
runs and repeated evaluations then pay only for items never seen before, and
the uncached items of a call still go to the backend as one batch.
Inconclusive answers (``Outcome.inconclusive``: timeouts, resource limits,
infrastructure failures; UNKNOWN verdicts and labels) are never cached: they
may be the machine's fault.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from veriscale.backends.base import (
    Backend,
    Classification,
    Implementation,
    Label,
    Outcome,
    Spec,
    Verdict,
)
from veriscale.benchmark.fingerprint import code_fingerprint
from veriscale.benchmark.model import Input, Task


class OracleCache:
    """A tiny key → JSON store in one SQLite file, safe across threads."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=60)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS oracle (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
        )
        self._db.commit()
        self.hits = 0
        self.misses = 0

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = list(keys[start : start + 500])
                marks = ",".join("?" * len(chunk))
                for key, value in self._db.execute(
                    f"SELECT key, value FROM oracle WHERE key IN ({marks})", chunk
                ):
                    found[key] = json.loads(value)
        return found

    def put_many(self, items: dict[str, Any]) -> None:
        if not items:
            return
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO oracle (key, value) VALUES (?, ?)",
                [(k, json.dumps(v, ensure_ascii=False)) for k, v in items.items()],
            )
            self._db.commit()

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _key(*parts: Any) -> str:
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class CachingBackend:
    """Wraps a backend; same interface, answers served from an :class:`OracleCache`."""

    def __init__(self, inner: Backend, cache: OracleCache, namespace: str = "") -> None:
        self.inner = inner
        self.cache = cache
        self.name = inner.name
        self.namespace = namespace or inner.name

    @property
    def stats(self):
        return self.inner.stats

    def _cached(
        self,
        op: str,
        task: Task,
        extra: Any,
        items: Sequence[Any],
        item_key: Callable[[Any], Any],
        compute: Callable[[list[Any]], list[Any]],
        dump: Callable[[Any], Any],
        load: Callable[[Any], Any],
        cacheable: Callable[[Any], bool] = lambda _: True,
    ) -> list[Any]:
        base = (self.namespace, op, code_fingerprint(task), extra)
        keys = [_key(base, item_key(it)) for it in items]
        found = self.cache.get_many(keys)
        missing = [i for i, k in enumerate(keys) if k not in found]
        self.cache.hits += len(items) - len(missing)
        self.cache.misses += len(missing)
        results: list[Any] = [None] * len(items)
        for i, k in enumerate(keys):
            if k in found:
                results[i] = load(found[k])
        if missing:
            fresh = compute([items[i] for i in missing])
            store: dict[str, Any] = {}
            for i, value in zip(missing, fresh, strict=True):
                results[i] = value
                if cacheable(value):
                    store[keys[i]] = dump(value)
            self.cache.put_many(store)
        return results

    def check_inputs(self, task: Task, inputs: Sequence[Input]) -> list[str | None]:
        sig = task.signature
        return self._cached(
            "check_inputs", task, None, inputs, sig.encode_input,
            lambda xs: self.inner.check_inputs(task, xs), lambda v: v, lambda v: v,
        )

    def classify(self, task: Task, inputs: Sequence[Input]) -> list[Classification]:
        sig = task.signature
        return self._cached(
            "classify", task, None, inputs, sig.encode_input,
            lambda xs: self.inner.classify(task, xs),
            lambda c: [c.label.value, c.stage, c.detail],
            lambda d: Classification(Label(d[0]), d[1], d[2]),
            lambda c: c.label is not Label.UNKNOWN,
        )

    def run(self, task: Task, impl: Implementation | None, inputs: Sequence[Input]) -> list[Outcome]:
        sig = task.signature
        extra = None if impl is None else (
            [impl.code, impl.imports] if impl.imports else impl.code)
        return self._cached(
            "run", task, extra, inputs, sig.encode_input,
            lambda xs: self.inner.run(task, impl, xs),
            lambda o: [o.ok, sig.encode_output(o.value) if o.ok else None, o.error],
            lambda d: Outcome(d[0], sig.decode_output(d[1]) if d[0] else None, d[2]),
            lambda o: not o.inconclusive,
        )

    def precondition_holds(
        self, task: Task, spec: Spec | None, inputs: Sequence[Input]
    ) -> list[Verdict]:
        sig = task.signature
        extra = None if spec is None else [spec.precond, spec.precond_aux, spec.imports]
        return self._cached(
            "pre", task, extra, inputs, sig.encode_input,
            lambda xs: self.inner.precondition_holds(task, spec, xs),
            lambda v: v.value, Verdict, lambda v: v is not Verdict.UNKNOWN,
        )

    def postcondition_holds(
        self, task: Task, spec: Spec | None, pairs: Sequence[tuple[Input, Any]]
    ) -> list[Verdict]:
        sig = task.signature
        extra = None if spec is None else [spec.postcond, spec.postcond_aux, spec.precond,
                                           spec.precond_aux, spec.imports]
        return self._cached(
            "post", task, extra, pairs,
            lambda p: [sig.encode_input(p[0]), sig.encode_output(p[1])],
            lambda xs: self.inner.postcondition_holds(task, spec, xs),
            lambda v: v.value, Verdict, lambda v: v is not Verdict.UNKNOWN,
        )

    def compile(self, task: Task, impl: Implementation | None = None,
                spec: Spec | None = None) -> str | None:
        return self.inner.compile(task, impl, spec)

    def close(self) -> None:
        self.inner.close()

    def __getattr__(self, name: str) -> Any:
        # Multi-task batch methods (`*_many`) are not cached; pass them through.
        if name.endswith("_many"):
            raise AttributeError(name)
        return getattr(self.inner, name)
