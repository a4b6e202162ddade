"""On-disk cache of LLM responses, keyed by the full request.

A rerun of a run directory must cost nothing and give the same answers, so
every response is stored under the sha256 of the canonical JSON of its request
(model, messages, sampling parameters, and the re-ask attempt number). The
endpoint URL and the API key are not part of the key: the model name and the
request identify the answer, and keys must never reach the disk.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS usage (
    model TEXT NOT NULL,
    field TEXT NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (model, field)
)
"""


def request_key(request: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of ``request``."""
    blob = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """A thread-safe SQLite store; WAL mode so that several processes can share it.

    ``path=None`` keeps the cache in memory (tests, throwaway runs).
    """

    def __init__(self, path: Path | str | None) -> None:
        self.path = None if path is None else Path(path)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        target = ":memory:" if self.path is None else str(self.path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(target, check_same_thread=False, timeout=30.0)
        if self.path is not None:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._db.commit()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, model, request, response, created) "
                "VALUES (?, ?, ?, ?, ?)",
                (
                    key,
                    str(request.get("model", "")),
                    json.dumps(request, sort_keys=True, ensure_ascii=False),
                    json.dumps(response, sort_keys=True, ensure_ascii=False),
                    time.time(),
                ),
            )
            self._db.commit()

    def add_usage(self, model: str, deltas: dict[str, float]) -> None:
        """Add counters for ``model``; committed at once, so a killed run keeps them."""
        rows = [(model, k, float(v)) for k, v in deltas.items() if v]
        if not rows:
            return
        with self._lock:
            self._db.executemany(
                "INSERT INTO usage (model, field, value) VALUES (?, ?, ?) "
                "ON CONFLICT(model, field) DO UPDATE SET value = value + excluded.value",
                rows,
            )
            self._db.commit()

    def usage(self) -> dict[str, dict[str, float]]:
        """Cumulative counters per model over every run that used this database."""
        with self._lock:
            rows = self._db.execute("SELECT model, field, value FROM usage").fetchall()
        out: dict[str, dict[str, float]] = {}
        for model, name, value in rows:
            out.setdefault(model, {})[name] = value
        return out

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()
