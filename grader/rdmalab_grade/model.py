"""model: the grader's results as data, read from the files that hold them.

A lab's test program writes one record per graded test (tests/graded.c, one
JSON line each) and prints its rubric (--rubric); the grader adds the record
of the lab's build (step 0, labN_builds, worth 0) and keeps a submission's
records in results.jsonl beside submission.json (grader/rdmalab_grade/publish.py). A
class is a folder of such submissions, one folder each. The formats:

  record:      {"lab":3,"step":1,"test":"...","result":"pass"|"FAIL"|"skipped",
                "points":1,"max":1,"message":"...","skipped_because":null|"step 6 failed",
                "said":"...","ms":12}
  rubric line: {"lab":3,"step":1,"test":"...","max":1,"needs":null|6,"receiver":null|"..."}
  submission:  {"name","made","graded","source","intake": texts,
                "unsafe": null|"what the sandbox lacked" (rdmalab-grade --unsafe),
                "ungradable": null|"why", "seconds": null|N,
                and, each optional (absent in files written before them):
                "kit": "COMMIT" (or "unknown"), "mode": "native"|"uml"|"vm",
                "kernel": "uname -r where RDMA ran", "multiplier": N (the
                limits' factor, CK_TIMEOUT_MULTIPLIER times the calibration),
                "labs": {"N": {"made": TIME, "submitted": TIME|null,
                               "submitted_from": "the platform"|"the files' newest mtime",
                               "attempted": true|false}}  (each lab's own facts:
                               a regrade of one lab replaces that lab's only),
                "lab_errors": {"N": "why the grader failed this lab"}}
  roster:      CSV, a header with id and name (any other column kept), a row per student
  preflight:   CLASSDIR/preflight.json, {"kit","mode","labs":[{"lab":N,"solution":N,
                "stub":N,"most":N,"ok":bool,"forced":bool,"why":"..."}]}
  keys:        CSV, header id,verdict,detail; verdict OK, BAD or MISSING
                (rdmalab-receiver --verify-file)

points are earned (0 unless the test passed), message says why it did not
pass, said is what its processes printed, ms how long it took. Numbers are
JSON's: an int or a float. A line that is not what its file must hold stops
the reading with BadInput, one line naming the file and line.
"""

from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator

from . import jsontext
from .jsontext import is_number, number
from .texts import BUILD_LINES, SAID_LINES, bounded, bounded_message, from_c_bytes, is_blank

RESULTS = ("pass", "FAIL", "skipped")


class BadInput(Exception):
    """An input that is not what it must be; its text is the one line that
    says which and what to do."""


@dataclass(frozen=True)
class Line:
    """A line of a file that is not blank, with where it is."""

    file: str
    number: int
    text: str

    @property
    def at(self) -> str:
        return f"{self.file}:{self.number}"


def read_lines(path: str) -> list[Line]:
    """The lines of the file PATH that are not blank, numbered from 1
    (blank ones counted). Bytes that are not UTF-8 read as U+FFFD."""
    try:
        with open(path, "rb") as f:
            data = f.read().decode("utf-8", "replace")
    except OSError as e:
        raise BadInput(f"cannot read {path}: {e.strerror}") from None
    texts = data.split("\n")
    if texts and texts[-1] == "":
        texts.pop()
    return [Line(path, i, t) for i, t in enumerate(texts, 1) if not is_blank(t)]


# --- Records ------------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    """One graded test's record (tests/graded.c), or the grader's record of a
    lab's build (step 0)."""

    lab: float
    step: float
    test: str
    result: str
    points: float
    max: float
    message: str
    skipped_because: str | None
    said: str
    ms: float

    @property
    def passed(self) -> bool:
        return self.result == "pass"

    def to_json(self) -> dict[str, Any]:
        """The record as its JSON line holds it, in the format's order."""
        return {
            "lab": self.lab,
            "step": self.step,
            "test": self.test,
            "result": self.result,
            "points": self.points,
            "max": self.max,
            "message": self.message,
            "skipped_because": self.skipped_because,
            "said": self.said,
            "ms": self.ms,
        }


def _texts(v: dict[str, Any], *keys: str) -> bool:
    return all(isinstance(v.get(k), str) for k in keys)


def _numbers(v: dict[str, Any], *keys: str) -> bool:
    return all(is_number(v.get(k)) for k in keys)


def _text_or_null(v: dict[str, Any], key: str) -> bool:
    return v.get(key) is None or isinstance(v.get(key), str)


