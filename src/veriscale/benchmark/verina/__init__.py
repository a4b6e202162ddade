"""The VERINA dataset format: its folder layout, its value notation (Lean's literal
syntax, which VERINA uses for every compound value) and the codec of its JSON rows.

A format, not a language: Lean and Coq tasks are both stored in it, and neither
language's plug-in owns it."""
