"""Compatibility definitions for library names the running Lean lacks.

VERINA was written against an older Lean; the WASM Lean (4.28) has dropped or
renamed a few names it uses (``Array.mkArray`` became ``Array.replicate``,
``String.data`` went with the new ``String`` representation, ...). Each
definition here restates such a name through its current equivalent, with
the old meaning. None is added up front: the backend adds one to a task's
files only after the task failed to elaborate with an error naming it
(:func:`needed`), remembers that for the task's later files, and reports
which tasks needed which names. A Lean that still has the name never
triggers it, so no shim can shadow a real definition.
"""

from __future__ import annotations

import re

COMPAT: dict[str, str] = {
    "Array.mkArray":
        "def Array.mkArray {α : Type _} (n : Nat) (v : α) : Array α := Array.replicate n v",
    "Array.mkEmpty":
        "def Array.mkEmpty {α : Type _} (c : Nat) : Array α := Array.emptyWithCapacity c",
    "Array.data": "def Array.data {α : Type _} (a : Array α) : List α := a.toList",
    "String.data": "def String.data (s : String) : List Char := s.toList",
    "String.mk": "def String.mk (cs : List Char) : String := String.ofList cs",
    # an empty set whatever the capacity hint (the old name's default was 8)
    "Std.HashSet.empty":
        "def Std.HashSet.empty {α : Type _} [BEq α] [Hashable α] (capacity : Nat := 8) : "
        "Std.HashSet α := Std.HashSet.emptyWithCapacity capacity",
}

_MISSING = re.compile(r"unknown (identifier|constant)|does not contain|invalid field", re.I)


def needed(errors: list[str]) -> set[str]:
    """The compatibility names that Lean's errors say are missing."""
    out: set[str] = set()
    for text in errors:
        if not _MISSING.search(text):
            continue
        for name in COMPAT:
            field = name.split(".", 1)[1]
            # `Array.mkArray` by name, or `.data` as a field the environment lacks
            if re.search(rf"[`'‘]{re.escape(name)}[`'’]", text) or (
                    name.split(".")[0] in text and re.search(
                        rf"field [`'‘]{re.escape(field)}[`'’]", text, re.I)):
                out.add(name)
    return out


def definitions(names: set[str] | list[str]) -> str:
    """The definitions of ``names``, in a fixed order (top level, before every unit)."""
    return "\n".join(COMPAT[n] for n in sorted(names) if n in COMPAT)
