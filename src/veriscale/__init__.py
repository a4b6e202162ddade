"""VeriScale: scale the test suites of verifiable code generation benchmarks."""

__version__ = "0.1.0"
