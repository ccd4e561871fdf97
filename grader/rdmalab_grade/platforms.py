"""platforms: a submission's results in the formats other programs read:
Gradescope's results.json, junit.xml, GitHub Classroom's grading
reporter's JSON, PrairieLearn's results.json and Autolab's autoresult line.
Each is a function of the submission; tests/grader/schemas/ holds the
formats."""

from __future__ import annotations

import re
from typing import Any

from . import jsontext
from .jsontext import number
from .model import BadInput, Record, Submission, lab_status
from .report import about, output, status, title, unsafe_note
from .texts import cut, lines

# --- Gradescope -----------------------------------------------------------------


def gradescope_json(s: Submission) -> str:
    """results.json in Gradescope's format (schemas/gradescope-results.json):
    the score, what the report is, and one test per record."""
    doc = {
        "score": s.points(),
        "output": f"{s.name}: {status(s)}\n{about(s)}" + (f"\n{s.intake}" if s.intake else ""),
        "visibility": "visible",
        "extra_data": {
            "student": s.name,
            "max_score": s.most(),
            "ungradable": not s.gradable,
            "made": s.made,
            "unsafe": s.unsafe,
            "graded_with": s.provenance.text(),
            "labs": {number(lab): lab_status(s, lab) for lab in s.labs()},
            "submitted": {number(lab): f.submitted for lab in s.labs() for f in [s.facts(lab)] if f is not None},
        },
        "tests": [
            {
                "name": title(r),
                "score": r.points,
                "max_score": r.max,
                "status": "passed" if r.passed else "failed",
                "output": output(r),
                "visibility": "visible",
                "extra_data": {"ms": r.ms},
            }
            for r in s.records
        ],
    }
    return jsontext.dumps(doc, indent=2) + "\n"


# --- JUnit ------------------------------------------------------------------------

