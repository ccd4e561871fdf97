"""results: the command line of scripts/results, the one collector of the
graded tests' results: each mode reads the records (model), makes one of
their views (report, platforms, classpages, grades) and writes it, each
file whole (temp + rename). Exit 2 on a usage error or a bad input, with
one line that says which."""

from __future__ import annotations

import os
import sys
from datetime import datetime, timezone
from typing import Callable, Sequence

from . import course, jsontext
from .classpages import class_csv, class_html, figures, summary_txt
from .grades import labs_txt, supersedes
from .model import (
    BadInput, LabRun, Submission, check_lab, lab_not_built, read_class,
    read_lab_inputs, read_lab_run, read_preflight, read_runs, read_submission, step_titles,
)  # fmt: skip
from .course import ClassOptions
from .platforms import autolab_line, classroom_json, gradescope_json, junit_xml, prairielearn_json
from .report import report_txt, table

USAGE = """\
  scripts/results table [--step K] [--stubs] [--logs-as D] --lab N --from TREE RUBRIC DIR
      make check's table: every test of RUBRIC with its record in
      DIR/steps.jsonl (one with none failed: "did not run"). Exit 1 when a
      test did not pass; with --stubs, when one passed (on the untouched
      stubs every test must fail). D: DIR as the reader sees it.
  scripts/results lab --lab N [--not-built WHY] [--logs-as D] RUBRIC [RECORDS]
      lab N's records for the grader, one JSON line each: its build (step
      0, labN_builds), then every test of RUBRIC with its record from
      RECORDS (the program's, when it exists), message and output bounded;
      every test failed when the lab did not build (WHY). D (default
      logs/labN): where RECORDS and the program's output are in the report.
  scripts/results submission DIR
      DIR/report.txt, DIR/results.json (Gradescope) and DIR/junit.xml, from
      DIR/submission.json and DIR/results.jsonl (its labs' records).
  scripts/results class [--labs "N..."] [--made TIME] [--roster FILE]
                  [--deadline [N=]TIME]... [--late-days D] [--keys FILE [--key-points P]] DIR
      DIR/class.csv, DIR/summary.txt and DIR/class.html, from each
      DIR/NAME/ with a submission.json, in the labs N and every lab any
      student has; with a roster (CSV: id,name,...) every student on it a
      row; deadlines (ISO 8601 UTC) and a budget of late days per student;
      the verified keys (id,verdict,detail), an OK key worth P points;
      DIR/preflight.json's marks. Prints the summary.
  scripts/results classroom DIR
      DIR's result as GitHub Classroom's grading reporter reads it (one
      JSON line on standard output), from DIR/submission.json and
      DIR/results.jsonl.
  scripts/results runs [--new RUN] DIR
      DIR/labs.txt, every lab's last grade among the runs DIR/RUN/ that
      make grade keeps (scripts/grade); with --new RUN, prints what RUN
      supersedes: a line per lab it graded, with that lab's grade before.
  scripts/results prairielearn DIR
      DIR's records as PrairieLearn's results.json, on standard output
  scripts/results autolab DIR
      DIR's records as Autolab's autoresult line, on standard output
      (exit 2, with why, when DIR could not be graded: it has none)
Each file is written whole or not at all. Exit 2 on a usage error or a bad
input, with one line that says which.
"""


class Usage(Exception):
    """The command line is not one of USAGE's."""


def out(text: str) -> None:
    """TEXT on standard output, as UTF-8 (a file name's bytes as they are)."""
    sys.stdout.buffer.write(text.encode("utf-8", "surrogateescape"))
    sys.stdout.buffer.flush()


def write_whole(path: str, text: str) -> None:
    """TEXT as the file PATH, whole or not at all: into PATH.tmp, renamed
    over PATH once written."""
    tmp = path + ".tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(text.encode("utf-8", "surrogateescape"))
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise BadInput(f"cannot write {path}: {e.strerror}") from None


def whole_number(value: str, option: str) -> int:
    """VALUE, a whole number, else BadInput naming OPTION."""
    if not value or not all("0" <= c <= "9" for c in value):
        raise BadInput(f"{option} {value}: give a whole number")
    return int(value)


