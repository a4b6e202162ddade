"""Benchmark formats: the task model, the VERINA directory format, Python-spec tasks."""

from veriscale.benchmark.model import (
    Input,
    LeanSections,
    LoadIssue,
    Param,
    PythonSections,
    Signature,
    Task,
    TestCase,
)

__all__ = [
    "Input", "LeanSections", "LoadIssue", "Param", "PythonSections", "Signature", "Task",
    "TestCase",
]
