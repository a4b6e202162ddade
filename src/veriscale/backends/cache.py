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
import platform
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veriscale.backends.base import (
    HINTS,
    Backend,
    BackendStats,
    Classification,
    FailureKind,
    Implementation,
    Label,
    Outcome,
    Request,
    Spec,
    Verdict,
    Verdicts,
    hint,
    reasons_of,
    settled,
)
from veriscale.benchmark.fingerprint import code_fingerprint
from veriscale.benchmark.model import Input, Task


class OracleCache:
    """A tiny key → JSON store in one SQLite file, safe across threads."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=60)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS oracle (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            self._db.execute(  # a backend's stop memory (backends/stops.py), by namespace
                "CREATE TABLE IF NOT EXISTS stops (namespace TEXT NOT NULL, key TEXT NOT NULL,"
                " size INTEGER NOT NULL, why TEXT NOT NULL, PRIMARY KEY (namespace, key))"
            )
            self._db.commit()
        except sqlite3.Error as exc:  # an unwritable directory, a corrupt file
            raise OSError(0, f"cannot open the oracle cache: {exc}", str(self.path)) from exc
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

    def load_stops(self, namespace: str) -> list[tuple[str, int, Any]]:
        """The stops kept under ``namespace`` (:class:`~veriscale.backends.stops.StopStore`)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT key, size, why FROM stops WHERE namespace = ?", (namespace,)).fetchall()
        return [(key, int(size), json.loads(why)) for key, size, why in rows]

    def put_stop(self, namespace: str, key: str, size: int, why: Any) -> None:
        """Keep a stop (the smallest of its key: the memory only writes those)."""
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO stops (namespace, key, size, why) "
                             "VALUES (?, ?, ?, ?)",
                             (namespace, key, int(size), json.dumps(why, ensure_ascii=False)))
            self._db.commit()

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _key(*parts: Any) -> str:
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def oracle_identity(backend: Backend) -> str:
    """Who answers: the backend, its toolchain (a Lean runner's ``identity()``, or the
    backend's own: ``coqc``'s version), the revision of its answers (``answer_revision``,
    raised when it answers a check differently) and the interpreter and VeriScale
    versions (the Python backend's toolchain), so a different oracle never serves
    another's answers."""
    from veriscale import __version__

    runner = getattr(backend, "runner", None)  # the Lean backend's runner, if any
    if runner is not None and hasattr(runner, "identity"):
        ident = runner.identity()
    else:
        own = getattr(backend, "identity", None)
        ident = own() if callable(own) else ""
    revision = hint(backend, "answer_revision")
    if revision:
        ident += f"|answers r{revision}"
    return f"{backend.name}|{ident}|python {platform.python_version()}|veriscale {__version__}"


def _impl_key(impl: Implementation | None) -> Any:
    if impl is None:
        return None
    return [impl.code, impl.imports] if impl.imports else impl.code


def _spec_key(spec: Spec | None, *fields: str) -> Any:
    return None if spec is None else [getattr(spec, f) for f in fields]


@dataclass(frozen=True)
class _Codec:
    """How one operation's items are keyed, and its results stored and restored."""

    extra: Callable[[tuple[Any, ...]], Any]  # the candidate: impl code / spec parts
    items: Callable[[tuple[Any, ...]], Sequence[Any]]
    item_key: Callable[[Task, Any], Any]
    dump: Callable[[Task, Any], Any]
    load: Callable[[Task, Any], Any]
    cacheable: Callable[[Any], bool]


def _enc_in(task: Task, inp: Any) -> Any:
    return task.signature.encode_input(inp)


def _enc_pair(task: Task, pair: Any) -> Any:
    return [task.signature.encode_input(pair[0]), task.signature.encode_output(pair[1])]


def _dump_outcome(task: Task, o: Outcome) -> Any:
    return [o.ok, task.signature.encode_output(o.value) if o.ok else None, o.error]


def _load_outcome(task: Task, d: Any) -> Outcome:
    return Outcome(d[0], task.signature.decode_output(d[1]) if d[0] else None, d[2])


_PRE = ("precond", "precond_aux", "imports")
_POST = ("postcond", "postcond_aux", "precond", "precond_aux", "imports")
_ALL = ("precond", "postcond", "precond_aux", "postcond_aux", "imports")