def options(args: list[str], names: dict[str, bool], keep: int) -> dict[str, str]:
    """The options at the head of ARGS, taken off it while more than KEEP
    words are left: NAMES maps each to whether it takes a value (a flag's
    value is "1"). Usage on any other word."""
    found: dict[str, str] = {}
    while len(args) > keep:
        word = args.pop(0)
        if word not in names:
            raise Usage()
        found[word] = args.pop(0) if names[word] else "1"
    return found


# --- The modes ---------------------------------------------------------------------


def cmd_table(args: list[str]) -> int:
    """table [--step K] [--stubs] [--logs-as D] --lab N --from TREE RUBRIC DIR"""
    opts = options(args, {"--step": True, "--stubs": False, "--lab": True, "--from": True, "--logs-as": True}, 2)
    if len(args) != 2 or not opts.get("--lab") or not opts.get("--from"):
        raise Usage()
    lab = whole_number(opts["--lab"], "--lab")
    step = opts.get("--step", "")
    if step:
        whole_number(step, "--step")
    rubric_file, folder = args
    if not os.path.isfile(rubric_file):
        raise BadInput(f"no rubric {rubric_file}: make builds it (make labs)")
    # No records (the program was not built, or wrote none): every test "did not run".
    records_file = f"{folder}/steps.jsonl"
    run = read_lab_run(lab, rubric_file, records_file if os.path.isfile(records_file) else None,
                       opts.get("--logs-as") or folder)  # fmt: skip
    tests = [r for r in run.tests if not step or jsontext.number(r.step) == step]
    made = table(lab, opts["--from"], step, opts.get("--stubs") == "1", tests)
    out(made.text)
    return made.status


def cmd_lab(args: list[str]) -> int:
    """lab --lab N [--not-built WHY] [--logs-as D] RUBRIC [RECORDS]"""
    opts: dict[str, str] = {}
    while args and args[0].startswith("-"):
        word = args.pop(0)
        if word not in ("--lab", "--not-built", "--logs-as"):
            raise Usage()
        opts[word] = args.pop(0) if args else ""
    if len(args) not in (1, 2):
        raise Usage()
    lab = whole_number(opts.get("--lab", ""), "--lab")
    rubric_file = args[0]
    if not os.path.isfile(rubric_file):
        raise BadInput(f"no rubric {rubric_file}: make builds it (make grader-kit)")
    # A program that wrote no records: every test "did not run".
    records_file = args[1] if len(args) == 2 and os.path.isfile(args[1]) else None
    why = opts.get("--not-built", "")
    if why:
        # The records are checked all the same.
        rubric, _ = read_lab_inputs(rubric_file, records_file)
        check_lab(rubric, lab, rubric_file)
        run = lab_not_built(lab, rubric, why)
    else:
        run = read_lab_run(lab, rubric_file, records_file, opts.get("--logs-as") or f"logs/lab{opts['--lab']}")
    out(lab_records_text(run))
    return 0


def lab_records_text(run: LabRun) -> str:
    """A lab's records as the grader keeps them: one JSON line each."""
    return "".join(jsontext.dumps(r.to_json()) + "\n" for r in run.records())


def _folder(args: list[str], mode: str) -> str:
    """The one folder ARGS names, with a submission.json and its records."""
    folder = args[0] if args else ""
    has = len(args) == 1 and all(os.path.isfile(f"{folder}/{f}") for f in ("submission.json", "results.jsonl"))
    if not has:
        raise BadInput(f"{mode}: expected a folder with submission.json and results.jsonl, got {folder or 'nothing'}")
    return folder


KIT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def titles(lab: float) -> dict[float, str]:
    """Lab LAB's step titles, from the kit's handout (model.step_titles)."""
    return step_titles(KIT, lab)


def write_submission(folder: str) -> Submission:
    """FOLDER/report.txt, FOLDER/results.json (Gradescope) and
    FOLDER/junit.xml, from FOLDER/submission.json and FOLDER/results.jsonl
    (the report with the kit's step titles, and the marks of the class
    folder's preflight.json, FOLDER's parent's): nothing written unless
    every line reads."""
    sub = read_submission(folder)
    forced = [p for p in read_preflight(os.path.dirname(os.path.abspath(folder))) if not p.ok]
    made = {"report.txt": report_txt(sub, titles, forced), "results.json": gradescope_json(sub),
            "junit.xml": junit_xml(sub)}  # fmt: skip
    for name, text in made.items():
        write_whole(f"{folder}/{name}", text)
    return sub