def is_record(v: Any) -> bool:
    """Whether V is a record: every field of its type, a result of the three,
    and points between 0 and the test's, 0 unless it passed."""
    return (
        isinstance(v, dict)
        and _numbers(v, "lab", "step", "points", "max", "ms")
        and _texts(v, "test", "message", "said")
        and v["result"] in RESULTS
        and _text_or_null(v, "skipped_because")
        and 0 <= v["points"] <= v["max"]
        and (v["result"] == "pass" or v["points"] == 0)
    )


def record_of(v: dict[str, Any]) -> Record:
    return Record(**{k: v[k] for k in Record.__dataclass_fields__})


# --- The rubric ---------------------------------------------------------------


@dataclass(frozen=True)
class RubricLine:
    """One graded test as its lab's test program lists it (--rubric)."""

    lab: float
    step: float
    test: str
    max: float
    needs: float | None
    receiver: str | None


def is_rubric_line(v: Any) -> bool:
    return (
        isinstance(v, dict)
        and _numbers(v, "lab", "step", "max")
        and _texts(v, "test")
        and (v.get("needs") is None or is_number(v.get("needs")))
        and _text_or_null(v, "receiver")
    )


def rubric_line_of(v: dict[str, Any]) -> RubricLine:
    return RubricLine(v["lab"], v["step"], v["test"], v["max"], v.get("needs"), v.get("receiver"))


# --- A submission -------------------------------------------------------------

# Where a lab's submission time came from, when the platform gave none.
FROM_FILES = "the files' newest mtime"
FROM_PLATFORM = "the platform"


@dataclass(frozen=True)
class LabFacts:
    """What submission.json says of one lab: when it was graded, when it was
    submitted (None: unknown) and from where that time is, and whether any
    of its files differed from the stubs."""

    made: str
    submitted: str | None
    submitted_from: str
    attempted: bool

    def to_json(self) -> dict[str, Any]:
        return {"made": self.made, "submitted": self.submitted,
                "submitted_from": self.submitted_from, "attempted": self.attempted}  # fmt: skip


@dataclass(frozen=True)
class Provenance:
    """What a submission was graded with, for an appeal: the kit's commit,
    where RDMA ran, its kernel, and the limits' multiplier."""

    kit: str = "unknown"
    mode: str = "unknown"
    kernel: str = "unknown"
    multiplier: float | None = None

    def text(self) -> str:
        times = number(self.multiplier) if self.multiplier is not None else "unknown"
        return f"kit {self.kit}, mode {self.mode}, kernel {self.kernel}, limits x{times}"


@dataclass(frozen=True)
class Submission:
    """What submission.json says of a submission, and its labs' records."""

    name: str
    made: str
    graded: str
    source: str
    intake: str
    unsafe: str | None
    ungradable: str | None
    seconds: float | None
    records: tuple[Record, ...] = ()
    provenance: Provenance = Provenance()
    lab_facts: tuple[tuple[float, LabFacts], ...] = ()
    lab_errors: tuple[tuple[float, str], ...] = ()

    def facts(self, lab: float) -> LabFacts | None:
        return dict(self.lab_facts).get(lab)

    def lab_error(self, lab: float) -> str | None:
        """Why the grader failed lab LAB (its fault, not the student's), or None."""
        return dict(self.lab_errors).get(lab)

    @property
    def gradable(self) -> bool:
        return self.ungradable is None

    def labs(self) -> list[float]:
        """The labs of its records, in the order they first come."""
        return list(dict.fromkeys(r.lab for r in self.records))

    def of_lab(self, lab: float) -> list[Record]:
        return [r for r in self.records if r.lab == lab]

    def points(self) -> float:
        return sum(r.points for r in self.records)

    def most(self) -> float:
        """The most points its records could earn."""
        return sum(r.max for r in self.records)


def _lab_key(key: Any) -> bool:
    return isinstance(key, str) and key.isdigit()


def _is_lab_facts(v: Any) -> bool:
    return (
        isinstance(v, dict)
        and _texts(v, "made", "submitted_from")
        and _text_or_null(v, "submitted")
        and isinstance(v.get("attempted"), bool)
    )


def _is_by_lab(v: Any, check: Callable[[Any], bool]) -> bool:
    """Whether V is absent, or an object of lab numbers ("3") each CHECK holds for."""
    return v is None or (isinstance(v, dict) and all(_lab_key(k) and check(x) for k, x in v.items()))


