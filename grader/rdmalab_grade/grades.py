"""grades: a student's own grades, kept run by run (scripts/grade, make
grade): labs.txt, every lab's last grade, and what a new run supersedes."""

from __future__ import annotations

from dataclasses import dataclass

from .jsontext import number
from .model import BadInput, Run
from .texts import lpad, pad


@dataclass(frozen=True)
class Grade:
    """A run's grade of a lab it graded: took is the run's seconds (its
    builds and tests, of every lab it graded: submission.json's seconds,
    not the grader's "done in", which is the whole run), unsafe what its sandbox lacked
    (--unsafe), or None."""

    lab: float
    points: float
    most: float
    made: str
    run: str
    took: float | None
    unsafe: str | None


def grades(run: Run) -> list[Grade]:
    """RUN's grade of each lab it graded, by lab (none when it was not
    gradable)."""
    sub = run.submission
    if not sub.gradable:
        return []
    found = []
    for lab in sorted(set(r.lab for r in sub.records)):
        records = sub.of_lab(lab)
        found.append(
            Grade(lab, sum(r.points for r in records), sum(r.max for r in records),
                  sub.made, run.run, sub.seconds, sub.unsafe)  # fmt: skip
        )
    return found


def last_grades(runs: list[Run]) -> list[Grade]:
    """Each lab's newest grade among RUNS (oldest first), by lab."""
    newest: dict[float, Grade] = {}
    for run in runs:
        for g in grades(run):
            newest[g.lab] = g
    return [newest[lab] for lab in sorted(newest)]


def _took(g: Grade) -> str:
    return "-" if g.took is None else f"{number(g.took)} s"


def labs_txt(runs: list[Run]) -> str:
    """labs.txt: every lab's last grade, with the run that gave it."""
    out = [
        "Your last grade of each lab (make grade): newest run per lab; each run's",
        "report is in its folder (latest: the newest run that graded).",
        "built+tested: the seconds that run's builds and tests took, all its labs",
        "together; the grader's \"done in\" is the whole run (taking your files,",
        "starting the guest, writing the reports).",
        "",
        "lab  points  graded at             built+tested  report",
    ]
    last = last_grades(runs)
    for g in last:
        note = " (unsafe: see its report)" if g.unsafe is not None else ""
        out.append(
            f"{lpad(g.lab, 3)}  {lpad(f'{number(g.points)}/{number(g.most)}', 6)}  {pad(g.made, 20)}  "
            f"{lpad(_took(g), 12)}  {g.run}/report.txt{note}"
        )
    if not last:
        out.append("(no lab graded yet)")
    return "\n".join(out) + "\n"


def supersedes(runs: list[Run], new: str) -> str:
    """For the run NEW, a line per lab it graded, against that lab's grade
    before it."""
    names = [r.run for r in runs]
    if new not in names:
        raise BadInput(f"no run {new} among the kept runs")
    i = names.index(new)
    before = {g.lab: g for g in last_grades(runs[:i])}
    out = []
    for g in grades(runs[i]):
        line = f"Lab {number(g.lab)}: {number(g.points)}/{number(g.most)} now"
        b = before.get(g.lab)
        line += ", its first grade" if b is None else f"; it was {number(b.points)}/{number(b.most)} in {b.run} ({b.made})"
        out.append(line)
    return "".join(line + "\n" for line in out)