CODECS: dict[str, _Codec] = {
    "check_inputs": _Codec(
        lambda a: None, lambda a: a[1], _enc_in, lambda t, v: v, lambda t, v: v,
        lambda v: settled(v, FailureKind.ILL_TYPED)),
    "classify": _Codec(
        lambda a: None, lambda a: a[1], _enc_in,
        lambda t, c: [c.label.value, c.stage, c.detail],
        lambda t, d: Classification(Label(d[0]), d[1], d[2]),
        lambda c: c.label is not Label.UNKNOWN),
    "run": _Codec(
        lambda a: _impl_key(a[1]), lambda a: a[2], _enc_in,
        _dump_outcome, _load_outcome, lambda o: not o.inconclusive),
    "test_outputs": _Codec(  # value: did the output equal the expected one (a bool)
        lambda a: _impl_key(a[1]), lambda a: a[2], _enc_pair,
        lambda t, o: [o.ok, o.value if o.ok else None, o.error],
        lambda t, d: Outcome(d[0], d[1], d[2]), lambda o: not o.inconclusive),
    "precondition_holds": _Codec(
        lambda a: _spec_key(a[1], *_PRE), lambda a: a[2], _enc_in,
        lambda t, v: v.value, lambda t, d: Verdict(d), lambda v: v is not Verdict.UNKNOWN),
    "postcondition_holds": _Codec(
        lambda a: _spec_key(a[1], *_POST), lambda a: a[2], _enc_pair,
        lambda t, v: v.value, lambda t, d: Verdict(d), lambda v: v is not Verdict.UNKNOWN),
    "compile": _Codec(
        lambda a: [_impl_key(a[1]), _spec_key(a[2], *_ALL)],
        lambda a: [None], lambda t, _: None, lambda t, v: v, lambda t, v: v,
        lambda v: settled(v, FailureKind.COMPILE)),
}


class CachingBackend:
    """Wraps a backend; same interface and batch capability, answers served from an
    :class:`OracleCache` keyed by oracle identity, task code, check and item.

    Every call, single or batched, goes through :meth:`answer`: cached items are
    answered from the store, and all the misses of all requests go to the inner
    backend in one dispatched batch, so caching never costs a Lean file. Build it
    with :func:`with_cache`, which keeps the inner backend's batch capability (and
    adds none it lacks).
    """

    def __init__(self, inner: Backend, cache: OracleCache, namespace: str = "") -> None:
        self.inner = inner
        self.cache = cache
        self.name = inner.name
        self.namespace = namespace or oracle_identity(inner)
        # the requests being asked of ``inner``, by the identity of their args: a
        # backend that tells answers early (``on_answers``) names them so
        self._asking: dict[int, tuple[tuple[Any, ...], _Codec, Task, list[str], set[int]]] = {}
        self._asking_lock = threading.Lock()
        if hasattr(inner, "on_answers"):
            inner.on_answers = self._told  # type: ignore[attr-defined]

    def _told(self, told: list[tuple[tuple[Any, ...], int, Any]]) -> None:
        """Store the conclusive answers ``inner`` has before its batch returns (a run
        killed mid-stage then keeps them)."""
        store: dict[str, Any] = {}
        kept: list[tuple[set[int], int]] = []
        with self._asking_lock:
            for args, i, value in told:
                entry = self._asking.get(id(args))
                if entry is None or entry[0] is not args:
                    continue
                _, codec, task, keys, stored = entry
                if codec.cacheable(value):
                    store[keys[i]] = codec.dump(task, value)
                    kept.append((stored, i))
        self.cache.put_many(store)
        with self._asking_lock:  # only what is in the store is not written again
            for stored, i in kept:
                stored.add(i)

    @property
    def stats(self) -> BackendStats:
        return self.inner.stats

    def __getattr__(self, name: str) -> Any:
        """The inner backend's hints (:data:`~veriscale.backends.base.HINTS`): hiding
        one would change a stage (a separate syntax round, every adversary cell)."""
        if name in HINTS:
            return hint(self.inner, name)
        raise AttributeError(name)

    def answer(self, requests: Sequence[Request]) -> list[list[Any]]:
        keyed: list[tuple[_Codec, Task, list[str]]] = []
        for op, args in requests:
            codec, task = CODECS[op], args[0]
            base = (self.namespace, op, code_fingerprint(task), codec.extra(args))
            keyed.append((codec, task, [_key(base, codec.item_key(task, it))
                                        for it in codec.items(args)]))
        found = self.cache.get_many([k for _, _, keys in keyed for k in keys])
        results: list[list[Any]] = []
        misses: list[tuple[int, list[int]]] = []
        asks: list[Request] = []
        for r, ((op, args), (codec, task, keys)) in enumerate(zip(requests, keyed, strict=True)):
            row = [codec.load(task, found[k]) if k in found else None for k in keys]
            todo = [i for i, k in enumerate(keys) if k not in found]
            self.cache.hits += len(keys) - len(todo)
            self.cache.misses += len(todo)
            results.append(row)
            if todo:
                misses.append((r, todo))
                asks.append((op, args) if op == "compile" or len(todo) == len(keys)
                            else (op, (*args[:-1], [codec.items(args)[i] for i in todo])))
        store: dict[str, Any] = {}
        answers, early = self._ask(asks, misses, keyed)
        for (r, todo), fresh, stored in zip(misses, answers, early, strict=True):
            codec, task, keys = keyed[r]
            why = reasons_of(fresh) if isinstance(fresh, Verdicts) else None
            if why is not None:  # the reasons of the fresh answers, in the whole row
                merged = [""] * len(results[r])
                for i, reason in zip(todo, why, strict=True):
                    merged[i] = reason
                results[r] = Verdicts(results[r], merged)
            for k, (i, value) in enumerate(zip(todo, fresh, strict=True)):
                results[r][i] = value
                if codec.cacheable(value) and k not in stored:
                    store[keys[i]] = codec.dump(task, value)
        self.cache.put_many(store)
        return results

    def _ask(self, asks: list[Request], misses: list[tuple[int, list[int]]],
             keyed: list[tuple[_Codec, Task, list[str]]]
             ) -> tuple[list[list[Any]], list[set[int]]]:
        """The answers to ``asks`` from the inner backend, and per ask the items
        :meth:`_told` has stored meanwhile (each ask findable by it until then)."""
        from veriscale.backends import dispatch

        early: list[set[int]] = []
        with self._asking_lock:
            for (_, args), (r, todo) in zip(asks, misses, strict=True):
                codec, task, keys = keyed[r]
                early.append(set())
                self._asking[id(args)] = (args, codec, task, [keys[i] for i in todo], early[-1])
        try:
            return dispatch.answer(self.inner, asks), early
        finally:
            with self._asking_lock:
                for _, args in asks:
                    self._asking.pop(id(args), None)

    def _one(self, op: str, *args: Any) -> list[Any]:
        return self.answer([(op, args)])[0]

    def check_inputs(self, task: Task, inputs: Sequence[Input]) -> list[str | None]:
        return self._one("check_inputs", task, inputs)

    def classify(self, task: Task, inputs: Sequence[Input]) -> list[Classification]:
        return self._one("classify", task, inputs)

    def run(self, task: Task, impl: Implementation | None, inputs: Sequence[Input]) -> list[Outcome]:
        return self._one("run", task, impl, inputs)

    def precondition_holds(
        self, task: Task, spec: Spec | None, inputs: Sequence[Input]
    ) -> list[Verdict]:
        return self._one("precondition_holds", task, spec, inputs)

    def postcondition_holds(
        self, task: Task, spec: Spec | None, pairs: Sequence[tuple[Input, Any]]
    ) -> list[Verdict]:
        return self._one("postcondition_holds", task, spec, pairs)

    def compile(self, task: Task, impl: Implementation | None = None,
                spec: Spec | None = None) -> str | None:
        return self._one("compile", task, impl, spec)[0]

    def spec_error(self, task: Task, spec: Spec, which: str) -> str | None:
        """The inner backend's message for a raising spec, when it keeps one."""
        ask = getattr(self.inner, "spec_error", None)
        return ask(task, spec, which) if callable(ask) else None

    def close(self) -> None:
        self.inner.close()


