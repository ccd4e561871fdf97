"""batch: the data model of a grading run, and the files it crosses in.

A Batch is its Settings and its Submissions. The grader's machine lays out
each submission's tree (intake.py); the builds and tests run where RDMA
works (run.py), maybe in a guest that shares only the work folder; the
grader's machine then publishes the results (publish.py). What crosses to
where RDMA works is one file, WORK/.batch/batch.json (the settings and the
submissions' names: never where the submissions are, which is the
grader's alone). What comes back is each submission's build.json and
run.json, beside its logs and records, each written whole.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, TextIO

from .settings import Settings


@dataclass
class Submission:
    """One student's submission in the batch. k: its index (from 0), which
    gives its uid. taken and intake: what the intake took (one line a file)
    and its note, known on the grader's machine only."""

    name: str
    source: str
    k: int
    uid: int
    taken: List[str] = field(default_factory=list)
    intake: str = ""
    infra: str = ""  # why it could not be graded, found on the grader's machine

    def work(self, settings: Settings) -> str:
        """WORK/NAME: its tree, build logs, records and outcome files."""
        return os.path.join(settings.work, self.name)


@dataclass
class Batch:
    settings: Settings
    submissions: List[Submission]

    def write(self) -> None:
        """WORK/.batch/batch.json, for the run where RDMA works."""
        doc = {"settings": self.settings.to_json(), "names": [s.name for s in self.submissions]}
        write_json(os.path.join(self.settings.batch_dir, "batch.json"), doc)

    @staticmethod
    def read(work: str) -> "Batch":
        """The batch the grader wrote in WORK (its submissions' sources unknown)."""
        with open(os.path.join(work, ".batch", "batch.json")) as f:
            doc = json.load(f)
        settings = Settings.from_json(doc["settings"])
        subs = [Submission(n, "", k, settings.student_uid(k)) for k, n in enumerate(doc["names"])]
        return Batch(settings, subs)


@dataclass
class BuildOutcome:
    """WORK/NAME/build.json: a submission's builds. not_built: each lab that
    did not build, with why (the compiler's lines, or its rules broken);
    infra: why it cannot be graded (its rules could not be checked)."""

    seconds: int = 0
    not_built: Dict[str, str] = field(default_factory=dict)
    infra: str = ""


@dataclass
class RunOutcome:
    """WORK/NAME/run.json: a submission's tests where RDMA works. graded:
    every lab that built was tested; infra: why not; unsafe: what the
    sandbox lacked there (--unsafe); kernel: that kernel's release;
    multiplier: the limits' factor there (calibrated); lab_errors: the labs
    whose tests the grader failed, not the student's code, each with why in
    one line (run.grader_failed)."""

    graded: bool = False
    seconds: int = 0
    infra: str = ""
    unsafe: str = ""
    kernel: str = ""
    multiplier: float = 0
    lab_errors: Dict[str, str] = field(default_factory=dict)


def write_json(path: str, doc: Any) -> None:
    """DOC as PATH, whole or not at all (a new file renamed over it)."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f)
        f.write("\n")
    os.replace(tmp, path)


def read_json(path: str) -> Optional[Dict[str, Any]]:
    """PATH's JSON object, or None when it is not there (or not whole)."""
    try:
        with open(path) as f:
            doc = json.load(f)
        return doc if isinstance(doc, dict) else None
    except (OSError, ValueError):
        return None


def write_build(w: str, outcome: BuildOutcome) -> None:
    write_json(os.path.join(w, "build.json"), outcome.__dict__)


def read_build(w: str) -> BuildOutcome:
    return BuildOutcome(**(read_json(os.path.join(w, "build.json")) or {}))


def write_run(w: str, outcome: RunOutcome) -> None:
    write_json(os.path.join(w, "run.json"), outcome.__dict__)


def read_run(w: str) -> Optional[RunOutcome]:
    doc = read_json(os.path.join(w, "run.json"))
    return RunOutcome(**doc) if doc is not None else None


class Log:
    """The grader's output: each line on standard output and, when the
    batch has its results folder, in DIR/grade.log; whole lines, from any
    thread."""

    def __init__(self, path: Optional[str] = None, stream: TextIO = sys.stdout) -> None:
        self.lock = threading.Lock()
        self.stream = stream
        self.file = open(path, "w") if path else None

    def say(self, text: str) -> None:
        with self.lock:
            for line in text.rstrip("\n").split("\n") if text else []:
                self.stream.write(line + "\n")
                if self.file:
                    self.file.write(line + "\n")
            self.stream.flush()
            if self.file:
                self.file.flush()

    def close(self) -> None:
        if self.file:
            self.file.close()
