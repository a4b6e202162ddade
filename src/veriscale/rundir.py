"""The run directory: where every stage reads and writes, atomically.

Layout::

    RUN_DIR/
      manifest.json            config, versions, seed, timings, counts, usage
      original/  plus/  lite/  suites in the benchmark's own format
      tasks/<id>/<stage>.json  per-task stage artifacts (kill matrix included)
      report.md, *.png

Every file is written to a temporary name and renamed into place, so a run
killed at any moment leaves either the old file or the new one, never half of
one. A stage artifact records the fingerprint it was made under; a resumed run
redoes a stage only when that fingerprint changed.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

from veriscale import artifacts
from veriscale.artifacts import SCHEMA_VERSION, Artifact
from veriscale.atomic import write_text_atomic
from veriscale.benchmark.model import Signature


def write_json_atomic(path: Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", durable=True)


def replace_dir_atomic(staging: Path, final: Path) -> None:
    """Swap a fully written staging folder into place."""
    old = final.with_name(f".{final.name}.old")
    if old.exists():
        shutil.rmtree(old)
    if final.exists():
        os.replace(final, old)
    os.replace(staging, final)
    if old.exists():
        shutil.rmtree(old)


LOCK_FILE = ".lock"


class RunDirLocked(RuntimeError):
    """Another process holds the run directory's lock."""


HOLD_BYTES = 256 * 1024 * 1024
"""How many bytes of stage records (as files) a run directory keeps in memory."""


