"""The benchmark-independent model of a task and its test suite.

A task is what every stage works on: a signature with parsed types, tests and
reject inputs as canonical typed values, and its text in one or more
specification languages (``Task.sections``, by language name). Inputs are tuples of values in
parameter order, so they hash and compare canonically.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from veriscale.benchmark.verina.codec import decode, encode
from veriscale.values import ValueType, parse_type, record
from veriscale.values.inputs import Input


@dataclass(frozen=True)
class Param:
    name: str
    type: ValueType
    type_text: str  # as written in the source, kept for lossless writing


@dataclass(frozen=True)
class Signature:
    name: str
    params: tuple[Param, ...]
    return_type: ValueType
    return_text: str

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Signature:
        """Build from VERINA's ``{"name", "parameters": [...], "return_type"}``."""
        params = tuple(
            Param(p["param_name"], parse_type(p["param_type"]), p["param_type"])
            for p in data["parameters"]
        )
        return cls(data["name"], params, parse_type(data["return_type"]), data["return_type"])

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "parameters": [{"param_name": p.name, "param_type": p.type_text} for p in self.params],
            "return_type": self.return_text,
        }

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def shape_problem(self, raw: Any) -> tuple[str, str] | None:
        """Why ``raw`` is not an input of this signature's shape (an object whose keys are
        exactly the parameter names): ``("type" | "keys", message)``, or None. The one
        owner of that rule, whichever codec then reads the values."""
        if not isinstance(raw, dict):
            return "type", f"input must be an object, got {type(raw).__name__}"
        missing = [p.name for p in self.params if p.name not in raw]
        extra = [k for k in raw if k not in self.names]
        if missing or extra:
            return "keys", f"input keys differ from parameters: missing {missing}, extra {extra}"
        return None

    def decode_input(self, raw: dict[str, Any]) -> Input:
        """VERINA ``{"param": json}`` → canonical input; raises on a bad value."""
        problem = self.shape_problem(raw)
        if problem is not None:
            raise ValueError(problem[1])
        return tuple(decode(p.type, raw[p.name]) for p in self.params)

    def encode_input(self, inp: Input) -> dict[str, Any]:
        return {p.name: encode(p.type, v) for p, v in zip(self.params, inp, strict=True)}

    def decode_output(self, raw: Any) -> Any:
        return decode(self.return_type, raw)

    def encode_output(self, value: Any) -> Any:
        return encode(self.return_type, value)

    # VeriScale's own records (stage artifacts) hold values in the neutral JSON form of
    # :mod:`veriscale.values.record`, not in a benchmark format's encoding.

    def dump_input(self, inp: Input) -> dict[str, Any]:
        """A canonical input in the records' neutral form ``{"param": json}``."""
        return {p.name: record.dump(p.type, v) for p, v in zip(self.params, inp, strict=True)}

    def load_input(self, raw: Any) -> Input:
        """A record's input back to canonical; raises on a bad shape or value."""
        problem = self.shape_problem(raw)
        if problem is not None:
            raise ValueError(problem[1])
        return tuple(record.load(p.type, raw[p.name]) for p in self.params)

    def dump_output(self, value: Any) -> Any:
        return record.dump(self.return_type, value)

    def load_output(self, raw: Any) -> Any:
        return record.load(self.return_type, raw)


# ---------------------------------------------------------------- candidates
#
# What stages hand to an oracle besides the task itself: code and specifications
# that are meant to be checked (adversaries, LLM specs, solutions, mutants).


@dataclass(frozen=True)
class Implementation:
    """Candidate code for the task's function (an adversary, an LLM solution, a mutant).

    ``code`` is a complete definition of the task function in the backend's
    language (Lean: ``def <name> ... :=``; Python: ``def <name>(...)``), with any
    helpers before it.
    """

    code: str
    id: str = ""
    imports: str = ""  # extra ``import`` lines (Lean), merged with the task's (VERINA)
    strategy: str = ""  # red-team strategy or mutation operator
    origin: str = ""  # "offline", "llm:<model>", "mutant"
    target_spec: str = ""  # id of the flawed spec it was written against


@dataclass(frozen=True)
class Spec:
    """Candidate pre/postconditions in the backend's language.

    Lean: bodies, as VERINA stores them (``precond`` is the body of
    ``F_precond``), with aux definitions. Python: complete ``def precondition``
    / ``def postcondition`` sources with their helpers.
    ``None`` means "use the ground truth".
    """

    precond: str | None = None
    postcond: str | None = None
    precond_aux: str = ""
    postcond_aux: str = ""
    imports: str = ""
    id: str = ""
    origin: str = ""


@dataclass
class ExpectedPair:
    """An expected pair with its unexpected outputs; ``provenance`` says where
    the input came from (``original``, ``seed``, ``llm:<model>``, ``mutation``)."""

    input: Input
    expected: Any
    unexpected: list[Any] = field(default_factory=list)
    provenance: str = "original"


@dataclass
class Task:
    id: str
    description: str
    signature: Signature
    tests: list[ExpectedPair] = field(default_factory=list)
    reject_inputs: list[Input] = field(default_factory=list)
    sections: dict[str, Any] = field(default_factory=dict)
    """The task's text in each specification language, by the language's name: the
    object its plug-in reads and writes (VERINA's marked sections for Lean and Coq,
    a Python-spec file's for Python). The core never looks inside."""
    meta: dict[str, Any] = field(default_factory=dict)  # task.json, kept for writing
    path: Path | None = None
    unreadable: dict[str, str] = field(default_factory=dict)
    """Rows files (``test.json``, ``reject_inputs.json``) that could not be read, with
    the reason: their rows are unknown, not absent, so nothing may be scored as passing
    them."""

    def __post_init__(self) -> None:
        if not isinstance(self.sections, dict):  # a sections object where the map belongs
            raise TypeError(f"{self.id}: Task.sections maps language names to sections, "
                            f"not {type(self.sections).__name__}")

    def section(self, language: str) -> Any:
        """The sections of ``language`` (``None``: the task has none)."""
        return self.sections.get(language)

    def with_section(self, language: str, sections: Any) -> Task:
        """A copy of this task with ``language``'s sections replaced."""
        return replace(self, sections={**self.sections, language: sections})


@dataclass(frozen=True)
class LoadIssue:
    """A problem found while loading, naming the task, the file and the field."""

    task: str
    file: str
    field: str
    kind: str  # e.g. unparsable, ill_typed, missing_file, bad_json, bad_section
    message: str

    def __str__(self) -> str:
        return f"{self.task}: {self.file}: {self.field}: {self.kind}: {self.message}"
