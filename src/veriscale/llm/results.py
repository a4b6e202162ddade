"""What the provider roles return: typed items, each with its provenance, plus issues.

``issues`` name the task and the role of every answer that could not be used
(after its re-asks), so a bad answer is recorded and never stops a run.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from veriscale.backends.base import Implementation, Spec
from veriscale.benchmark.model import Input
from veriscale.llm.parsers import Decomposition

__all__ = [
    "AdversaryResult", "Decomposition", "SeedResult", "SpecResult", "impl_from_json",
    "impl_to_json", "spec_from_json", "spec_to_json",
]  # fmt: skip


@dataclass
class SeedResult:
    """Candidate inputs; iterating yields ``(input, provenance)`` pairs."""

    inputs: list[Input] = field(default_factory=list)
    provenance: list[str] = field(default_factory=list)  # one per input: "llm:<model>", ...
    ill_typed: int = 0
    duplicates: int = 0
    issues: list[str] = field(default_factory=list)
    llm: dict[str, Any] = field(default_factory=dict)  # asked / proposed / kept / dropped
    _seen: set[Input] = field(default_factory=set, repr=False, compare=False)

    def add(self, inp: Input, provenance: str) -> bool:
        if not self._seen and self.inputs:
            self._seen.update(self.inputs)
        if inp in self._seen:
            self.duplicates += 1
            return False
        self._seen.add(inp)
        self.inputs.append(inp)
        self.provenance.append(provenance)
        return True

    def __iter__(self) -> Iterator[tuple[Input, str]]:
        return iter(zip(self.inputs, self.provenance, strict=True))

    def __len__(self) -> int:
        return len(self.inputs)


@dataclass
class SpecResult:
    specs: list[Spec] = field(default_factory=list)  # Spec.origin is the provenance
    issues: list[str] = field(default_factory=list)
    llm: dict[str, Any] = field(default_factory=dict)


@dataclass
class AdversaryResult:
    implementations: list[Implementation] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # unparsable or unsafe candidates
    issues: list[str] = field(default_factory=list)
    llm: dict[str, Any] = field(default_factory=dict)


def spec_to_json(spec: Spec) -> dict[str, Any]:
    return asdict(spec)


def spec_from_json(data: dict[str, Any]) -> Spec:
    fields = Spec.__dataclass_fields__
    return Spec(**{k: v for k, v in data.items() if k in fields})


def impl_to_json(impl: Implementation) -> dict[str, Any]:
    return asdict(impl)


def impl_from_json(data: dict[str, Any]) -> Implementation:
    fields = Implementation.__dataclass_fields__
    return Implementation(**{k: v for k, v in data.items() if k in fields})
