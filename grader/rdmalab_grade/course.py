"""course: what a class's views take besides the records, and the late-day rule.

The options (the same words for rdmalab-grade and scripts/results class):
  --roster FILE       the class's roster (model.read_roster): every student a row
  --deadline [N=]TIME lab N's deadline (every lab's without N=), ISO 8601 with its zone
  --late-days D       each student's budget of late days, across the labs
  --keys FILE         the verified keys (rdmalab-receiver --verify-file)
  --key-points P      the points an OK key adds to the total
The rule: a lab submitted after its deadline is late by whole days, rounded
up (a lab not attempted is never late). Labs are taken in order; a late lab
spends its days from the student's budget while the budget has them; a lab
past what is left of the budget counts 0 (its points are still shown, as
earned) and spends nothing.

A class folder keeps its options (kept_options): DIR/course.json, with
copies of the roster and keys files beside it in DIR/.course/, so that a
regrade or a late submission graded into DIR without them (or a
`scripts/results class DIR`) draws the same class. An option given again
replaces the kept one (every --deadline together); the others stay.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timezone

from .jsontext import is_number, number, parse, NotJSON
from .model import BadInput, Roster, Submission, read_keys, read_roster

TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def utc_time(text: str, what: str) -> datetime:
    """TEXT, an ISO 8601 time with its zone (Z or an offset, seconds'
    fractions allowed: "2026-12-04T13:13:00.365935-08:00", as Gradescope
    gives it), as a time; else BadInput naming WHAT."""
    try:
        t = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        t = None
    if t is None or t.tzinfo is None:
        raise BadInput(f"{what} {text}: give a time with its zone, as YYYY-MM-DDTHH:MM:SSZ (UTC)")
    return t


def any_utc_time(text: str, what: str) -> str:
    """TEXT (see utc_time) as the time in UTC the records keep."""
    return time_text(utc_time(text, what))


def submitted_in(path: str) -> str:
    """When a platform's metadata file PATH says the submission came
    (Gradescope's submission_metadata.json: created_at), in UTC; else
    BadInput in one line."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise BadInput(f"--submitted-from {path}: cannot read it as JSON ({e}): give the platform's metadata file") from None
    when = doc.get("created_at") if isinstance(doc, dict) else None
    if not isinstance(when, str):
        raise BadInput(f"--submitted-from {path}: no created_at in it: give Gradescope's submission_metadata.json")
    return any_utc_time(when, f"--submitted-from {path}: created_at")


def time_text(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime(TIME_FORMAT)


@dataclass(frozen=True)
class ClassOptions:
    """What the class's views take besides the records (see the options
    above): the roster, each lab's deadline (lab None: every lab's), the
    late-day budget, the verified keys (id: verdict, detail) and the points
    of an OK key."""

    roster: Roster | None = None
    deadlines: dict[float | None, datetime] = field(default_factory=dict)
    late_days: int = 0
    keys: dict[str, tuple[str, str]] | None = None
    key_points: float = 0

    def deadline(self, lab: float) -> datetime | None:
        return self.deadlines.get(lab, self.deadlines.get(None))


# The options, each with whether it may be given more than once.
OPTIONS = {"--roster": False, "--deadline": True, "--late-days": False, "--keys": False, "--key-points": False}


def _deadline(text: str, deadlines: dict[float | None, datetime]) -> None:
    lab_text, _, when = text.rpartition("=")
    lab: float | None = None
    if lab_text:
        try:
            value = parse(lab_text)
        except NotJSON:
            value = None
        if not is_number(value):
            raise BadInput(f"--deadline {text}: give N=TIME (lab N) or TIME (every lab)")
        lab = value
    deadlines[lab] = utc_time(when, "--deadline")


def class_options(pairs: list[tuple[str, str]]) -> ClassOptions:
    """The class's options from PAIRS (option, value), each read once, here;
    BadInput on a bad value."""
    deadlines: dict[float | None, datetime] = {}
    got: dict[str, str] = {}
    for option, value in pairs:
        if option == "--deadline":
            _deadline(value, deadlines)
        else:
            got[option] = value
    days, points = got.get("--late-days", "0"), got.get("--key-points", "0")
    if not days.isdigit():
        raise BadInput(f"--late-days {days}: give a whole number of days, 0 or more")
    try:
        key_points = parse(points)
    except NotJSON:
        key_points = None
    if not is_number(key_points) or key_points < 0:
        raise BadInput(f"--key-points {points}: give a number of points, 0 or more")
    if key_points and "--keys" not in got:
        raise BadInput("--key-points needs --keys FILE (rdmalab-receiver --verify-file)")
    return ClassOptions(
        roster=read_roster(got["--roster"]) if "--roster" in got else None,
        deadlines=deadlines,
        late_days=int(days),
        keys=read_keys(got["--keys"]) if "--keys" in got else None,
        key_points=key_points,
    )


# --- Kept in the class folder ------------------------------------------------------

KEPT = "course.json"
COPIES = ".course"
FILES = {"--roster": "roster.csv", "--keys": "keys.csv"}


def _read_kept(top: str) -> list[tuple[str, str]]:
    path = os.path.join(top, KEPT)
    if not os.path.isfile(path):
        return []
    try:
        with open(path) as f:
            doc = json.load(f)
        pairs = [(str(o), str(v)) for o, v in doc["options"]]
    except (OSError, ValueError, KeyError, TypeError):
        raise BadInput(f"{path}: not the class's options: move it away and give them again") from None
    if any(o not in OPTIONS for o, _ in pairs):
        raise BadInput(f"{path}: an option the grader does not know: move it away and give them again")
    return pairs


def _keep(top: str, pairs: list[tuple[str, str]]) -> None:
    """PAIRS into DIR/course.json, each file option's file copied first
    (so the class still draws when the original moves); written whole."""
    os.makedirs(os.path.join(top, COPIES), exist_ok=True)
    kept = []
    for option, value in pairs:
        if option in FILES:
            copy = os.path.join(COPIES, FILES[option])
            if os.path.abspath(value) != os.path.abspath(os.path.join(top, copy)):
                shutil.copyfile(value, os.path.join(top, copy + ".new"))
                os.replace(os.path.join(top, copy + ".new"), os.path.join(top, copy))
            value = copy
        kept.append([option, value])
    tmp = os.path.join(top, KEPT + ".new")
    with open(tmp, "w") as f:
        json.dump({"options": kept}, f, indent=1)
        f.write("\n")
    os.replace(tmp, os.path.join(top, KEPT))


def kept_options(top: str, pairs: list[tuple[str, str]]) -> ClassOptions:
    """The class options of the folder TOP: those kept there, with PAIRS
    (this run's) in place of the same options; every one checked (BadInput)
    before PAIRS are kept for the next run."""
    given = {o for o, _ in pairs}
    kept = [(o, os.path.join(top, v) if o in FILES else v) for o, v in _read_kept(top) if o not in given]
    opts = class_options(kept + pairs)
    if pairs:
        _keep(top, kept + pairs)
    return opts


# --- Late days -------------------------------------------------------------------


@dataclass(frozen=True)
class Lateness:
    """A lab's lateness: days late (0: on time, or no deadline or no time
    known), whether they fit the budget left, and the days used by then."""

    days: int
    within: bool
    used: int

    def text(self) -> str:
        """"" when on time; else how late, and what the budget made of it."""
        if self.days == 0:
            return ""
        late = f"late {self.days} day{'s' if self.days != 1 else ''}"
        if self.within:
            return f"{late}, late days used {self.used}"
        return f"{late}, past the late-day budget: counts 0"


ON_TIME = Lateness(0, True, 0)


def days_late(submitted: str | None, deadline: datetime | None) -> int:
    """Whole days (rounded up) SUBMITTED is after DEADLINE; 0 when either is unknown."""
    if submitted is None or deadline is None:
        return 0
    try:
        when = utc_time(submitted, "submitted")
    except BadInput:
        return 0
    late = (when - deadline).total_seconds()
    return math.ceil(late / 86400) if late > 0 else 0


def lateness(s: Submission, labs: list[float], opts: ClassOptions) -> list[Lateness]:
    """Each of LABS's lateness for S, the budget spent in the labs' order. A
    lab not attempted (no file of it, or its stubs unchanged) was handed in
    at no time: never late."""
    used = 0
    out = []
    for lab in labs:
        facts = s.facts(lab)
        handed_in = facts is not None and facts.attempted
        days = days_late(facts.submitted if handed_in and facts else None, opts.deadline(lab))
        if days == 0:
            out.append(ON_TIME)
        elif used + days <= opts.late_days:
            used += days
            out.append(Lateness(days, True, used))
        else:
            out.append(Lateness(days, False, used))
    return out


def rule_text(opts: ClassOptions) -> str:
    """The late rule, in one line, as the views state it ("" when no deadline)."""
    if not opts.deadlines:
        return ""
    each = ", ".join(
        f"{'lab ' + number(lab) if lab is not None else 'every lab'} {time_text(t)}"
        for lab, t in sorted(opts.deadlines.items(), key=lambda x: -1 if x[0] is None else x[0])
    )
    return (f"deadlines: {each}; {opts.late_days} late day(s) per student, whole days rounded up; "
            "a lab late past what is left of them counts 0 (its points still shown)")
