"""The language-neutral task model and the formats read into it (each language's
sections live in its plug-in under ``backends/``)."""

from veriscale.benchmark.model import ExpectedPair, Input, LoadIssue, Param, Signature, Task

__all__ = [
    "ExpectedPair",
    "Input",
    "LoadIssue",
    "Param",
    "Signature",
    "Task",
]
