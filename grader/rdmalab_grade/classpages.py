"""classpages: a class's class.csv, summary.txt and class.html, each a view
of one set of the class's figures (Figures): a line per student, their
points in each lab and their total, and per lab and step how many graded
students passed it whole.

Only the class's labs count: a student graded before in the same folder
may have others. A student's lab is flagged when the grader refused it for
breaking its rules (its build's message says "refused: ")."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence, Union
from urllib.parse import quote

from .jsontext import number
from .model import Record, Student
from .platforms import escape_html
from .texts import lpad, round_half_away, text_of


@dataclass(frozen=True)
class StudentFigures:
    """A student's figures in the class's labs: got (points, lab by lab)
    and total mean nothing when they could not be graded."""

    name: str
    graded: bool
    unsafe: str | None
    seconds: float | None
    got: list[float]
    most: list[float]
    total: float
    flagged: list[float]
    records: list[Record]

    @property
    def status(self) -> str:
        """The student's grading in a word: graded, unsafe or ungradable."""
        if not self.graded:
            return "ungradable"
        return "unsafe" if self.unsafe is not None else "graded"


@dataclass(frozen=True)
class StepFigures:
    """How many graded students passed every test of a lab's step."""

    lab: float
    step: float
    passed: int


@dataclass(frozen=True)
class Figures:
    """The class's figures: its labs, the most points of each (the most
    any student's records could earn) and their sum, its students and
    its steps."""

    labs: list[float]
    most: list[float]
    top: float
    students: list[StudentFigures]
    steps: list[StepFigures]

    @property
    def graded(self) -> list[StudentFigures]:
        return [s for s in self.students if s.graded]


def _student_figures(st: Student, labs: Sequence[float]) -> StudentFigures:
    sub = st.submission
    records = [r for r in sub.records if r.lab in labs]
    got = [sum(r.points for r in records if r.lab == lab) for lab in labs]
    return StudentFigures(
        name=st.name,
        graded=sub.gradable,
        unsafe=sub.unsafe,
        seconds=sub.seconds,
        got=got,
        most=[sum(r.max for r in records if r.lab == lab) for lab in labs],
        total=sum(got),
        flagged=[r.lab for r in records if r.step == 0 and r.message.startswith("refused: ")],
        records=records,
    )


def _passed(students: list[StudentFigures], lab: float, step: float) -> int:
    """How many graded students passed every test of step STEP of lab LAB."""
    count = 0
    for s in students:
        of_step = [r for r in s.records if r.lab == lab and r.step == step]
        if s.graded and of_step and all(r.passed for r in of_step):
            count += 1
    return count


def figures(students: list[Student], labs: Sequence[float]) -> Figures:
    """The figures of STUDENTS (in the class's order) in the labs LABS."""
    each = [_student_figures(st, labs) for st in students]
    most = [max((s.most[i] for s in each), default=0) for i in range(len(labs))]
    steps = []
    for lab in labs:
        found = sorted({r.step for s in each if s.graded for r in s.records if r.lab == lab})
        steps += [StepFigures(lab, step, _passed(each, lab, step)) for step in found]
    return Figures(list(labs), most, sum(most), each, steps)


# --- class.csv ------------------------------------------------------------------


# A field of class.csv: a text (quoted), a number, or nothing (empty).
CsvField = Optional[Union[str, float]]


def _csv_field(value: CsvField) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return '"' + value.replace('"', '""') + '"'
    return text_of(value)


def class_csv(f: Figures) -> str:
    """class.csv: a line per student, their points in each lab, their total,
    the most points there were, whether they were graded, and the seconds
    their builds and tests took. An ungradable student has no points; one
    graded without the whole sandbox (--unsafe) has the status "unsafe"."""
    labs = [f"lab{number(lab)}" for lab in f.labs]
    rows: list[list[CsvField]] = [["student", *labs, "total", "max", "status", "seconds"]]
    for s in f.students:
        points: list[CsvField] = [*s.got, s.total] if s.graded else [None] * (len(s.got) + 1)
        rows.append([s.name, *points, f.top, s.status, s.seconds])
    return "".join(",".join(_csv_field(v) for v in row) + "\n" for row in rows)


