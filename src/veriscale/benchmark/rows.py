"""The one codec for suite rows (``test.json`` and ``reject_inputs.json``), every format.

Both the VERINA directory format and the Python-spec format store the same
rows in the VERINA value encoding; only the file layout around them differs.
Keeping the row codec here, once, is what makes a row's ``provenance``
survive a write/read round trip in every format (reduction's
``keep_original`` depends on it).

Decoding never raises for a bad row: it reports a :class:`LoadIssue`-shaped
problem through ``issue(file, field, kind, message)`` naming the row and the
parameter, and drops only that row (or that unexpected output).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from veriscale.benchmark.model import ExpectedPair, Input, Signature
from veriscale.benchmark.verina.codec import decode, encode
from veriscale.values import ValueError_
from veriscale.values.value import Unparsable

TEST_JSON = "test.json"
REJECT_JSON = "reject_inputs.json"
ORIGINAL = "original"
"""Provenance of a row from the original benchmark; not written (VERINA rows stay as they were)."""

IssueFn = Callable[[str, str, str, str], None]
"""``issue(file, field, kind, message)``: how decoders report a bad value."""


@dataclass(frozen=True)
class ValueCodec:
    """How one format writes a typed value into a row and reads it back.

    ``decode(type, raw, file, where)`` raises ``ValueError`` for a bad value (a
    format may also report warnings through its own issue list).
    """

    encode: Callable[[Any, Any], Any]
    decode: Callable[[Any, Any, str, str], Any]


VERINA_VALUES = ValueCodec(encode, lambda t, raw, file, where: decode(t, raw))
"""The VERINA JSON value encoding (VERINA and Python-spec suites)."""


class RowsUnreadable(ValueError):
    """A rows file whose content is not a list of rows: the task's tests cannot be read."""


def value_issue_kind(exc: Exception) -> str:
    return "unparsable" if isinstance(exc, Unparsable) else "ill_typed"


def json_error(exc: BaseException) -> str:
    """A one-line reason a JSON text could not be parsed (deep nesting included)."""
    if isinstance(exc, RecursionError):
        return "JSON is nested too deeply to read"
    return str(exc)


# ---------------------------------------------------------------- encoding


def _enc_input(signature: Signature, inp: Input, codec: ValueCodec) -> dict[str, Any]:
    return {p.name: codec.encode(p.type, v) for p, v in zip(signature.params, inp, strict=True)}


def encode_test(signature: Signature, case: ExpectedPair,
                codec: ValueCodec = VERINA_VALUES) -> dict[str, Any]:
    ret = signature.return_type
    row: dict[str, Any] = {
        "input": _enc_input(signature, case.input, codec),
        "expected": codec.encode(ret, case.expected),
        "unexpected": [codec.encode(ret, v) for v in case.unexpected],
    }
    if case.provenance != ORIGINAL:
        row["provenance"] = case.provenance
    return row


def encode_tests(task_id: str, signature: Signature, tests: list[ExpectedPair],
                 codec: ValueCodec = VERINA_VALUES) -> list[dict[str, Any]]:
    """``test.json`` rows; raises ``ValueError`` naming task, file and row on a bad value."""
    rows: list[dict[str, Any]] = []
    for i, case in enumerate(tests):
        try:
            rows.append(encode_test(signature, case, codec))
        except (ValueError_, ValueError, TypeError) as exc:
            raise ValueError(f"{task_id}: {TEST_JSON}[{i}]: cannot encode: {exc}") from exc
    return rows


def encode_rejects(task_id: str, signature: Signature, inputs: list[Input],
                   codec: ValueCodec = VERINA_VALUES) -> list[dict[str, Any]]:
    """``reject_inputs.json`` rows; raises ``ValueError`` naming task, file and row."""
    rows: list[dict[str, Any]] = []
    for i, inp in enumerate(inputs):
        try:
            rows.append({"input": _enc_input(signature, inp, codec)})
        except (ValueError_, ValueError, TypeError) as exc:
            raise ValueError(f"{task_id}: {REJECT_JSON}[{i}]: cannot encode: {exc}") from exc
    return rows


# ---------------------------------------------------------------- decoding


def decode_input(
    signature: Signature, raw: Any, file: str, where: str, issue: IssueFn,
    codec: ValueCodec = VERINA_VALUES,
) -> Input | None:
    """One ``{"param": json}`` input, reporting every bad parameter by name."""
    problem = signature.shape_problem(raw)
    if problem is not None:
        issue(file, where, "ill_typed", problem[1])
        return None
    values: list[Any] = []
    ok = True
    for p in signature.params:
        try:
            values.append(codec.decode(p.type, raw[p.name], file, f"{where}.{p.name}"))
        except (ValueError_, ValueError, TypeError, RecursionError) as exc:
            issue(file, f"{where}.{p.name}", _kind(exc), _message(exc))
            ok = False
    return tuple(values) if ok else None


