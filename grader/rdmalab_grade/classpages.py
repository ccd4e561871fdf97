"""classpages: a class's class.csv, summary.txt and class.html, each a view
of one set of the class's figures (Figures): a line per student, their
points in each lab and their total, and per lab and step how many graded
students passed it whole.

Only the class's labs count. Each student's lab says what kind of score it
is (model.lab_status); one the grader failed counts neither as the
student's 0 nor in the steps' figures. With a roster (course.py) every
student on it is a row, in its order, those not on it after, flagged; the
late rule, the keys and the kit's preflight are shown where they apply. A
student's lab is flagged when the grader refused it for breaking its rules
(its build's message says "refused: ")."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Union
from urllib.parse import quote

from .course import ON_TIME, ClassOptions, Lateness, lateness, rule_text
from .jsontext import number
from .model import (
    NO_SUBMISSION, PreflightLab, Provenance, Record, RosterRow, Student, counts_for_student, lab_status,
    preflight_note,
)  # fmt: skip
from .platforms import escape_html
from .texts import lpad, round_half_away, text_of


@dataclass(frozen=True)
class StudentFigures:
    """A student's figures in the class's labs. id: their folder's name
    (the roster's id); name and extra: the roster's (empty without one);
    on_roster: None without a roster. present: they have a folder. Per lab:
    status (model's statuses), earned (their records' points), got (what
    counts: None where the grader failed, 0 for a lab late past the budget)
    and lateness. total means nothing when they could not be graded."""

    id: str
    name: str
    extra: tuple[str, ...]
    on_roster: bool | None
    present: bool
    graded: bool
    unsafe: str | None
    seconds: float | None
    statuses: list[str]
    earned: list[float]
    got: list[float | None]
    late: list[Lateness]
    most: list[float]
    key: tuple[str, str] | None
    total: float
    flagged: list[float]
    errors: list[tuple[float, str]]
    provenance: Provenance | None
    records: list[Record]

    @property
    def status(self) -> str:
        """The student's grading in a word: graded, unsafe, ungradable or no submission."""
        if not self.present:
            return NO_SUBMISSION
        if not self.graded:
            return "ungradable"
        return "unsafe" if self.unsafe is not None else "graded"

    def lab_text(self, i: int) -> str:
        """Lab I's status, with its lateness when late ("failed; late 2 days, ...")."""
        late = self.late[i].text()
        return self.statuses[i] + (f"; {late}" if late else "")

    def notes(self, f: "Figures") -> list[str]:
        """What the student's row must say besides its figures (a lab graded
        though the kit's preflight failed: when they have records of it)."""
        notes = [f"lab {number(lab)}: the grader failed: {why}" for lab, why in self.errors]
        if self.on_roster is False:
            notes.append("not on the roster")
        return notes + [preflight_note(p) for p in f.forced if any(r.lab == p.lab for r in self.records)]


@dataclass(frozen=True)
class StepFigures:
    """How many of the graded students whose lab LAB the grader did not fail
    (of) passed every test of a lab's step, and the step's title."""

    lab: float
    step: float
    passed: int
    of: int
    title: str


@dataclass(frozen=True)
class Figures:
    """The class's figures: its labs, the most points of each (the most
    any student's records could earn), the points of an OK key, their sum,
    its students, its steps, the labs graded though their preflight failed,
    the roster's other columns, whether keys were given, the late rule."""

    labs: list[float]
    most: list[float]
    key_points: float
    top: float
    students: list[StudentFigures]
    steps: list[StepFigures]
    forced: list[PreflightLab]
    extra: tuple[str, ...]
    keys: bool
    rule: str

    @property
    def graded(self) -> list[StudentFigures]:
        return [s for s in self.students if s.graded and s.present]

    def provenances(self) -> list[tuple[str, int]]:
        """Each thing the class was graded with (Provenance.text), and how many students."""
        texts = [s.provenance.text() for s in self.students if s.provenance is not None]
        return [(t, texts.count(t)) for t in dict.fromkeys(texts)]


def _counted(status: str, earned: float, late: Lateness) -> float | None:
    if not counts_for_student(status):
        return None
    return earned if late.within else 0


def _student_figures(st: Student, labs: Sequence[float], opts: ClassOptions, row: RosterRow | None) -> StudentFigures:
    sub = st.submission
    records = [r for r in sub.records if r.lab in labs]
    statuses = [lab_status(sub, lab) for lab in labs]
    earned = [sum(r.points for r in records if r.lab == lab) for lab in labs]
    late = lateness(sub, list(labs), opts)
    got = [_counted(statuses[i], earned[i], late[i]) for i in range(len(labs))]
    key = opts.keys.get(st.name, ("MISSING", "no line for this id")) if opts.keys is not None else None
    bonus = opts.key_points if key is not None and key[0] == "OK" else 0
    return StudentFigures(
        id=st.name,
        name=row.name if row else "",
        extra=row.extra if row else tuple("" for _ in (opts.roster.columns if opts.roster else ())),
        on_roster=None if opts.roster is None else row is not None,
        present=True,
        graded=sub.gradable,
        unsafe=sub.unsafe,
        seconds=sub.seconds,
        statuses=statuses,
        earned=earned,
        got=got,
        late=late,
        most=[sum(r.max for r in records if r.lab == lab) for lab in labs],
        key=key,
        total=sum(g for g in got if g is not None) + bonus,
        flagged=[r.lab for r in records if r.step == 0 and r.message.startswith("refused: ")],
        errors=[(lab, why) for lab, why in sub.lab_errors if lab in labs],
        provenance=sub.provenance if sub.provenance != Provenance() else None,
        records=records,
    )


def _absent(row: RosterRow, labs: Sequence[float], opts: ClassOptions) -> StudentFigures:
    """A student on the roster who submitted nothing: 0 in every lab."""
    zeros: list[float] = [0 for _ in labs]
    return StudentFigures(
        id=row.id, name=row.name, extra=row.extra, on_roster=True, present=False, graded=True, unsafe=None,
        seconds=None, statuses=[NO_SUBMISSION for _ in labs], earned=list(zeros), got=list(zeros),
        late=[ON_TIME for _ in labs], most=list(zeros),
        key=opts.keys.get(row.id, ("MISSING", "no line for this id")) if opts.keys is not None else None,
        total=0, flagged=[], errors=[], provenance=None, records=[],
    )  # fmt: skip


def _passed(students: list[StudentFigures], i: int, lab: float, step: float) -> tuple[int, int]:
    """How many graded students passed every test of step STEP of lab LAB
    (the Ith), of how many had it graded (the grader not failing it)."""
    count = of = 0
    for s in students:
        of_step = [r for r in s.records if r.lab == lab and r.step == step]
        if not (s.graded and s.present and of_step and counts_for_student(s.statuses[i])):
            continue
        of += 1
        count += all(r.passed for r in of_step)
    return count, of


def figures(students: list[Student], labs: Sequence[float], opts: ClassOptions | None = None,
            titles: Callable[[float], dict[float, str]] = lambda lab: {},
            preflight: Sequence[PreflightLab] = ()) -> Figures:
    """The figures of STUDENTS (in the class's order; with OPTS's roster, in
    its order, then those not on it) in the labs LABS; TITLES gives a lab's
    step titles; PREFLIGHT the labs the kit's preflight looked at."""
    opts = opts or ClassOptions()
    rows = {r.id: r for r in opts.roster.rows} if opts.roster else {}
    by_id = {st.name: st for st in students}
    each = [_student_figures(by_id[r.id], labs, opts, r) if r.id in by_id else _absent(r, labs, opts)
            for r in rows.values()]
    each += [_student_figures(st, labs, opts, None) for st in students if st.name not in rows]
    most = [max((s.most[i] for s in each), default=0) for i in range(len(labs))]
    steps = []
    for i, lab in enumerate(labs):
        named = titles(lab)
        found = sorted({r.step for s in each if s.graded for r in s.records if r.lab == lab})
        for step in found:
            passed, of = _passed(each, i, lab, step)
            steps.append(StepFigures(lab, step, passed, of, "the lab builds" if step == 0 else named.get(step, "")))
    key_points = opts.key_points if opts.keys is not None else 0
    forced = [p for p in preflight if not p.ok and p.lab in labs]
    return Figures(list(labs), most, key_points, sum(most) + key_points, each, steps, forced,
                   opts.roster.columns if opts.roster else (), opts.keys is not None, rule_text(opts))  # fmt: skip


# --- class.csv ------------------------------------------------------------------


# A field of class.csv: a text (quoted), a number, or nothing (empty).
CsvField = Optional[Union[str, float]]


def _csv_field(value: CsvField) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return '"' + value.replace('"', '""') + '"'
    return text_of(value)


def _csv_labs(f: Figures, s: StudentFigures) -> list[CsvField]:
    """A row's points, lab by lab then the total: nothing where they mean nothing."""
    if not s.graded:
        return [None] * (len(s.got) + 1)
    return [*s.got, s.total]


def class_csv(f: Figures) -> str:
    """class.csv, as a spreadsheet or a gradebook imports it: one header
    row, a row per student; id and name first (the roster's other columns
    next), their counted points in each lab (empty where the grader failed
    the lab; 0 for a lab late past the budget), the key's verdict (with
    --keys), their total (with an OK key's points), the most points there
    were, their status, the seconds their builds and tests took; then each
    lab's status (model's statuses, with its lateness), the late days
    used, what they were graded with (kit, mode, kernel, multiplier) and
    notes (the grader's failures, not on the roster, a lab graded though
    the kit's preflight failed). An ungradable student has no points; one
    graded without the whole sandbox (--unsafe) has the status "unsafe";
    one on the roster who submitted nothing, "no submission" and 0s."""
    labs = [f"lab{number(lab)}" for lab in f.labs]
    key = ["key"] if f.keys else []
    rows: list[list[CsvField]] = [[
        "id", "name", *f.extra, *labs, *key, "total", "max", "status", "seconds",
        *(f"{lab}_status" for lab in labs), "late_days_used", "kit", "mode", "kernel", "multiplier", "notes",
    ]]  # fmt: skip
    for s in f.students:
        points = _csv_labs(f, s)
        p = s.provenance
        made: list[CsvField] = [p.kit, p.mode, p.kernel, p.multiplier] if p is not None else [None] * 4
        rows.append([
            s.id, s.name, *s.extra, *points[:-1], *([s.key[0] if s.key else None] if f.keys else []),
            points[-1], f.top, s.status, s.seconds, *(s.lab_text(i) for i in range(len(f.labs))),
            max((x.used for x in s.late), default=0), *made, "; ".join(s.notes(f)),
        ])  # fmt: skip
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
    """summary.txt: who was graded, what with, the late rule; the
    distribution of the totals of those who submitted, the grading times,
    each lab's mean and what kind of score each student's is; then a line
    for each lab graded though the kit's preflight failed, each lab the
    grader failed, each late lab, each student with a lab refused for
    breaking its rules, graded without the whole sandbox (--unsafe), not on
    the roster or with no submission, and the keys."""
    scores = sorted(s.total for s in f.graded)
    n = len(scores)
    took = sorted(s.seconds for s in f.students if s.seconds is not None)
    labs = " ".join(number(lab) for lab in f.labs)
    out = [
        f"{len(f.students)} student(s): {n} graded, {_ungradable(f)} ungradable"
        + (f", {_absent_count(f)} with no submission (not in the figures below)" if _absent_count(f) else "")
        + f"; labs {labs}, {number(f.top)} points in all"
    ]
    out += [f"graded with: {text} ({count} student(s))" for text, count in f.provenances()]
    out += [f"rule: {f.rule}"] if f.rule else []
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
        counted = [g for g in (s.got[i] for s in f.graded) if g is not None]
        mean = sum(counted) / len(counted) if counted else 0
        kinds = [s.statuses[i] for s in f.students]
        each = ", ".join(f"{kinds.count(k)} {k}" for k in dict.fromkeys(sorted(kinds)))
        out.append(f"lab {number(lab)}: mean {one_decimal(mean)} of {number(f.most[i])}; {each}")
    out += [f"preflight: {preflight_note(p)}" for p in f.forced]
    out += _student_lines(f)
    return "\n".join(out) + "\n"


def _student_lines(f: Figures) -> list[str]:
    """summary.txt's lines about one student each."""
    out = []
    for s in f.students:
        out += [f"grader failed: {s.id}: lab {number(lab)}: {why} (not the student's 0)" for lab, why in s.errors]
        if s.present and not s.graded:
            out.append(f"grader failed: {s.id}: ungradable (see the report)")
    for s in f.students:
        out += [f"late: {s.id}: lab {number(lab)}: {s.late[i].text()} (earned {number(s.earned[i])})"
                for i, lab in enumerate(f.labs) if s.late[i].days]  # fmt: skip
    for s in f.students:
        if s.flagged:
            out.append(
                f"flagged: {s.id}: lab {' '.join(number(lab) for lab in s.flagged)} "
                "broke the rules of a lab's files, scored 0 (see the report)"
            )
    for s in f.students:
        if s.unsafe is not None:
            out.append(f"unsafe: {s.id}: graded without the grader's whole sandbox (--unsafe): it lacked {s.unsafe}")
    out += [f"not on the roster: {s.id}" for s in f.students if s.on_roster is False]
    out += [f"no submission: {s.id} ({s.name}): 0 in every lab" for s in f.students if not s.present]
    if f.keys:
        verdicts = [s.key[0] for s in f.students if s.key]
        counts = ", ".join(f"{verdicts.count(v)} {v}" for v in ("OK", "BAD", "MISSING"))
        out.append(f"keys: {counts}" + (f"; an OK key adds {number(f.key_points)} points" if f.key_points else ""))
    return out


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


def _absent_count(f: Figures) -> int:
    return sum(1 for s in f.students if not s.present)


def _ungradable(f: Figures) -> int:
    return len(f.students) - len(f.graded) - _absent_count(f)


def _distribution_html(f: Figures) -> list[str]:
    count = [0] * 10
    for s in f.graded:
        count[bucket(s.total, f.top)] += 1
    most = max(count)
    out = [
        "<h2>Scores</h2>",
        f"<p>{len(f.students)} student(s), {len(f.graded)} graded, {_ungradable(f)} ungradable"
        + (f", {_absent_count(f)} with no submission (not in the distribution)" if _absent_count(f) else "") + "; "
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


def _forced_html(f: Figures, lab: float) -> list[str]:
    """The banner at lab LAB when it was graded though the kit's preflight failed."""
    return [f'<p class="stuck banner" data-forced="{h(p.lab)}">{h(preflight_note(p))}</p>' for p in f.forced
            if p.lab == lab]  # fmt: skip


def _steps_html(f: Figures) -> list[str]:
    out = [
        "<h2>Where the class is stuck</h2>",
        "<p>Per lab and step, how many of the graded students passed every test of the step "
        "(a lab the grader failed not counted). "
        'A step fewer than half passed is <span class="stuck">marked</span>.</p>',
    ]
    for lab in f.labs:
        out += _forced_html(f, lab)
    out.append('<table class="steps"><tr><th>lab</th><th>step</th><th>passed</th><th></th><th>title</th></tr>')
    for st in f.steps:
        pct = 100 * st.passed / st.of if st.of else 0
        stuck = pct < 50
        step = h("build" if st.step == 0 else st.step)
        row = '<tr class="stuck">' if stuck else "<tr>"
        out.append(
            f"{row}<td>{h(st.lab)}</td><td>{step}</td>"
            f'<td class="n" data-lab="{h(st.lab)}" data-step="{step}">{st.passed}</td>'
            f'<td>{_bar(st.passed, st.of, "low" if stuck else "ok")} {number(math.floor(pct + 0.5))}% '
            f"of {st.of}</td><td>{h(st.title)}</td></tr>"
        )
    return out + ["</table>"]


def _student_row(s: StudentFigures, f: Figures) -> str:
    shown: list[object] = [*("" if g is None else g for g in s.got), s.total] if s.graded else [""] * (len(s.got) + 1)
    name = h(s.id)
    cells = "".join(
        f'<td class="n" data-student="{name}" data-col="lab{number(lab)}">{h(shown[i])}</td>'
        for i, lab in enumerate(f.labs)
    )
    link = f'<a href="{quote(s.id, safe=_URL_SAFE)}/report.txt">{name}</a>' if s.present else name
    kinds = "".join(
        f'<td data-of="{name}" data-what="lab{number(lab)}_status">{h(s.lab_text(i))}</td>'
        for i, lab in enumerate(f.labs)
    )
    key = f'<td data-of="{name}" data-what="key">{h(s.key[0] if s.key else "")}</td>' if f.keys else ""
    return (
        f"<tr><td>{link}</td><td>{h(s.name)}</td>"
        + cells
        + f'<td class="n" data-student="{name}" data-col="total">{h(shown[-1])}</td>'
        + f'<td class="n">{h(f.top)}</td><td>{s.status}</td>'
        + f'<td class="n">{h(s.seconds if s.seconds is not None else "")}</td>'
        + key + kinds + f"<td>{h('; '.join(s.notes(f)))}</td></tr>"
    )


def _students_html(f: Figures) -> list[str]:
    heads = "".join(f"<th>lab {h(lab)}</th>" for lab in f.labs)
    kinds = "".join(f"<th>lab {h(lab)}: what kind</th>" for lab in f.labs)
    key = "<th>key</th>" if f.keys else ""
    return [
        "<h2>Students</h2>",
        "<p>Each lab's points count toward the total; what kind of score each is: passed, failed (built, "
        "less than full), timed out, does not build, not attempted (no file, or the stubs unchanged), "
        "grader failed (not the student's 0: no points shown, none counted), not graded, no submission.</p>",
        *(line for lab in f.labs for line in _forced_html(f, lab)),
        f'<table class="students"><tr><th>student</th><th>name</th>{heads}<th>total</th><th>of</th><th>status</th>'
        f"<th>seconds</th>{key}{kinds}<th>notes</th></tr>",
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
    to compare with class.csv: the points data-student and data-col, what
    kind of score and the key data-of and data-what."""
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>rdmalab: the class</title><style>",
        *_STYLE,
        "</style></head><body>",
        "<h1>rdmalab: the class</h1>",
        f"<p>Made {h(made)}, with the figures of class.csv; each name links to the student's report.</p>",
        *(f"<p>Graded with {h(text)} ({count} student(s)).</p>" for text, count in f.provenances()),
        *([f"<p>{h(f.rule)}</p>"] if f.rule else []),
        *_distribution_html(f),
        *_steps_html(f),
        *_students_html(f),
        "</body></html>",
    ]
    return "\n".join(out) + "\n"