_XML_REFUSES = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")
_HTML = {"<": "&lt;", ">": "&gt;", "&": "&amp;", "'": "&apos;", '"': "&quot;"}
_LINE_ENDS = {"\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}


def escape_html(text: str) -> str:
    """TEXT with the characters HTML and XML give a meaning to as entities."""
    return "".join(_HTML.get(c, c) for c in text)


def xml_text(value: object) -> str:
    """VALUE as XML text, in an element or an attribute: escaped, line ends
    kept as character references (an attribute's would become spaces), and
    the control characters XML 1.0 refuses as spaces."""
    text = value if isinstance(value, str) else number(value)  # type: ignore[arg-type]
    text = escape_html(_XML_REFUSES.sub(" ", text))
    return "".join(_LINE_ENDS.get(c, c) for c in text)


def _outcome(r: Record) -> str:
    if r.result == "FAIL":
        shown = f'<failure message="{xml_text(r.message)}"/>'
    elif r.result == "skipped":
        shown = f'<skipped message="{xml_text(r.message)}"/>'
    else:
        shown = ""
    if r.result == "FAIL" and r.said:
        shown += f"<system-out>{xml_text(r.said)}</system-out>"
    return shown


def _error_suite(name: str, case: str, message: str) -> list[str]:
    """A suite of one test case in error (no lab's: the grader's own)."""
    return [
        f'  <testsuite name="{name}" tests="1" failures="0" errors="1" skipped="0">',
        f'    <testcase classname="grader" name="{case}"><error message="{xml_text(message)}"/></testcase>',
        "  </testsuite>",
    ]


def junit_xml(s: Submission) -> str:
    """junit.xml (schemas/junit.xsd): a suite per lab, a case per record, a
    failure's message and what the student's code printed."""
    name = xml_text(s.name)
    out = ['<?xml version="1.0" encoding="UTF-8"?>', f'<testsuites name="{name}">']
    if s.unsafe is not None:
        out += _error_suite(f"{name}.sandbox", "sandbox", unsafe_note(s))
    if not s.gradable:
        out += _error_suite(name, "ungradable", s.ungradable or "")
    for lab in s.labs():
        records = s.of_lab(lab)
        failures = sum(1 for r in records if r.result == "FAIL")
        skipped = sum(1 for r in records if r.result == "skipped")
        out.append(
            f'  <testsuite name="{name}.lab{number(lab)}" tests="{len(records)}" failures="{failures}" '
            f'errors="0" skipped="{skipped}">'
        )
        for r in records:
            where = "build" if r.step == 0 else f"step{number(r.step)}"
            out.append(
                f'    <testcase classname="lab{number(lab)}.{where}" name="{xml_text(r.test)}" '
                f'time="{number(r.ms / 1000)}">{_outcome(r)}</testcase>'
            )
        out.append("  </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"


# --- GitHub Classroom -------------------------------------------------------------

# The reporter reaches a message through one environment variable, base64,
# which Linux bounds to 128 KiB (MAX_ARG_STRLEN): every test of every lab
# failing with long messages must still fit (tests/grader/test_classroom.py
# checks it). The whole message is in report.txt, which the workflow prints.
BRIEF = 200


def _points(r: Record) -> str:
    """"(2 points)" after a test's name (the reporter's own table counts
    tests, not points: docs/instructor.md, "GitHub Classroom")."""
    if r.max == 0:
        return ""
    return f" ({number(r.max)} point{'' if r.max == 1 else 's'})"


def _rerun(r: Record) -> str:
    """The student's command that runs this test again, under a failure."""
    if r.passed:
        return ""
    if r.step == 0:
        return f"make check LAB={number(r.lab)}"
    return f"make check LAB={number(r.lab)} STEP={number(r.step)}"


def _brief(r: Record) -> str:
    """The first line of what went wrong, at most 200 characters, cut
    after a word."""
    first = lines(output(r))
    return cut(first[0] if first else "", BRIEF)


def _classroom_test(name: str, status: str, score: float, message: str, code: str, ms: float) -> dict[str, Any]:
    return {
        "name": name, "status": status, "score": score, "message": message,
        "test_code": code, "filename": "", "line_no": 0, "duration": ms,
    }  # fmt: skip


def classroom_json(s: Submission) -> str:
    """The submission's result as GitHub Classroom's grading reporter reads
    it (schemas/classroom-result.json), one line: the status, the most
    points, and one test per record with the points it earned (the reporter
    adds them up for the grade it sends). An ungradable submission is an
    error, of most 0 (so no grade is sent); one graded --unsafe fails, with
    a test of no points that says what was missing."""
    if not s.gradable:
        state = "error"
        tests = [_classroom_test(f"grading {s.name}", "error", 0, f"UNGRADABLE: {s.ungradable}", "", 0)]
    else:
        state = "pass" if s.unsafe is None and all(r.passed for r in s.records) else "fail"
        tests = [_classroom_test("sandbox", "fail", 0, cut(unsafe_note(s), BRIEF), "", 0)] if s.unsafe is not None else []
        tests += [
            _classroom_test(title(r) + _points(r), "pass" if r.passed else "fail", r.points, _brief(r), _rerun(r), r.ms)
            for r in s.records
        ]
    doc = {"version": 1, "status": state, "max_score": s.most(), "tests": tests}
    return jsontext.dumps(doc) + "\n"


# --- PrairieLearn -----------------------------------------------------------------

# PrairieLearn refuses a results.json past 1 MB; the records are bounded
# (20 lines of 400 characters a text), so only a submission with a hundred
# tests failing at length comes near: then each test's texts are cut.
PRAIRIELEARN_MOST = 1000000
PRAIRIELEARN_CUT = 1500


def _cut(text: str) -> str:
    if len(text) <= PRAIRIELEARN_CUT:
        return text
    return text[:PRAIRIELEARN_CUT] + "\n... (cut: PrairieLearn takes at most 1 MB of results)"


def _description(r: Record) -> str:
    if r.step == 0:
        return f"Lab {number(r.lab)} builds with the kit's flags (warnings are errors)"
    return f"Lab {number(r.lab)}, step {number(r.step)}: docs/lab{number(r.lab)}.md#step-{number(r.step)}"


def _prairielearn_test(r: Record) -> dict[str, Any]:
    message = "" if r.passed else f"skipped: {r.message}" if r.result == "skipped" else r.message
    return {
        "name": title(r),
        "description": _description(r),
        "points": r.points,
        "max_points": r.max,
        "message": message,
        "output": r.said if r.result == "FAIL" else "",
    }


def prairielearn_json(s: Submission) -> str:
    """results.json in PrairieLearn's format (external grading;
    schemas/prairielearn-results.json): whether it could be graded, the
    score as a fraction of the points (0 to 1), and one test per record. An
    ungradable submission is "gradable": false, with why: PrairieLearn then
    counts no attempt against the student. One graded --unsafe says what
    the sandbox lacked in its message and output."""
    if not s.gradable:
        doc: dict[str, Any] = {
            "gradable": False,
            "message": f"not graded: {s.ungradable}",
            "format_errors": [s.ungradable],
            "output": about(s),
            "tests": [],
        }
    else:
        most = s.most()
        doc = {
            "gradable": True,
            "score": s.points() / most if most > 0 else 0,
            "message": f"{s.name}: {status(s)}" + (f"\n{unsafe_note(s)}" if s.unsafe is not None else ""),
            "output": about(s) + (f"\n{s.intake}" if s.intake else ""),
            "tests": [_prairielearn_test(r) for r in s.records],
        }
    if len(jsontext.dumps(doc).encode("utf-8")) > PRAIRIELEARN_MOST:
        for t in doc["tests"]:
            t["message"], t["output"] = _cut(t["message"]), _cut(t["output"])
    return jsontext.dumps(doc, indent=2) + "\n"


# --- Autolab ----------------------------------------------------------------------


def autolab_line(s: Submission, where: str) -> str:
    """The autoresult, the line Autolab reads last from its autograder's
    output: one score per lab graded, named labN (the assessment's problems
    must have these names), and a scoreboard row of the total then each
    lab's points: {"scores":{"lab0":12,"lab3":64},"scoreboard":[76,12,64]}.
    It holds no text: Autolab quotes every "word:" in it before it parses
    it (parseAutoresult), which would break a text such as an --unsafe
    note. An ungradable submission has none: BadInput, with why (WHERE:
    its submission.json), which the autograder prints last instead, and
    Autolab records as a failed autograding rather than as scores."""
    if not s.gradable:
        raise BadInput(f"{where}: not graded: {s.ungradable}")
    scores = {f"lab{number(lab)}": sum(r.points for r in s.of_lab(lab)) for lab in s.labs()}
    doc = {"scores": scores, "scoreboard": [sum(scores.values())] + list(scores.values())}
    return jsontext.dumps(doc) + "\n"