def cmd_submission(args: list[str]) -> int:
    """submission DIR: DIR/report.txt, DIR/results.json, DIR/junit.xml."""
    write_submission(_folder(args, "submission"))
    return 0


def _printing(view: Callable[[Submission], str], mode: str) -> Callable[[list[str]], int]:
    """A mode that prints VIEW of the submission in its one folder."""

    def cmd(args: list[str]) -> int:
        out(view(read_submission(_folder(args, mode))))
        return 0

    return cmd


def cmd_autolab(args: list[str]) -> int:
    """autolab DIR: the autoresult line, or exit 2 with why there is none."""
    folder = _folder(args, "autolab")
    out(autolab_line(read_submission(folder), f"{folder}/submission.json"))
    return 0


def lab_numbers(text: str) -> list[float]:
    """The labs of --labs ("0 3"), else BadInput."""
    labs = []
    for word in text.split(" "):
        if word == "":
            continue
        try:
            value = jsontext.parse(word)
        except jsontext.NotJSON:
            value = None
        if not jsontext.is_number(value):
            raise BadInput(f"--labs {text}: expected lab numbers")
        labs.append(value)
    return labs


def write_class(folder: str, labs: Sequence[float], made: str, opts: ClassOptions | None = None) -> str:
    """FOLDER/class.csv, FOLDER/summary.txt and FOLDER/class.html (made at
    MADE) of the class in FOLDER, in the labs LABS and every lab any of its
    students has, with OPTS (course.py) and FOLDER/preflight.json; the
    summary's text."""
    students = read_class(folder)
    every = sorted(set(labs) | {lab for st in students for lab in st.submission.labs()})
    f = figures(students, every, opts, titles, read_preflight(folder))
    summary = summary_txt(f)
    for name, text in (("class.csv", class_csv(f)), ("summary.txt", summary), ("class.html", class_html(f, made))):
        write_whole(f"{folder}/{name}", text)
    return summary


def now() -> str:
    """The time, as the class page says when it was made."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def cmd_class(args: list[str]) -> int:
    """class [--labs "N..."] [--made TIME] [course.py's options] DIR"""
    mine: dict[str, str] = {}
    views: list[tuple[str, str]] = []
    while len(args) > 1:
        word = args.pop(0)
        if word not in ("--labs", "--made", *course.OPTIONS) or not args:
            raise Usage()
        value = args.pop(0)
        if word in course.OPTIONS:
            views.append((word, value))
        else:
            mine[word] = value
    if len(args) != 1 or not os.path.isdir(args[0]):
        raise Usage()
    labs = lab_numbers(mine["--labs"]) if mine.get("--labs") else []
    out(write_class(args[0], labs, mine.get("--made") or now(), course.kept_options(args[0], views)))
    return 0


def cmd_runs(args: list[str]) -> int:
    """runs [--new RUN] DIR"""
    new = ""
    if args and args[0] == "--new":
        if len(args) < 2:
            raise Usage()
        new = args[1]
        del args[:2]
    if len(args) != 1 or not os.path.isdir(args[0]):
        raise Usage()
    folder = args[0]
    if new and not os.path.isfile(f"{folder}/{new}/submission.json"):
        raise BadInput(f"runs: no run {new} in {folder} (expected {folder}/{new}/submission.json)")
    runs = read_runs(folder)
    write_whole(f"{folder}/labs.txt", labs_txt(runs))
    if new:
        out(supersedes(runs, new))
    return 0


MODES: dict[str, Callable[[list[str]], int]] = {
    "table": cmd_table,
    "lab": cmd_lab,
    "submission": cmd_submission,
    "class": cmd_class,
    "runs": cmd_runs,
    "classroom": _printing(classroom_json, "classroom"),
    "prairielearn": _printing(prairielearn_json, "prairielearn"),
    "autolab": cmd_autolab,
}


def main(argv: list[str] | None = None) -> int:
    """scripts/results MODE ARGS...: the mode's exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["-h"], ["--help"]):
        sys.stdout.write(USAGE)
        return 0
    mode = MODES.get(args.pop(0) if args else "")
    try:
        if mode is None:
            sys.stderr.write(f"usage: scripts/results {'|'.join(MODES)} ARGS... (-h for help)\n")
            return 2
        return mode(args)
    except Usage:
        sys.stderr.write(USAGE)
        return 2
    except BadInput as e:
        sys.stderr.buffer.write(f"results: {e}\n".encode("utf-8", "surrogateescape"))
        return 2
