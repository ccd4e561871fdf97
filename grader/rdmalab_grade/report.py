"""report: the views a person reads in a terminal or a text file: make
check's table of a lab's tests, and a submission's report.txt."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from .jsontext import number
from .model import PreflightLab, Provenance, Record, Submission, lab_status, preflight_note
from .texts import is_note, lines, lpad, pad, seconds

# --- What every view of a record shares ---------------------------------------


def step_label(r: Record) -> str:
    return "build" if r.step == 0 else number(r.step)


def title(r: Record) -> str:
    """A record's name on a course platform."""
    if r.step == 0:
        return f"Lab {number(r.lab)}: the lab builds"
    return f"Lab {number(r.lab)} step {number(r.step)}: {r.test}"


def output(r: Record) -> str:
    """What a student reads under a test on a course platform (Gradescope's
    results.json, GitHub Classroom's report): nothing under a pass, why it
    was skipped, or the message and what the student's code printed."""
    if r.passed:
        return ""
    if r.result == "skipped":
        return f"skipped: {r.message}"
    if r.said:
        return f"{r.message}\n\nyour code printed:\n{r.said}"
    return r.message


def detail(r: Record, first: int, next_: int) -> list[str]:
    """The lines shown under a record: its message's first line indented
    FIRST spaces, its others NEXT (a stub's note FIRST), then, under a
    failure, what the student's code printed."""
    a, b = " " * first, " " * next_
    shown = [(a if i == 0 or is_note(line) else b) + line for i, line in enumerate(lines(r.message))]
    if r.result == "FAIL" and r.said:
        shown.append(a + "your code printed:")
        shown += [b + line for line in lines(r.said)]
    return shown


def score(r: Record) -> str:
    """A record's points of its test's ("  0/1")."""
    return f"{lpad(r.points, 2)}/{number(r.max)}"


def status(s: Submission) -> str:
    """"7/14 points", or why the submission could not be graded."""
    if not s.gradable:
        return f"UNGRADABLE: {s.ungradable}"
    return f"{number(s.points())}/{number(s.most())} points"


def unsafe_note(s: Submission) -> str:
    """The line every view of a submission graded without the whole
    sandbox (rdmalab-grade --unsafe) shows, naming what it lacked."""
    return f"UNSAFE: graded without the grader's whole sandbox (--unsafe): it lacked {s.unsafe}"


def about(s: Submission) -> str:
    """What the report is: when it was made, of which labs, what with (the
    kit, where RDMA ran, its kernel, the limits' multiplier), of which
    files, and what the sandbox lacked when it did."""
    text = f"made:   {s.made}\ngraded: {s.graded}"
    if s.provenance != Provenance():
        text += f"\nwith:   {s.provenance.text()}"
    if s.source:
        text += "\nfrom:   " + "\n        ".join(s.source.split("\n"))
    if s.unsafe is not None:
        text += "\n" + unsafe_note(s)
    return text


# --- make check's table --------------------------------------------------------


@dataclass(frozen=True)
class Table:
    """make check's table of a lab's tests, and its exit status: 1 when a
    test did not pass (on the stubs, when one passed)."""

    text: str
    status: int


def _table_row(r: Record, width: int) -> list[str]:
    row = f"{lpad(r.step, 4)}  {pad(r.test, width)}  {pad(r.result, 7)}  {pad(score(r), 6)}  {lpad(seconds(r.ms), 6)}"
    if r.result == "skipped":
        row += "  " + (r.skipped_because if r.skipped_because is not None else r.message)
    return [row] + (detail(r, 6, 8) if r.result == "FAIL" else [])


def _count(records: list[Record], result: str) -> int:
    return sum(1 for r in records if r.result == result)


def table(lab: int, tree: str, step: str, stubs: bool, tests: list[Record]) -> Table:
    """make check's table: each test (lab LAB from TREE; STEP's only, unless
    STEP is "") with its result and points, what went wrong under a
    failure, and the totals. STUBS: the lab is its untouched stubs, on
    which every test must fail."""
    width = max((len(r.test) for r in tests), default=4)
    out = [
        f"Lab {lab} from {tree}/lab{lab}" + (f", step {step} only" if step else ""),
        "",
        f"step  {pad('test', width)}  {pad('result', 7)}  points    time",
    ]
    for r in tests:
        out += _table_row(r, width)
    out += [
        "",
        f"total: {number(sum(r.points for r in tests))}/{number(sum(r.max for r in tests))} points; "
        f"{_count(tests, 'pass')} passed, {_count(tests, 'FAIL')} failed, {_count(tests, 'skipped')} skipped",
    ]
    passing = [r.test for r in tests if r.passed]
    if stubs and passing:
        out.append("stubs: these tests pass without the student's code, so they grade nothing: " + " ".join(passing))
        return Table("\n".join(out) + "\n", 1)
    if stubs:
        out.append("stubs: every test fails on the untouched stubs, as it should")
        return Table("\n".join(out) + "\n", 0)
    return Table("\n".join(out) + "\n", 0 if all(r.passed for r in tests) else 1)


# --- report.txt ------------------------------------------------------------------


def _report_row(r: Record) -> list[str]:
    row = f"  {pad(step_label(r), 6)}  {pad(r.test, 70)}  {pad(r.result, 7)}  {pad(score(r), 6)}  {lpad(seconds(r.ms), 6)}"
    return [row] + ([] if r.passed else detail(r, 10, 12))


def _lab_head(s: Submission, lab: float) -> list[str]:
    """A lab's heading: its points and what kind of score they are, when it
    was submitted, and why the grader failed it."""
    records = s.of_lab(lab)
    kind = lab_status(s, lab)
    out = [f"Lab {number(lab)}: {number(sum(r.points for r in records))}/{number(sum(r.max for r in records))} "
           f"points ({kind})"]  # fmt: skip
    facts = s.facts(lab)
    if facts is not None and facts.submitted:
        out.append(f"  submitted {facts.submitted} (from {facts.submitted_from}), graded {facts.made}")
    why = s.lab_error(lab)
    if why is not None:
        out.append(f"  the grader failed this lab, not you: {why}; these points are not your score")
    return out


def _lab_rows(records: list[Record], named: dict[float, str]) -> list[str]:
    """A lab's records, each step's under its title from the handout."""
    out: list[str] = []
    step = None
    for r in records:
        if r.step != step and r.step in named:
            out.append(f"  step {number(r.step)}: {named[r.step]}")
        step = r.step
        out += _report_row(r)
    return out


def report_txt(s: Submission, titles: Callable[[float], dict[float, str]] = lambda lab: {},
               forced: Sequence[PreflightLab] = ()) -> str:
    """A submission's report.txt: what it is, the labs graded though the
    kit's preflight failed (FORCED), then each lab's points, what kind of
    score, and each record, under its step's title (TITLES), what went
    wrong under one that did not pass."""
    out = [f"{s.name}: {status(s)}", about(s)] + ([s.intake] if s.intake else [])
    out += [f"NOTE: {preflight_note(p)}" for p in forced if p.lab in s.labs()]
    for lab in s.labs():
        out += [
            "",
            *_lab_head(s, lab),
            f"  {pad('step', 6)}  {pad('test', 70)}  {pad('status', 7)}  points    time",
            *_lab_rows(s.of_lab(lab), titles(lab)),
        ]
    return "\n".join(out) + "\n"