def _decode_output(
    signature: Signature, raw: Any, file: str, where: str, issue: IssueFn,
    codec: ValueCodec = VERINA_VALUES,
) -> tuple[bool, Any]:
    try:
        return True, codec.decode(signature.return_type, raw, file, where)
    except (ValueError_, ValueError, TypeError, RecursionError) as exc:
        issue(file, where, _kind(exc), _message(exc))
    return False, None


def _kind(exc: Exception) -> str:
    return "too_deep" if isinstance(exc, RecursionError) else value_issue_kind(exc)


def _message(exc: Exception) -> str:
    if isinstance(exc, RecursionError):
        return "value is nested too deeply to decode"
    return str(exc)


def _rows(rows: Any, file: str) -> list[Any]:
    if not isinstance(rows, list):
        raise RowsUnreadable(f"{file} must hold a JSON list, got {type(rows).__name__}")
    return rows


def decode_tests(
    signature: Signature, rows: Any, issue: IssueFn, file: str = TEST_JSON,
    codec: ValueCodec = VERINA_VALUES,
) -> list[ExpectedPair]:
    """The expected pairs of ``rows`` (bad rows reported and dropped).

    Raises :class:`RowsUnreadable` when ``rows`` is not a list: a task whose
    tests cannot be read must not look like a task with zero tests.
    """
    out: list[ExpectedPair] = []
    for i, row in enumerate(_rows(rows, file)):
        where = f"[{i}]"
        if not isinstance(row, dict) or "input" not in row or "expected" not in row:
            issue(file, where, "bad_json", "a test row needs 'input' and 'expected'")
            continue
        inp = decode_input(signature, row["input"], file, f"{where}.input", issue, codec)
        ok, expected = _decode_output(signature, row["expected"], file, f"{where}.expected",
                                      issue, codec)
        if inp is None or not ok:
            continue
        raw_unexpected = row.get("unexpected") or []
        if not isinstance(raw_unexpected, list):
            issue(file, f"{where}.unexpected", "bad_json", "'unexpected' must be a list")
            raw_unexpected = []
        unexpected: list[Any] = []
        for j, value in enumerate(raw_unexpected):
            ok, decoded = _decode_output(signature, value, file, f"{where}.unexpected[{j}]",
                                         issue, codec)
            if ok:
                unexpected.append(decoded)
        provenance = row.get("provenance", ORIGINAL)
        if not isinstance(provenance, str) or not provenance:
            issue(file, f"{where}.provenance", "bad_json", "'provenance' must be a non-empty string")
            provenance = ORIGINAL
        out.append(ExpectedPair(inp, expected, unexpected, provenance))
    return out


def decode_rejects(
    signature: Signature, rows: Any, issue: IssueFn, file: str = REJECT_JSON,
    codec: ValueCodec = VERINA_VALUES,
) -> list[Input]:
    """The unexpected inputs of ``rows``; raises :class:`RowsUnreadable` when not a list."""
    out: list[Input] = []
    for i, row in enumerate(_rows(rows, file)):
        where = f"[{i}]"
        if not isinstance(row, dict) or "input" not in row:
            issue(file, where, "bad_json", "a reject row needs 'input'")
            continue
        inp = decode_input(signature, row["input"], file, f"{where}.input", issue, codec)
        if inp is not None:
            out.append(inp)
    return out


def read_rows(
    decoder: Callable[..., list[Any]], signature: Signature, data: Mapping[str, Any],
    file: str, issue: IssueFn, unreadable: dict[str, str], problems: Sequence[Any] = (),
    codec: ValueCodec = VERINA_VALUES,
) -> list[Any]:
    """One rows file of a task folder (``data``: the folder's parsed JSON files by name)
    through ``decoder``. A missing, unreadable or non-list file is recorded in
    ``unreadable`` (with the reading problem in ``problems`` naming it, if any) and read
    as no rows: a task whose rows cannot be read must never look like one without rows."""
    if file not in data:
        problem = next((i for i in problems if getattr(i, "file", None) == file), None)
        unreadable[file] = problem.message if problem else f"{file} could not be read"
        return []
    try:
        return decoder(signature, data[file], issue, file, codec)
    except RowsUnreadable as exc:
        issue(file, "", "bad_json", str(exc))
        unreadable[file] = str(exc)
        return []