class _Batching:
    """The batch capability, for a cache in front of a batching backend."""

    def evaluate_many(self, requests: Sequence[Request]) -> list[list[Any]]:
        return self.answer(requests)  # type: ignore[attr-defined]


class _Testing:
    """``test_outputs``, for a cache in front of a backend that compares outputs itself."""

    def test_outputs(self, task: Task, impl: Implementation | None,
                     pairs: Sequence[tuple[Input, Any]]) -> list[Outcome]:
        return self.answer([("test_outputs", (task, impl, pairs))])[0]  # type: ignore[attr-defined]


_VARIANTS: dict[tuple[bool, bool], type[CachingBackend]] = {
    (batch, test): type("CachingBackend", ((_Batching,) if batch else ())
                        + ((_Testing,) if test else ()) + (CachingBackend,), {})
    for batch in (False, True) for test in (False, True)
}


def with_cache(inner: Backend, cache: OracleCache, namespace: str = "") -> CachingBackend:
    """``inner`` behind ``cache``, with exactly the optional capabilities ``inner`` has
    (batching, comparing outputs), so callers see the same backend, only faster."""
    from veriscale.backends.base import BatchBackend, OutputTester

    cls = _VARIANTS[(isinstance(inner, BatchBackend), isinstance(inner, OutputTester))]
    return cls(inner, cache, namespace)


def default_cache_path() -> Path:
    """Where ``evaluate`` and ``verify`` keep oracle answers between invocations:
    ``$VERISCALE_ORACLE_CACHE``, else ``$XDG_CACHE_HOME/veriscale/oracle.sqlite``."""
    import os

    if os.environ.get("VERISCALE_ORACLE_CACHE"):
        return Path(os.environ["VERISCALE_ORACLE_CACHE"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "veriscale" / "oracle.sqlite"


def cache_summary(cache: OracleCache | None) -> dict[str, Any]:
    """Hits and misses (items) for manifests and ``--json`` output."""
    if cache is None:
        return {"enabled": False}
    return {"enabled": True, "path": str(cache.path), "hits": cache.hits, "misses": cache.misses}
