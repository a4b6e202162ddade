"""The schema of stage artifacts: one typed, versioned record per stage.

Every stage's result is stored as ``tasks/<id>/<stage>.json`` in the run
directory. The pipeline writes these records, and the pipeline, ``veriscale
reduce`` and the report read them, all through :class:`~veriscale.pipeline.
rundir.RunDir` and the classes here, so the three cannot disagree on a key.
Values inside rows are in the neutral JSON form of :mod:`veriscale.values.record`
(decoding needs the task's signature, which the reader has); a benchmark format's
encoding (VERINA's Lean literals, the Coq track's own) never reaches a record.
Version 2 records held VERINA's encoding: :func:`upgrade` rewrites one in place.

``from_json`` checks the shape and raises :class:`ArtifactError` naming the
stage and the field; the run directory treats a misshapen or older-version
artifact as absent, so the stage is simply computed again.

Vocabulary (paper §3): *unexpected inputs* violate the GT precondition
(classify's ``unexpected_inputs``); *unexpected outputs* are wrong outputs for
an expected input (the unexpected stage's rows); the *kill matrix* records
which adversary each expected input kills.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar, TypeVar

from veriscale.benchmark.model import Signature

SCHEMA_VERSION = 3
"""Bumped whenever a stage's record changes shape; older artifacts are upgraded where
:func:`upgrade` can (version 2), else recomputed."""


class ArtifactError(ValueError):
    """A stored artifact does not have its stage's shape."""

    def __init__(self, stage: str, where: str, message: str) -> None:
        super().__init__(f"{stage}.json: {where}: {message}" if where else
                         f"{stage}.json: {message}")
        self.stage = stage
        self.where = where


def _rows(stage: str, data: dict[str, Any], key: str, needs: tuple[str, ...]
          ) -> list[dict[str, Any]]:
    rows = data.get(key, [])
    if not isinstance(rows, list):
        raise ArtifactError(stage, key, f"must be a list, got {type(rows).__name__}")
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise ArtifactError(stage, f"{key}[{i}]", "must be an object")
        missing = [k for k in needs if k not in row]
        if missing:
            raise ArtifactError(stage, f"{key}[{i}]", f"lacks {', '.join(missing)}")
        if "input" in needs and not isinstance(row["input"], dict):
            raise ArtifactError(stage, f"{key}[{i}].input", "must be an object")
    return rows


