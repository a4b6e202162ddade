"""The Python backend: Python-spec tasks evaluated in sandboxed worker processes."""

from veriscale.backends.python.safety import check_untrusted_python

__all__ = ["check_untrusted_python"]