# --- summary.txt ----------------------------------------------------------------


def one_decimal(x: float) -> str:
    """A number as text with one decimal ("3.0")."""
    text = number(round_half_away(x * 10) / 10)
    return text if "." in text else text + ".0"


def bucket(total: float, top: float) -> int:
    """The tenth of TOP a total falls in, 0 to 9."""
    return min(math.floor(total * 10 / top), 9) if top > 0 else 9


def _median(sorted_scores: list[float]) -> float:
    n = len(sorted_scores)
    if n % 2 == 1:
        return sorted_scores[(n - 1) // 2]
    return (sorted_scores[n // 2 - 1] + sorted_scores[n // 2]) / 2


def _distribution(f: Figures, scores: list[float]) -> list[str]:
    buckets = [bucket(t, f.top) for t in scores]
    out = []
    for k in range(9, -1, -1):
        n = buckets.count(k)
        upper = 100 if k == 9 else k * 10 + 9
        out.append(f"{lpad(k * 10, 3)}-{lpad(upper, 3)}%  {lpad(n, 3)}  {'#' * n}")
    return out


def summary_txt(f: Figures) -> str:
    """summary.txt: the distribution of the totals, the grading times, each
    lab's mean, the students a lab of whom was refused for breaking its
    rules, and those graded without the whole sandbox (--unsafe)."""
    scores = sorted(s.total for s in f.graded)
    n = len(scores)
    took = sorted(s.seconds for s in f.students if s.seconds is not None)
    labs = " ".join(number(lab) for lab in f.labs)
    out = [
        f"{len(f.students)} student(s): {n} graded, {len(f.students) - n} ungradable; labs {labs}, {number(f.top)} points in all"
    ]
    if n:
        out.append(
            f"total: min {number(scores[0])}, median {number(_median(scores))}, "
            f"mean {one_decimal(sum(scores) / n)}, max {number(scores[-1])}"
        )
        out += _distribution(f, scores)
    if took:
        middle = took[math.floor((len(took) + 1) / 2 - 1)]
        out.append(
            f"grading time per student (builds and tests): min {number(took[0])} s, "
            f"median {number(middle)} s, max {number(took[-1])} s"
        )
    for i, lab in enumerate(f.labs):
        mean = sum(s.got[i] for s in f.graded) / n if n else 0
        out.append(f"lab {number(lab)}: mean {one_decimal(mean)} of {number(f.most[i])}")
    for s in f.students:
        if s.flagged:
            out.append(
                f"flagged: {s.name}: lab {' '.join(number(lab) for lab in s.flagged)} "
                "broke the rules of a lab's files, scored 0 (see the report)"
            )
    for s in f.students:
        if s.unsafe is not None:
            out.append(f"unsafe: {s.name}: graded without the grader's whole sandbox (--unsafe): it lacked {s.unsafe}")
    return "\n".join(out) + "\n"


# --- class.html -----------------------------------------------------------------

# What escape_html and quote leave in a URL as it is (besides letters and
# digits): RFC 2396's unreserved marks, as the first page's writer left them.
_URL_SAFE = "-_.!~*'()"

_STYLE = [
    "body{font:15px/1.4 sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:.5em 0 1.5em}",
    "td,th{padding:2px 10px;border-bottom:1px solid #ddd;text-align:left}td.n{text-align:right}",
    ".bar{display:inline-block;height:12px;vertical-align:middle}.score{background:#4a7ab5}",
    ".ok{background:#5a9e5a}.low{background:#c0392b}tr.stuck td,.stuck{background:#fbe3e0}",
]


def h(value: object) -> str:
    """VALUE as HTML text."""
    return escape_html(text_of(value))


def _bar(value: float, most: float, kind: str) -> str:
    width = math.floor(value * 240 / most + 0.5) if most > 0 else 0
    return f'<span class="bar {kind}" style="width:{number(width)}px"></span>'


def _distribution_html(f: Figures) -> list[str]:
    count = [0] * 10
    for s in f.graded:
        count[bucket(s.total, f.top)] += 1
    most = max(count)
    out = [
        "<h2>Scores</h2>",
        f"<p>{len(f.students)} student(s), {len(f.graded)} graded, {len(f.students) - len(f.graded)} ungradable; "
        f"{h(f.top)} points in all.</p>",
        '<table class="dist"><tr><th>total</th><th>students</th><th></th></tr>',
    ]
    for k in range(9, -1, -1):
        upper = 100 if k == 9 else k * 10 + 9
        out.append(
            f'<tr><td>{k * 10}&ndash;{upper}%</td><td class="n" data-bucket="{k}">{count[k]}</td>'
            f'<td>{_bar(count[k], most, "score")}</td></tr>'
        )
    return out + ["</table>"]


def _steps_html(f: Figures) -> list[str]:
    n = len(f.graded)
    out = [
        "<h2>Where the class is stuck</h2>",
        f"<p>Per lab and step, how many of the {n} graded students passed every test of the step. "
        'A step fewer than half passed is <span class="stuck">marked</span>.</p>',
        '<table class="steps"><tr><th>lab</th><th>step</th><th>passed</th><th></th></tr>',
    ]
    for st in f.steps:
        pct = 100 * st.passed / n if n else 0
        stuck = pct < 50
        step = h("build" if st.step == 0 else st.step)
        row = '<tr class="stuck">' if stuck else "<tr>"
        out.append(
            f"{row}<td>{h(st.lab)}</td><td>{step}</td>"
            f'<td class="n" data-lab="{h(st.lab)}" data-step="{step}">{st.passed}</td>'
            f'<td>{_bar(st.passed, n, "low" if stuck else "ok")} {number(math.floor(pct + 0.5))}%</td></tr>'
        )
    return out + ["</table>"]


def _student_row(s: StudentFigures, f: Figures) -> str:
    shown: list[object] = [*s.got, s.total] if s.graded else [""] * (len(s.got) + 1)
    name = h(s.name)
    cells = "".join(
        f'<td class="n" data-student="{name}" data-col="lab{number(lab)}">{h(shown[i])}</td>'
        for i, lab in enumerate(f.labs)
    )
    return (
        f'<tr><td><a href="{quote(s.name, safe=_URL_SAFE)}/report.txt">{name}</a></td>'
        + cells
        + f'<td class="n" data-student="{name}" data-col="total">{h(shown[-1])}</td>'
        + f'<td class="n">{h(f.top)}</td><td>{s.status}</td>'
        + f'<td class="n">{h(s.seconds if s.seconds is not None else "")}</td></tr>'
    )


def _students_html(f: Figures) -> list[str]:
    heads = "".join(f"<th>lab {h(lab)}</th>" for lab in f.labs)
    return [
        "<h2>Students</h2>",
        f'<table class="students"><tr><th>student</th>{heads}<th>total</th><th>of</th><th>status</th><th>seconds</th></tr>',
        *(_student_row(s, f) for s in f.students),
        "</table>",
    ]


def class_html(f: Figures, made: str) -> str:
    """class.html, the instructor's view of a class (made at MADE): one page,
    no script, nothing fetched from elsewhere, readable offline. The
    distribution of the totals; per lab and step how many students passed
    the whole step (the steps fewer than half passed stand out: the class
    is stuck there); each student's line, linked to their report. Each
    figure carries a data- attribute, for tests/grader/test_class_html.py
    to compare with class.csv."""
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>rdmalab: the class</title><style>",
        *_STYLE,
        "</style></head><body>",
        "<h1>rdmalab: the class</h1>",
        f"<p>Made {h(made)}, with the figures of class.csv; each name links to the student's report.</p>",
        *_distribution_html(f),
        *_steps_html(f),
        *_students_html(f),
        "</body></html>",
    ]
    return "\n".join(out) + "\n"