def _dict(stage: str, data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ArtifactError(stage, key, f"must be an object, got {type(value).__name__}")
    return value


T = TypeVar("T")


@dataclass
class Artifact:
    """Base: a stage's record. Subclasses list their row fields in ``ROWS``."""

    STAGE: ClassVar[str] = ""
    ROWS: ClassVar[dict[str, tuple[str, ...]]] = {}
    counts: dict[str, Any] = field(default_factory=dict)
    llm: dict[str, Any] = field(default_factory=dict)
    """What making this record asked of models, per role: requests, tokens, cost, items
    proposed, kept and dropped by reason, re-asks, truncations, failed requests,
    offline fallbacks (present only on a record that used a model)."""
    llm_provisional: list[Any] = field(default_factory=list)
    """LLM requests that failed while making this record (it is then stored as
    provisional and made again by the next run)."""

    def decoded(self, key: str, decode: Callable[[Any], T]) -> T:
        """Field ``key`` read through ``decode`` (its values loaded with their types),
        once per record: a record the run directory holds is decoded once per run,
        however many stages read it. One ``decode`` per field (the first is kept)."""
        cache: dict[str, Any] = self.__dict__.setdefault("_decoded", {})
        if key not in cache:
            cache[key] = decode(getattr(self, key))
        return cache[key]

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("llm", "llm_provisional"):  # present only where there is something
            if not data[key]:
                del data[key]
        return data

    @classmethod
    def from_json(cls, data: Any) -> Artifact:
        if not isinstance(data, dict):
            raise ArtifactError(cls.STAGE, "", "must hold an object")
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name in cls.ROWS:
                values[f.name] = _rows(cls.STAGE, data, f.name, cls.ROWS[f.name])
            elif f.name in data:
                values[f.name] = data[f.name]
        values["counts"] = _dict(cls.STAGE, data, "counts")
        values["llm"] = _dict(cls.STAGE, data, "llm")
        return cls(**values)


@dataclass
class CandidatesArtifact(Artifact):
    """Candidate inputs (originals, seeds, mutants), each with its provenance."""

    STAGE: ClassVar[str] = "candidates"
    ROWS: ClassVar[dict[str, tuple[str, ...]]] = {"candidates": ("input", "provenance")}
    candidates: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@dataclass
class ClassifyArtifact(Artifact):
    """Candidate inputs split by the GT precondition: expected inputs, unexpected
    inputs (violate it: the suite's reject inputs) and undecided ones."""

    STAGE: ClassVar[str] = "classify"
    ROWS: ClassVar[dict[str, tuple[str, ...]]] = {
        "expected_inputs": ("input", "provenance"),
        "unexpected_inputs": ("input", "provenance"),
        "unknown_inputs": ("input", "provenance"),
        "syntax_rejected": ("input",),
    }
    expected_inputs: list[dict[str, Any]] = field(default_factory=list)
    unexpected_inputs: list[dict[str, Any]] = field(default_factory=list)
    unknown_inputs: list[dict[str, Any]] = field(default_factory=list)
    syntax_rejected: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class OutputsArtifact(Artifact):
    """Expected pairs: the reference implementation's output on each expected input."""

    STAGE: ClassVar[str] = "outputs"
    ROWS: ClassVar[dict[str, tuple[str, ...]]] = {
        "pairs": ("input", "expected", "provenance"),
        "failures": ("input",),
        "reference_mismatches": ("input",),
        "gt_rejected": ("input", "reference"),
    }
    pairs: list[dict[str, Any]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    reference_mismatches: list[dict[str, Any]] = field(default_factory=list)
    gt_rejected: list[dict[str, Any]] = field(default_factory=list)
    """Expected inputs whose reference output the GT postcondition rejects (not kept)."""


@dataclass
class AdversariesArtifact(Artifact):
    """Flawed specifications and the adversaries (flawed implementations) written
    against them, each with its compile result (``compile_error`` None = compiled)."""

    STAGE: ClassVar[str] = "adversaries"
    ROWS: ClassVar[dict[str, tuple[str, ...]]] = {"specs": (), "adversaries": ("id",)}
    decomposition: dict[str, Any] = field(default_factory=dict)
    specs: list[dict[str, Any]] = field(default_factory=list)
    adversaries: list[dict[str, Any]] = field(default_factory=list)
    issues: list[Any] = field(default_factory=list)
    rejected: list[Any] = field(default_factory=list)


@dataclass
class UnexpectedArtifact(Artifact):
    """Unexpected outputs per expected pair, and the kill matrix (one record per
    expected input and compiled adversary; ``killed`` marks a kill)."""

    STAGE: ClassVar[str] = "unexpected"
    ROWS: ClassVar[dict[str, tuple[str, ...]]] = {
        "rows": ("input", "expected", "unexpected"),  # "unexpected": unexpected outputs
        "kill_matrix": ("input", "adversary", "killed"),
        "adversaries": ("id",),
    }
    task: str = ""
    adversaries: list[dict[str, Any]] = field(default_factory=list)
    specs: list[str] = field(default_factory=list)
    spec_acceptance: dict[str, int] = field(default_factory=dict)
    vacuous_specs: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    kill_matrix: list[dict[str, Any]] = field(default_factory=list)
    # the smallest outputs other than the reference's that the GT postcondition accepts
    # ({input, reference, other}): witnesses of an under-specified postcondition
    gt_accepts: list[dict[str, Any]] = field(default_factory=list)

    def killed(self) -> list[dict[str, Any]]:
        """The kill-matrix records that are kills."""
        return [rec for rec in self.kill_matrix if rec.get("killed")]

    def kills(self, signature: Signature) -> list[tuple[Any, Any]]:
        """The kills as (expected input, adversary id), each input decoded once per
        record (a kill matrix repeats an input once per adversary). An input the
        signature cannot read is keyed by its JSON text, which matches no suite row."""
        def decode(cells: list[dict[str, Any]]) -> list[tuple[Any, Any]]:
            seen: dict[str, Any] = {}
            out = []
            for rec in cells:
                if not rec.get("killed"):
                    continue
                text = json.dumps(rec["input"], sort_keys=True, ensure_ascii=False)
                if text not in seen:
                    try:
                        seen[text] = signature.load_input(rec["input"])
                    except Exception:  # a bad value still gets a (textual) key
                        seen[text] = text
                out.append((seen[text], rec["adversary"]))
            return out

        return self.decoded("kill_matrix", decode)


@dataclass
class ReductionArtifact(Artifact):
    """How Lite was chosen from Plus: the two reductions' logs."""

    STAGE: ClassVar[str] = "reduction"
    pairs: dict[str, Any] = field(default_factory=dict)
    reject_inputs: dict[str, Any] = field(default_factory=dict)


STAGES: dict[str, type[Artifact]] = {
    cls.STAGE: cls for cls in (CandidatesArtifact, ClassifyArtifact, OutputsArtifact,
                               AdversariesArtifact, UnexpectedArtifact, ReductionArtifact)
}
"""Stage name → its record type."""


def from_json(stage: str, data: Any) -> Artifact:
    """The typed record of ``stage`` from its stored JSON (raises :class:`ArtifactError`)."""
    if stage not in STAGES:
        raise ArtifactError(stage, "", f"unknown stage; known: {', '.join(STAGES)}")
    return STAGES[stage].from_json(data)


# ------------------------------------------------------------------ older records

_VALUE_FIELDS = {"input": "input", "expected": "output", "reference": "output",
                 "other": "output", "benchmark": "output", "output": "output",
                 "unexpected": "outputs"}
"""Where a record's rows hold values, and of which kind (every stage uses these names)."""

_ROW_LISTS = ("candidates", "expected_inputs", "unexpected_inputs", "unknown_inputs",
              "syntax_rejected", "pairs", "failures", "reference_mismatches", "gt_rejected",
              "rows", "kill_matrix", "gt_accepts")


def upgrade(stage: str, data: Any, version: Any, signature: Signature) -> dict[str, Any] | None:
    """A version-2 record's data with every value re-encoded in the neutral form (its
    shape is otherwise the same), or None when it cannot be (another version, or a value
    its signature does not read: the stage is then recomputed)."""
    if version != 2 or not isinstance(data, dict):
        return None

    def output(raw: Any) -> Any:
        return signature.dump_output(signature.decode_output(raw))

    def convert(row: Any) -> Any:
        if not isinstance(row, dict):
            return row
        out = dict(row)
        for key, kind in _VALUE_FIELDS.items():
            if key not in row:
                continue
            if kind == "input":
                out[key] = signature.dump_input(signature.decode_input(row[key]))
            elif kind == "output":
                out[key] = output(row[key])
            else:
                out[key] = [output(v) for v in row[key]]
        return out

    try:
        return {key: [convert(r) for r in value] if key in _ROW_LISTS and isinstance(value, list)
                else value for key, value in data.items()}
    except (ValueError, TypeError, KeyError):
        return None


__all__ = [
    "SCHEMA_VERSION", "STAGES", "AdversariesArtifact", "Artifact", "ArtifactError",
    "CandidatesArtifact", "ClassifyArtifact", "OutputsArtifact", "ReductionArtifact",
    "UnexpectedArtifact", "from_json", "upgrade",
]
