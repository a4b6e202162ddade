"""One module per CLI command; each exposes ``<name>_command`` or ``command``."""
