"""kitbase: the one base of the kit's tests that are not C tests.

A test of what surrounds the C (the grader, its views, make, the guests, the
docs) is a unittest method on KitCase: a short method named for what it
proves. KitCase gives it what such tests share: temporary folders that go
with the test, the kit's programs run with their output kept for the
failure message, the rubric (the lab list and each lab's points, never a
hand-kept list), and timeouts scaled by CK_TIMEOUT_MULTIPLIER.
tests/run.py runs them, names each case and shows its time.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import tempfile
import unittest
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

KIT = Path(__file__).resolve().parent.parent


def scaled(seconds: float) -> int:
    """SECONDS times CK_TIMEOUT_MULTIPLIER (default 1), rounded up: every
    timeout that only catches a hang goes through it (scripts/lib.sh's
    rl_scaled, for the shell)."""
    factor = float(os.environ.get("CK_TIMEOUT_MULTIPLIER") or 1)
    return math.ceil(seconds * factor)


@dataclass(frozen=True)
class RubricTest:
    """One graded test as the rubric lists it (tests/graded.c --rubric)."""

    lab: int
    step: int
    test: str
    max: int


def rubric_dir(build: Path | None = None) -> Path:
    """Where make grader-kit writes the rubric (build/rubric)."""
    return (build or KIT / "build") / "rubric"


def labs(build: Path | None = None) -> list[int]:
    """The kit's labs, from the rubric: one build/rubric/labN.jsonl each."""
    found = sorted(
        int(p.stem[3:])
        for p in rubric_dir(build).glob("lab*.jsonl")
        if p.stem[3:].isdigit()
    )
    if not found:
        raise unittest.SkipTest(
            f"no rubric in {rubric_dir(build)}: run make grader-kit (make test builds it)"
        )
    return found


def rubric(lab: int, build: Path | None = None) -> list[RubricTest]:
    """Lab LAB's graded tests, in the rubric's order."""
    path = rubric_dir(build) / f"lab{lab}.jsonl"
    tests = []
    for line in path.read_text().splitlines():
        r = json.loads(line)
        tests.append(RubricTest(r["lab"], r["step"], r["test"], r["max"]))
    return tests


def full_points(lab: int, build: Path | None = None) -> int:
    """What a lab's solution earns: the sum of its tests' points."""
    return sum(t.max for t in rubric(lab, build))


# What a lab's untouched stubs earn: nothing (scripts/results table --stubs
# fails when any of their tests passes).
STUB_POINTS = 0


class CommandFailed(AssertionError):
    """A command a test ran did not end as the test expected."""


def run(
    args: Sequence[str | os.PathLike[str]],
    *,
    cwd: Path = KIT,
    env: Mapping[str, str] | None = None,
    timeout: float = 600,
    status: int | None = 0,
    stdin: str | None = None,
    merge: bool = True,
) -> subprocess.CompletedProcess[str]:
    """Run ARGS (no shell), its output kept in .stdout, with its errors
    (MERGE) or apart in .stderr. Raises
    CommandFailed, with the command and the end of its output, when its exit
    status is not STATUS (None: any), or when it still runs after TIMEOUT
    seconds (scaled): a hang fails too. Usable from setUpClass, where a
    guest boots once for several cases."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    words = [str(a) for a in args]
    try:
        done = subprocess.run(
            words,
            cwd=cwd,
            env=full_env,
            input=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge else subprocess.PIPE,
            text=True,
            errors="replace",
            timeout=scaled(timeout),
        )
    except subprocess.TimeoutExpired as e:
        out = e.output.decode(errors="replace") if isinstance(e.output, bytes) else (e.output or "")
        raise CommandFailed(f"{' '.join(words)}: still running after {scaled(timeout)} s\n" + tail(out)) from None
    if status is not None and done.returncode != status:
        said = done.stdout + (done.stderr or "")
        raise CommandFailed(f"{' '.join(words)}: exit {done.returncode}, expected {status}\n" + tail(said))
    return done


class KitCase(unittest.TestCase):
    """The base of every non-C test of the kit."""

    kit: Path = KIT
    maxDiff = None

    def tmp(self, prefix: str = "rdmalab-test-") -> Path:
        """A new temporary folder, removed when the test ends."""
        path = Path(tempfile.mkdtemp(prefix=prefix))
        self.addCleanup(shutil.rmtree, path, ignore_errors=True)
        return path

    @classmethod
    def class_tmp(cls, prefix: str = "rdmalab-test-") -> Path:
        """A new temporary folder for the whole class (its setUpClass makes
        what its tests read), removed when the class is done."""
        path = Path(tempfile.mkdtemp(prefix=prefix))
        cls.addClassCleanup(shutil.rmtree, path, ignore_errors=True)
        return path

    def run_cmd(self, args: Sequence[str | os.PathLike[str]], *, cwd: Path | None = None,
                **options: Any) -> subprocess.CompletedProcess[str]:
        """run() (its OPTIONS), from the kit's folder by default: fails the
        test when the command does not end as expected."""
        return run(args, cwd=cwd or self.kit, **options)

    def assertHasLine(self, line: str, text: str, what: str = "") -> None:
        """TEXT has LINE, a whole line; else fail with WHAT, the line
        expected and the text got."""
        if line not in text.split("\n"):
            self.fail(f"{what + ': ' if what else ''}expected the line {line!r} in:\n{text}")

    def assertIn(self, member: Any, container: Any, msg: Any = None) -> None:
        """assertIn that shows the text it looked in, whole, when it fails."""
        if isinstance(member, str) and isinstance(container, str):
            if member not in container:
                self.fail(msg or f"{member!r} not in:\n{container}")
            return
        super().assertIn(member, container, msg)


def tail(text: str, lines: int = 30) -> str:
    """The last LINES lines of TEXT, for a failure message."""
    return "\n".join(text.splitlines()[-lines:])
