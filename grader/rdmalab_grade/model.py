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
                "lab_errors" (only when some): {"2": "why the grader, not the
                student's code, failed lab 2"}}

points are earned (0 unless the test passed), message says why it did not
pass, said is what its processes printed, ms how long it took. Numbers are
JSON's: an int or a float. A line that is not what its file must hold stops
the reading with BadInput, one line naming the file and line.
"""

from __future__ import annotations

import os
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


def is_submission(v: Any) -> bool:
    return (
        isinstance(v, dict)
        and _texts(v, "name", "made", "graded", "source", "intake")
        and _text_or_null(v, "unsafe")
        and _text_or_null(v, "ungradable")
        and (v.get("seconds") is None or is_number(v.get("seconds")))
        and _lab_errors(v.get("lab_errors"))
    )


def _lab_errors(v: Any) -> bool:
    """Whether V is lab_errors (absent, or {"2": "why the grader failed"})."""
    return v is None or (isinstance(v, dict) and all(isinstance(x, str) for x in v.values()))


def submission_of(v: dict[str, Any], records: list[Record]) -> Submission:
    return Submission(
        v["name"], v["made"], v["graded"], v["source"], v["intake"],
        v.get("unsafe"), v.get("ungradable"), v.get("seconds"), tuple(records),
    )  # fmt: skip


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