class RunDir:
    """A run directory. The stage records it saves or reads are kept in memory (up to
    ``hold_bytes`` of them, as files count), so a record crosses a stage boundary as
    the typed object that was saved, not as a file read and parsed again by each of
    its readers; a record held past the budget is read from its file, as before."""

    def __init__(self, root: Path, hold_bytes: int = HOLD_BYTES) -> None:
        self.root = Path(root)
        self._lock: TextIO | None = None
        self.hold_bytes = hold_bytes
        self._held: dict[tuple[str, str], tuple[Any, Artifact, int]] = {}
        self._held_size = 0
        self._held_lock = threading.Lock()  # stages save from worker threads

    # ---------------------------------------------------------------- lock

    def lock(self) -> None:
        """Take the run directory's exclusive lock (``fcntl.flock``), or raise
        :class:`RunDirLocked` naming the process that holds it.

        Two runs on one directory would delete each other's temporaries and
        interleave artifacts; the lock dies with its process, so a killed run
        never leaves the directory locked.
        """
        if self._lock is not None:
            return
        self.root.mkdir(parents=True, exist_ok=True)
        fh = open(self.root / LOCK_FILE, "a+", encoding="utf-8")  # noqa: SIM115 - held open
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            fh.close()
            raise RunDirLocked(
                f"run directory {self.root} is in use by {holder}; wait for it to finish "
                "or choose another --out"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"process {os.getpid()} on {socket.gethostname()} "
                 f"({' '.join(sys.argv)[:200]}), since {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
        fh.flush()
        self._lock = fh

    def unlock(self) -> None:
        if self._lock is not None:
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None

    def remove_stale_temporaries(self) -> int:
        """Delete temporaries a killed run left behind (never a finished file)."""
        removed = 0
        if self.root.is_dir():
            if self._lock is None:
                raise RunDirLocked(f"{self.root}: take the lock before removing temporaries")
            for tmp in self.root.rglob(".*.tmp"):
                tmp.unlink(missing_ok=True)
                removed += 1
            for staging in self.root.glob(".*.staging"):
                shutil.rmtree(staging, ignore_errors=True)
                removed += 1
        return removed

    @property
    def manifest_path(self) -> Path:
        return self.root / "manifest.json"

    def task_dir(self, task_id: str) -> Path:
        return self.root / "tasks" / task_id

    def artifact_path(self, task_id: str, stage: str) -> Path:
        return self.task_dir(task_id) / f"{stage}.json"

    def load_artifact(self, task_id: str, stage: str, fingerprint: str,
                      signature: Signature | None = None) -> Artifact | None:
        """The stage's typed record when it was made under ``fingerprint`` (and the
        current schema), else None: a stale, older or misshapen artifact is recomputed.
        With the task's ``signature``, an older record that can be upgraded is (and
        saved so)."""
        held = self._held.get((task_id, stage))
        if held is not None:
            return held[1] if held[0] == fingerprint else None
        doc = self._envelope(task_id, stage, signature)
        if doc is None or doc.get("fingerprint") != fingerprint:
            return None
        return self._hold(task_id, stage, doc)

    def read_artifact(self, task_id: str, stage: str,
                      signature: Signature | None = None) -> Artifact | None:
        """The stage's typed record whatever its fingerprint (for ``veriscale reduce``
        and the report, which read what a finished run wrote)."""
        held = self._held.get((task_id, stage))
        if held is not None:
            return held[1]
        doc = self._envelope(task_id, stage, signature)
        return None if doc is None else self._hold(task_id, stage, doc)

    def forget(self, stage: str) -> None:
        """Let go of the held records of ``stage`` (its last reader is done)."""
        with self._held_lock:
            for key in [k for k in self._held if k[1] == stage]:
                self._held_size -= self._held.pop(key)[2]

    def _hold(self, task_id: str, stage: str, doc: dict[str, Any]) -> Artifact | None:
        record = self._typed(stage, doc)
        if record is not None:
            self._keep(task_id, stage, doc.get("fingerprint"), record)
        return record

    def _keep(self, task_id: str, stage: str, fingerprint: Any, record: Artifact) -> None:
        """Hold ``record`` while the budget allows; past it, nothing more is taken (a
        budget that evicted would, on a stage-by-stage run larger than it, evict each
        record just before its reader came)."""
        try:
            size = self.artifact_path(task_id, stage).stat().st_size
        except OSError:
            size = None
        with self._held_lock:
            old = self._held.pop((task_id, stage), None)
            if old is not None:
                self._held_size -= old[2]
            if size is not None and self._held_size + size <= self.hold_bytes:
                self._held[(task_id, stage)] = (fingerprint, record, size)
                self._held_size += size

    def _envelope(self, task_id: str, stage: str,
                  signature: Signature | None = None) -> dict[str, Any] | None:
        path = self.artifact_path(task_id, stage)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):  # absent, unreadable, not UTF-8
            return None
        if not isinstance(doc, dict):
            return None
        if doc.get("version") != SCHEMA_VERSION and signature is not None:
            data = artifacts.upgrade(stage, doc.get("data"), doc.get("version"), signature)
            if data is not None:  # kept upgraded: the next reader needs no signature
                doc = {**doc, "version": SCHEMA_VERSION, "data": data}
                write_json_atomic(path, doc)
        if doc.get("version") != SCHEMA_VERSION:
            return None
        return doc

    @staticmethod
    def _typed(stage: str, doc: dict[str, Any]) -> Artifact | None:
        try:
            return artifacts.from_json(stage, doc.get("data"))
        except artifacts.ArtifactError:
            return None

    def save_artifact(self, task_id: str, stage: str, fingerprint: str,
                      artifact: Artifact) -> None:
        if stage != artifact.STAGE:
            raise ValueError(f"{task_id}: a {artifact.STAGE} record saved as stage {stage}")
        write_json_atomic(
            self.artifact_path(task_id, stage),
            {"stage": stage, "task": task_id, "version": SCHEMA_VERSION,
             "fingerprint": fingerprint, "data": artifact.to_json()},
        )
        self._keep(task_id, stage, fingerprint, artifact)

    def load_manifest(self) -> dict[str, Any]:
        try:
            return json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return {}

    def save_manifest(self, manifest: dict[str, Any]) -> None:
        write_json_atomic(self.manifest_path, manifest)