def is_submission(v: Any) -> bool:
    return (
        isinstance(v, dict)
        and _texts(v, "name", "made", "graded", "source", "intake")
        and _text_or_null(v, "unsafe")
        and _text_or_null(v, "ungradable")
        and (v.get("seconds") is None or is_number(v.get("seconds")))
        and all(_text_or_null(v, k) for k in ("kit", "mode", "kernel"))
        and (v.get("multiplier") is None or is_number(v.get("multiplier")))
        and _is_by_lab(v.get("labs"), _is_lab_facts)
        and _is_by_lab(v.get("lab_errors"), lambda x: isinstance(x, str))
    )


def submission_of(v: dict[str, Any], records: list[Record]) -> Submission:
    facts = tuple((int(k), LabFacts(x["made"], x.get("submitted"), x["submitted_from"], x["attempted"]))
                  for k, x in (v.get("labs") or {}).items())  # fmt: skip
    errors = tuple((int(k), x) for k, x in (v.get("lab_errors") or {}).items())
    known = Provenance(v.get("kit") or "unknown", v.get("mode") or "unknown", v.get("kernel") or "unknown",
                       v.get("multiplier"))  # fmt: skip
    return Submission(
        v["name"], v["made"], v["graded"], v["source"], v["intake"],
        v.get("unsafe"), v.get("ungradable"), v.get("seconds"), tuple(records),
        known, facts, errors,
    )  # fmt: skip


# --- What kind of score a lab's is -------------------------------------------

# A lab's status, per student: each view says it beside the points.
PASSED = "passed"
FAILED = "failed"  # built, earned less than full
TIMED_OUT = "timed out"  # failed, and a failing test ran out of time
NOT_BUILT = "does not build"
NOT_ATTEMPTED = "not attempted"  # no file of the lab, or the stubs unchanged
GRADER_FAILED = "grader failed"  # the grader's fault (lab_errors), or ungradable
NOT_GRADED = "not graded"  # the student's folder has no record of the lab
NO_SUBMISSION = "no submission"  # on the roster, no folder

# The message of a test the harness stopped (tests/case.c).
TIMEOUT_MESSAGE = "Test timeout expired"


def lab_status(s: Submission, lab: float) -> str:
    """What kind of score lab LAB of S is (one of the statuses above)."""
    records = s.of_lab(lab)
    facts = s.facts(lab)
    if not s.gradable or s.lab_error(lab) is not None:
        return GRADER_FAILED
    if not records:
        return NOT_GRADED
    if facts is not None and not facts.attempted:
        return NOT_ATTEMPTED
    if any(r.step == 0 and not r.passed for r in records):
        return NOT_BUILT
    failing = [r for r in records if not r.passed]
    if not failing:
        return PASSED
    return TIMED_OUT if any(r.message.startswith(TIMEOUT_MESSAGE) for r in failing) else FAILED


def counts_for_student(status: str) -> bool:
    """Whether a lab's points are the student's own (not the grader's failure)."""
    return status != GRADER_FAILED


# --- The handout's step titles ------------------------------------------------


