"""texts: what every view does to the records' texts: their lines, bounded
and aligned, and the bytes the C writer escaped read back as UTF-8."""

from __future__ import annotations

import math
import re

from .jsontext import number

# The characters a blank line may hold: Unicode's white space (what jq's
# regular expressions, which first read these files, call \\s).
SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

# A line's longest, in characters; a message's and an output's most lines.
CLIP = 400
MESSAGE_LINES = 20
# What a program printed: 20 lines, and its own note of what it left out
# (tests/case.c).
SAID_LINES = 21
# Why a lab did not build: the reason, and 20 lines of the compiler's or the
# rules' messages (grader/rdmalab_grade/build.py).
BUILD_LINES = 21

_NOTE = re.compile(r"step [0-9]+ not implemented")


def is_blank(text: str) -> bool:
    """Whether TEXT holds nothing but white space."""
    return all(c in SPACE for c in text)


def lines(text: str) -> list[str]:
    """TEXT's lines, without carriage returns and trailing blank lines."""
    found = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    while found and is_blank(found[-1]):
        found.pop()
    return found


def clip(line: str) -> str:
    """LINE, cut to at most 400 characters (and "..." when cut)."""
    return line[:CLIP] + "..." if len(line) > CLIP else line


def cut(text: str, most: int) -> str:
    """TEXT in at most MOST characters: whole, or cut after a word with
    "..." (never mid-word, unless one word is over half of MOST)."""
    if len(text) <= most:
        return text
    head = text[:most - 3]
    space = head.rfind(" ")
    return (head[:space] if space > most // 2 else head).rstrip() + "..."


def is_note(line: str) -> bool:
    """Whether LINE is the note a stub's step prints, which tests/case.c adds
    to a failure's message ("step 3 not implemented", and where to read)."""
    return _NOTE.match(line) is not None


def bounded(text: str, most: int, where: str) -> str:
    """TEXT in at most MOST lines of at most 400 characters, and, when it
    is longer, a last line that says WHERE it is whole."""
    kept = [clip(line) for line in lines(text)]
    if len(kept) > most:
        kept = kept[:most] + [f"... ({len(kept) - most} more lines: see {where})"]
    return "\n".join(kept)


def bounded_message(text: str, where: str) -> str:
    """A failure's message bounded to 20 lines, a stub's notes kept after."""
    all_lines = lines(text)
    body = bounded("\n".join(line for line in all_lines if not is_note(line)), MESSAGE_LINES, where)
    notes = [clip(line) for line in all_lines if is_note(line)]
    return "\n".join(([body] if body else []) + notes)


def _utf8_length(byte: int) -> int:
    """How many continuation bytes a UTF-8 sequence that starts with BYTE has
    (0: it starts none)."""
    if 194 <= byte <= 223:
        return 1
    if 224 <= byte <= 239:
        return 2
    if 240 <= byte <= 244:
        return 3
    return 0


def _code_point(lead: int, tail: list[int]) -> int | None:
    """The character of a UTF-8 sequence, or None when it is not one (too
    long a form, a surrogate, past U+10FFFF)."""
    n = len(tail)
    value = lead & (0x3F >> n)
    for b in tail:
        value = value * 64 + (b - 128)
    if n == 1 or (n == 2 and value >= 2048 and not 55296 <= value <= 57343) or (n == 3 and 65536 <= value <= 1114111):
        return value
    return None


def from_c_bytes(text: str) -> str:
    """A text as the C writer escaped it, byte by byte (each byte past 0x7e
    as \\u00XX: framework/json.c), as the characters its bytes spell in
    UTF-8. A byte that starts no valid sequence stays the character of its
    value (Latin-1); a text with characters past U+00FF was not escaped so,
    and stays as it is."""
    if not any("\x80" <= c <= "\xff" for c in text) or any(c > "\xff" for c in text):
        return text
    b = [ord(c) for c in text]
    out: list[str] = []
    i = 0
    while i < len(b):
        n = _utf8_length(b[i])
        tail = b[i + 1 : i + 1 + n]
        if n and len(tail) == n and all(128 <= t <= 191 for t in tail):
            value = _code_point(b[i], tail)
            if value is not None:
                out.append(chr(value))
                i += n + 1
                continue
        out.append(chr(b[i]))
        i += 1
    return "".join(out)


def text_of(value: object) -> str:
    """VALUE as the views show it: a text as it is, a number as JSON has it."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return number(value)  # type: ignore[arg-type]


def pad(value: object, width: int) -> str:
    """VALUE as text, aligned left in WIDTH characters."""
    text = text_of(value)
    return text + " " * (width - len(text))


def lpad(value: object, width: int) -> str:
    """VALUE as text, aligned right in WIDTH characters."""
    text = text_of(value)
    return " " * (width - len(text)) + text


def round_half_away(x: float) -> float:
    """X to the nearest whole number, halves away from zero (C's round(),
    which the first views used; Python's round() takes halves to even)."""
    if x < 0:
        return -round_half_away(-x)
    whole = math.floor(x)
    return whole + 1 if x - whole >= 0.5 else whole


def c_remainder(a: float, b: float) -> int:
    """A % B as C computes it on whole numbers: the sign of A."""
    return int(math.fmod(int(a), int(b)))


def seconds(ms: float) -> str:
    """A time in milliseconds as seconds with one decimal ("0.4 s")."""
    tenths = round_half_away(ms / 100)
    return f"{number(math.floor(tenths / 10))}.{number(c_remainder(tenths, 10))} s"
