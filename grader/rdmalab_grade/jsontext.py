"""jsontext: JSON values read and written as the grader's files have them.

The records, submission.json and the platforms' files were first written by
jq; their readers (tests, platforms, diffs between runs) expect its text: a
number as its shortest decimal, in exponent form past 17 digits
("1e+17"); strings with only the escapes JSON requires, and DEL as \\u007f;
an indent of two spaces. Reading refuses NaN and Infinity, as jq does.
"""

from __future__ import annotations

import json
import math
import sys
from decimal import Decimal
from typing import Any


class NotJSON(ValueError):
    """A text that is not one JSON value."""


def _refuse_constant(name: str) -> Any:
    raise NotJSON(f"{name} is not JSON")


def _whole_characters(value: Any) -> bool:
    """Whether every text in VALUE is whole characters: no lone half of a
    surrogate pair (an escape UTF-8 cannot hold, which jq refuses)."""
    if isinstance(value, str):
        return not any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, list):
        return all(_whole_characters(v) for v in value)
    if isinstance(value, dict):
        return all(_whole_characters(k) and _whole_characters(v) for k, v in value.items())
    return True


def _number(text: str) -> float:
    """A JSON integer: exact below 2**53, a double past it (jq's numbers)."""
    n = int(text)
    return n if abs(n) < 2**53 else float(text)


def parse(text: str) -> Any:
    """TEXT's one JSON value; NotJSON when it holds none or more than one."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_int=_number)
    except ValueError as e:
        raise NotJSON(str(e)) from None
    if "\\u" in text and not _whole_characters(value):
        raise NotJSON("a lone surrogate escape")
    return value


def is_number(value: Any) -> bool:
    """Whether VALUE is a JSON number (Python's bools are ints: not those)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def number(x: float) -> str:
    """A number as jq writes it: its shortest decimal that reads back the
    same, in exponent form when that has more than 17 digits before the
    point or more than 4 zeros after it ("1e+17", "1e-05")."""
    if isinstance(x, int) and abs(x) < 2**53:
        return str(x)
    x = float(x)
    if math.isnan(x):
        return "null"
    if math.isinf(x):
        x = math.copysign(sys.float_info.max, x)
    if x == 0:
        return "-0" if math.copysign(1, x) < 0 else "0"
    sign, digits_t, exp = Decimal(repr(x)).as_tuple()
    digits = "".join(map(str, digits_t)).rstrip("0") or "0"
    # decpt: where the point goes, counted from the first digit.
    decpt = len(digits_t) + int(exp)
    minus = "-" if sign else ""
    if decpt <= -4 or decpt > len(digits) + 15:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        e = decpt - 1
        return f"{minus}{mantissa}e{'-' if e < 0 else '+'}{abs(e):02d}"
    if decpt <= 0:
        return f"{minus}0.{'0' * -decpt}{digits}"
    if decpt >= len(digits):
        return minus + digits + "0" * (decpt - len(digits))
    return f"{minus}{digits[:decpt]}.{digits[decpt:]}"


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _char(c: str) -> str:
    if c in _ESCAPES:
        return _ESCAPES[c]
    if c < " " or c == "\x7f":
        return f"\\u{ord(c):04x}"
    return c


def string(s: str) -> str:
    """S as a JSON string."""
    return '"' + "".join(_char(c) for c in s) + '"'


def dumps(value: Any, indent: int = 0) -> str:
    """VALUE as JSON text: on one line (INDENT 0), or spread over lines
    with INDENT spaces a level."""
    return _dump(value, indent, 0)


def _dump(value: Any, indent: int, depth: int) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if is_number(value):
        return number(value)
    if isinstance(value, str):
        return string(value)
    if isinstance(value, dict):
        items = [string(k) + (": " if indent else ":") + _dump(v, indent, depth + 1) for k, v in value.items()]
        return _wrap("{", items, "}", indent, depth)
    if isinstance(value, (list, tuple)):
        return _wrap("[", [_dump(v, indent, depth + 1) for v in value], "]", indent, depth)
    raise TypeError(f"not a JSON value: {value!r}")


def _wrap(open_: str, items: list[str], close: str, indent: int, depth: int) -> str:
    if not items:
        return open_ + close
    if not indent:
        return open_ + ",".join(items) + close
    inner = "\n" + " " * (indent * (depth + 1))
    return open_ + inner + ("," + inner).join(items) + "\n" + " " * (indent * depth) + close