def step_titles(kit: str, lab: float) -> dict[float, str]:
    """Lab LAB's step titles, from its handout's headings (docs/labN.md,
    "## <a id="step-K"></a>Step K: TITLE"), the one place they are written;
    none when the kit has no handout there."""
    titles: dict[float, str] = {}
    try:
        with open(os.path.join(kit, "docs", f"lab{number(lab)}.md"), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return titles
    for m in _STEP_HEADING.finditer(text):
        titles[int(m.group(1))] = m.group(2).strip()
    return titles


_STEP_HEADING = re.compile(r"^## (?:<a id=\"step-[0-9]+\"></a>)?Step ([0-9]+): (.+)$", re.M)


# --- Reading, each line checked -----------------------------------------------

RECORD = "a test's record (tests/graded.c)"
GRADER_RECORD = "a test's record (scripts/results lab)"
RUBRIC_LINE = "a rubric line (the test program's --rubric)"
SUBMISSION = "a submission (grader/rdmalab_grade/publish.py)"


def typed(line: Line, what: str, check: Callable[[Any], bool]) -> Any:
    """The JSON value LINE holds, when CHECK holds for it; else BadInput
    naming the file and line, WHAT was expected and what it got."""
    try:
        value = jsontext.parse(line.text)
        ok = value is not None and check(value)
    except (jsontext.NotJSON, KeyError, TypeError):
        ok = False
    if not ok:
        raise BadInput(f"{line.at}: expected {what}, got: {line.text[:160]}")
    return value


def read_records(path: str, what: str = GRADER_RECORD) -> list[Record]:
    """The records of the file PATH, each checked."""
    return [record_of(typed(line, what, is_record)) for line in read_lines(path)]


def read_rubric(path: str) -> list[RubricLine]:
    """The rubric in the file PATH, each line checked (see need_tests)."""
    return [rubric_line_of(typed(line, RUBRIC_LINE, is_rubric_line)) for line in read_lines(path)]


def need_tests(rubric: list[RubricLine], path: str) -> None:
    """BadInput when RUBRIC, read from PATH, lists no test."""
    if not rubric:
        raise BadInput(f"{path}: no test in it: make it again (make labs)")


def read_submission_json(path: str) -> dict[str, Any] | None:
    """What the file PATH says of a submission (its last line, checked), or
    None when it holds nothing."""
    value = None
    for line in read_lines(path):
        value = typed(line, SUBMISSION, is_submission)
    return value


def read_submission(folder: str) -> Submission:
    """The submission in FOLDER: FOLDER/submission.json and its records,
    FOLDER/results.jsonl."""
    path = f"{folder}/submission.json"
    about = read_submission_json(path)
    records = read_records(f"{folder}/results.jsonl")
    if about is None:
        raise BadInput(f"{path}: no submission in it")
    return submission_of(about, records)


# --- A lab's records, as the grader keeps them --------------------------------


@dataclass(frozen=True)
class LabRun:
    """A lab's records of one submission: its build's (step 0,
    labN_builds), then each test of its rubric's, in the rubric's order."""

    lab: float
    build: Record
    tests: tuple[Record, ...]

    def records(self) -> list[Record]:
        return [self.build, *self.tests]


def _grader_record(lab: float, step: float, test: str, result: str, most: float, message: str) -> Record:
    return Record(lab, step, test, result, 0, most, message, None, "", 0)


def check_lab(rubric: list[RubricLine], lab: float, rubric_file: str) -> None:
    """BadInput unless every line of RUBRIC is of lab LAB."""
    other = [t.lab for t in rubric if t.lab != lab]
    if other:
        raise BadInput(f"{rubric_file}: expected the rubric of lab {number(lab)}, got a test of lab {number(other[0])}")


def agreeing(records: list[tuple[str, Record]], rubric: list[RubricLine], rubric_file: str) -> list[Record]:
    """The records (each with where it is), once each, each of a test of
    RUBRIC with the rubric's lab, step and points; else BadInput."""
    by_test = {t.test: t for t in rubric}
    seen: dict[str, Record] = {}
    again = "make it again (make labs)"
    for at, r in records:
        t = by_test.get(r.test)
        if t is None:
            raise BadInput(f"{at}: test {r.test} ran but is not in {rubric_file}: {again}")
        if (r.lab, r.step, r.max) != (t.lab, t.step, t.max):
            raise BadInput(
                f"{at}: test {r.test} is lab {number(r.lab)} step {number(r.step)}, {number(r.max)} points; "
                f"{rubric_file} says lab {number(t.lab)} step {number(t.step)}, {number(t.max)} points: {again}"
            )
        if r.test in seen:
            raise BadInput(f"{at}: test {r.test} has a record already")
        seen[r.test] = r
    return list(seen.values())


def read_lab_inputs(rubric_file: str, records_file: str | None) -> tuple[list[RubricLine], list[tuple[str, Record]]]:
    """A lab's rubric and the records its test program wrote (None: it wrote
    none), each with where it is: every line checked, then the rubric must
    list a test. See agreeing for the records against the rubric."""
    rubric = read_rubric(rubric_file)
    lines = read_lines(records_file) if records_file is not None else []
    records = [(line.at, record_of(typed(line, RECORD, is_record))) for line in lines]
    need_tests(rubric, rubric_file)
    return rubric, records


def completed(rubric: list[RubricLine], records: list[Record], logs: str) -> list[Record]:
    """Each test of RUBRIC, in its order, with its record (its message and
    what it printed as UTF-8, bounded), or failed when it has none. LOGS is
    where the program's records (steps.jsonl) and output (steps.out) are,
    as the reader sees it."""
    by_test = {r.test: r for r in records}
    done = []
    for t in rubric:
        r = by_test.get(t.test)
        if r is None:
            done.append(Record(t.lab, t.step, t.test, "FAIL", 0, t.max, f"did not run: see {logs}/steps.out", None, "", 0))
            continue
        done.append(
            replace(
                r,
                message=bounded_message(from_c_bytes(r.message), f"{logs}/steps.jsonl"),
                said=bounded(from_c_bytes(r.said), SAID_LINES, f"{logs}/steps.jsonl"),
            )
        )
    return done


def lab_run(lab: float, rubric: list[RubricLine], records: list[Record], logs: str) -> LabRun:
    """Lab LAB's records when it built: each test of RUBRIC with its record
    among RECORDS (the program's, agreeing with RUBRIC; see completed)."""
    build = _grader_record(lab, 0, f"lab{number(lab)}_builds", "pass", 0, "")
    return LabRun(lab, build, tuple(completed(rubric, records, logs)))


def read_lab_run(lab: float, rubric_file: str, records_file: str | None, logs: str) -> LabRun:
    """Lab LAB's records when it built, from its rubric's file and the
    records its test program wrote (None: it wrote none): every line
    checked, the rubric of lab LAB, each record of a test of it."""
    rubric, records = read_lab_inputs(rubric_file, records_file)
    check_lab(rubric, lab, rubric_file)
    return lab_run(lab, rubric, agreeing(records, rubric, rubric_file), logs)


def lab_not_built(lab: float, rubric: list[RubricLine], why: str) -> LabRun:
    """Lab LAB's records when it did not build: its build failed with WHY
    (the reason and at most 20 lines of the compiler's or the rules'
    messages: grader/rdmalab_grade/build.py), and every test failed."""
    name = f"lab{number(lab)}"
    build = _grader_record(lab, 0, f"{name}_builds", "FAIL", 0, bounded(why, BUILD_LINES, f"logs/build-{name}.log"))
    tests = (_grader_record(lab, t.step, t.test, "FAIL", t.max, f"not graded: see {name}_builds") for t in rubric)
    return LabRun(lab, build, tuple(tests))


def read_lab_not_built(lab: float, rubric_file: str, why: str) -> LabRun:
    """Lab LAB's records when it did not build (WHY), from its rubric's file
    (see lab_not_built)."""
    rubric, _ = read_lab_inputs(rubric_file, None)
    check_lab(rubric, lab, rubric_file)
    return lab_not_built(lab, rubric, why)


# --- A class ------------------------------------------------------------------


def _folders(top: str) -> Iterator[str]:
    """The folders in TOP, as TOP/NAME, by name (hidden ones left out)."""
    try:
        names = sorted(os.listdir(top))
    except OSError as e:
        raise BadInput(f"cannot read {top}: {e.strerror}") from None
    for name in names:
        if not name.startswith(".") and os.path.isdir(os.path.join(top, name)):
            yield f"{top}/{name}"


@dataclass(frozen=True)
class Student:
    """A student of a class: their folder's name and their submission."""

    name: str
    submission: Submission


def _submission_in(folder: str) -> Submission | None:
    """The submission in FOLDER, or None when its submission.json holds
    nothing (its records are checked all the same); results.jsonl may be
    missing (no records)."""
    about = read_submission_json(f"{folder}/submission.json")
    results = f"{folder}/results.jsonl"
    records = read_records(results) if os.path.isfile(results) else []
    return None if about is None else submission_of(about, records)


def read_class(top: str) -> list[Student]:
    """The class in TOP: each TOP/NAME/ with a submission.json, by name, but
    one being written (NAME.new) or replaced (NAME.old)."""
    students = []
    for folder in _folders(top):
        name = folder.rsplit("/", 1)[1]
        if name.endswith((".new", ".old")) or not os.path.isfile(f"{folder}/submission.json"):
            continue
        sub = _submission_in(folder)
        if sub is not None:
            students.append(Student(name, sub))
    return students


@dataclass(frozen=True)
class Run:
    """One of make grade's kept runs (scripts/grade): its folder's name and
    its submission."""

    run: str
    submission: Submission


def read_runs(top: str) -> list[Run]:
    """The runs in TOP (each TOP/RUN/ with a submission.json; the link
    latest left out), oldest first: by when each was made, then by name."""
    runs = []
    for folder in _folders(top):
        if os.path.islink(folder) or not os.path.isfile(f"{folder}/submission.json"):
            continue
        sub = _submission_in(folder)
        if sub is not None:
            runs.append(Run(folder.rsplit("/", 1)[1], sub))
    return sorted(runs, key=lambda r: (r.submission.made, r.run))



# --- What the class's views take besides the records --------------------------


def _csv_rows(path: str, needs: tuple[str, ...]) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """The CSV file PATH's header and its rows (each with its line number
    and its fields by column), the header holding every column of NEEDS;
    else BadInput."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise BadInput(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    header = [c.strip() for c in rows[0]] if rows else []
    missing = [c for c in needs if c not in header]
    if missing:
        raise BadInput(f"{path}:1: expected a header with the columns {', '.join(needs)}, got: {','.join(header)}")
    found = []
    for n, row in enumerate(rows[1:], 2):
        if not any(c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise BadInput(f"{path}:{n}: {len(row)} fields, the header has {len(header)}")
        found.append((n, dict(zip(header, (c.strip() for c in row)))))
    return header, found


@dataclass(frozen=True)
class RosterRow:
    """A student on the roster: their id (their folder's name in the class
    folder), their name, and the roster's other columns, in its order."""

    id: str
    name: str
    extra: tuple[str, ...]


@dataclass(frozen=True)
class Roster:
    """The class's roster: the columns it has besides id and name, and its rows."""

    columns: tuple[str, ...]
    rows: tuple[RosterRow, ...]


def read_roster(path: str) -> Roster:
    """The roster in the CSV file PATH (a header with id and name; the LMS's
    other columns kept): every id once, none empty; else BadInput."""
    header, rows = _csv_rows(path, ("id", "name"))
    extra = tuple(c for c in header if c not in ("id", "name"))
    seen: set[str] = set()
    students = []
    for n, row in rows:
        if not row["id"] or row["id"] in seen:
            raise BadInput(f"{path}:{n}: {'an empty id' if not row['id'] else 'id ' + row['id'] + ' again'}: "
                           "give each student one row with their own id")
        seen.add(row["id"])
        students.append(RosterRow(row["id"], row["name"], tuple(row[c] for c in extra)))
    return Roster(extra, tuple(students))


KEY_VERDICTS = ("OK", "BAD", "MISSING")


def read_keys(path: str) -> dict[str, tuple[str, str]]:
    """The verified keys in the CSV file PATH (rdmalab-receiver
    --verify-file: id,verdict,detail): each id's verdict and detail; else
    BadInput."""
    _, rows = _csv_rows(path, ("id", "verdict", "detail"))
    keys = {}
    for n, row in rows:
        if row["verdict"] not in KEY_VERDICTS:
            raise BadInput(f"{path}:{n}: verdict {row['verdict']}: expected {', '.join(KEY_VERDICTS)}")
        keys[row["id"]] = (row["verdict"], row["detail"])
    return keys


@dataclass(frozen=True)
class PreflightLab:
    """One lab's preflight: the kit's solution's and stubs' points of the
    most, whether that was as it must be, whether it was graded all the
    same (--force), and why not."""

    lab: float
    solution: float
    stub: float
    most: float
    ok: bool
    forced: bool
    why: str


def _is_preflight_lab(v: Any) -> bool:
    return (
        isinstance(v, dict)
        and _numbers(v, "lab", "solution", "stub", "most")
        and isinstance(v.get("ok"), bool)
        and isinstance(v.get("forced"), bool)
        and _texts(v, "why")
    )


def is_preflight(v: Any) -> bool:
    return (
        isinstance(v, dict)
        and _texts(v, "kit", "mode")
        and isinstance(v.get("labs"), list)
        and all(_is_preflight_lab(x) for x in v["labs"])
    )


PREFLIGHT = "the preflight's result (rdmalab-grade's preflight)"


def read_preflight(top: str) -> list[PreflightLab]:
    """The labs of TOP/preflight.json (none when there is no such file);
    BadInput when it is not one preflight object."""
    path = f"{top}/preflight.json"
    if not os.path.isfile(path):
        return []
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise BadInput(f"cannot read {path}: {e.strerror}") from None
    value = typed(Line(path, 1, " ".join(text.split("\n"))), PREFLIGHT, is_preflight)
    return [PreflightLab(x["lab"], x["solution"], x["stub"], x["most"], x["ok"], x["forced"], x["why"])
            for x in value["labs"]]  # fmt: skip


def preflight_note(p: PreflightLab) -> str:
    """The line each view shows at a lab graded though its preflight failed."""
    return (f"lab {number(p.lab)} was graded though the kit's preflight failed (--force): {p.why} "
            f"(solution {number(p.solution)}, stubs {number(p.stub)}, of {number(p.most)})")
