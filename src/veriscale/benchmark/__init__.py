"""Benchmark formats: the task model, the VERINA directory format, Python-spec tasks."""

from veriscale.benchmark.model import (
    ExpectedPair,
    Input,
    LeanSections,
    LoadIssue,
    Param,
    PythonSections,
    Signature,
    Task,
)

__all__ = [
    "ExpectedPair",
    "Input",
    "LeanSections",
    "LoadIssue",
    "Param",
    "PythonSections",
    "Signature",
    "Task",
]
