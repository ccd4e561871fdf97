"""settings: everything a batch is graded with, in one frozen object.

The grader's options, the limits on the student's code, the uids and the
time multiplier are decided once, on the grader's machine (cli.py), and
written with the batch (batch.py) into the one JSON file the run where RDMA
works reads back (run.py). Nothing else passes settings between the two.
Every time limit is computed here, from these settings (Limits).
"""

from __future__ import annotations

import math
import os
import subprocess
from dataclasses import asdict, dataclass, replace
from typing import Any, Dict, List, Tuple

# Seconds per graded test (tests/harness.h; a test may declare less),
# before the multiplier: more than all of a lab's tests need (8 to 25 s for
# each lab's solution in User-Mode Linux, the guest's boot included), so a
# hanging test costs half a minute, not one.
TEST_SECONDS = 30


@dataclass(frozen=True)
class StudentLimits:
    """Per-process limits on the student's code (prlimit's names), each
    within the grader's own hard limit (sandbox.within_own)."""

    cpu: int = 120  # CPU seconds (GRADE_CPU_SECONDS)
    memory: int = 4294967296  # address space, bytes (GRADE_MEMORY_BYTES)
    fsize: int = 268435456  # file size, bytes (GRADE_FILE_BYTES)
    nproc: int = 256  # processes of its uid (GRADE_PROCESSES)


@dataclass(frozen=True)
class Settings:
    """One batch's settings: the options, limits, uids and multiplier.

    kit: the kit's folder. out: the results folder (DIR). labs: the labs
    graded; all_labs: every lab of the kit. graded: what the reports say was
    graded ("Lab 0 (Labs 1, 2 not asked for)"). mode: where RDMA runs,
    resolved (native, uml or vm). built_here: the builds are made on the
    grader's machine, before the guests boot. uid_base: the submission k of
    the batch (from 0) runs as uid uid_base + 1 + k; uid_base itself checks
    what any such user can read, uid_base - 1 runs the User-Mode Linux
    guests. multiplier: CK_TIMEOUT_MULTIPLIER, times the calibration where
    RDMA runs (run.calibrate)."""

    kit: str
    out: str
    labs: Tuple[int, ...]
    all_labs: Tuple[int, ...]
    jobs: int = 1
    mode: str = "auto"
    graded: str = ""
    source: str = ""
    rules: bool = True
    class_pages: bool = True
    unsafe: bool = False
    built_here: bool = False
    uid_base: int = 64100
    test_seconds: int = TEST_SECONDS
    limits: StudentLimits = StudentLimits()
    multiplier: float = 1.0
    kit_commit: str = "unknown"
    submitted: str = ""
    class_views: Tuple[Tuple[str, str], ...] = ()

    @property
    def work(self) -> str:
        """The batch's work folder: WORK/NAME/ a submission's, WORK/.batch/
        the batch's own files (no submission's name starts with a dot)."""
        return os.path.join(self.out, ".work")

    @property
    def batch_dir(self) -> str:
        return os.path.join(self.work, ".batch")

    def student_uid(self, k: int) -> int:
        """The uid of the batch's submission K (from 0): one of its own."""
        return self.uid_base + 1 + k

    @property
    def guest_uid(self) -> int:
        """The host user a User-Mode Linux guest runs as (no student's)."""
        return self.uid_base - 1

    def to_json(self) -> Dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(data: Dict[str, Any]) -> "Settings":
        fields = dict(data)
        fields["labs"] = tuple(fields["labs"])
        fields["all_labs"] = tuple(fields["all_labs"])
        fields["limits"] = StudentLimits(**fields["limits"])
        fields["class_views"] = tuple(tuple(p) for p in fields.get("class_views", ()))
        return Settings(**fields)

    def scaled_by(self, factor: float) -> "Settings":
        """These settings with every limit stretched FACTOR times more."""
        return replace(self, multiplier=self.multiplier * factor)


def graded_text(labs: Tuple[int, ...], all_labs: Tuple[int, ...]) -> str:
    """What the reports say was graded: "Lab 0 (Labs 1, 2 not asked for)"."""
    def named(ns: List[int]) -> str:
        return ("Labs " if len(ns) > 1 else "Lab ") + ", ".join(str(n) for n in ns)

    not_asked = [n for n in all_labs if n not in labs]
    return named(list(labs)) + (f" ({named(not_asked)} not asked for)" if not_asked else "")


def kit_commit(kit: str) -> str:
    """The commit of the kit at KIT ("abc1234", with "+changes" when its
    files differ from it), or "unknown" where it is no git checkout."""
    def git(*args: str) -> str:
        try:
            p = subprocess.run(["git", "-C", kit, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        return p.stdout.decode(errors="replace").strip() if p.returncode == 0 else ""

    if os.path.realpath(git("rev-parse", "--show-toplevel") or "/nonexistent") != os.path.realpath(kit):
        return "unknown"
    commit = git("rev-parse", "--short", "HEAD")
    changed = git("status", "--porcelain", "--untracked-files=no")
    return (commit + ("+changes" if changed else "")) if commit else "unknown"


class BadSetting(ValueError):
    """A setting from the environment that is not a number: its one line."""


def _env_number(env: Dict[str, str], name: str, default: float, whole: bool = True) -> Any:
    """ENV's NAME as a number (whole unless WHOLE is false), else DEFAULT."""
    text = env.get(name) or ""
    if not text:
        return default
    try:
        value = int(text) if whole else float(text)
    except ValueError:
        raise BadSetting(f"{name}={text}: give a {'whole ' if whole else ''}number") from None
    if value <= 0 and name != "GRADE_UID_BASE":
        raise BadSetting(f"{name}={text}: give a number above 0")
    return value


def from_environment(env: Dict[str, str]) -> Dict[str, Any]:
    """The settings the environment may change: the uids (GRADE_UID_BASE),
    the seconds per test (GRADE_TEST_SECONDS), the student limits
    (GRADE_CPU_SECONDS, GRADE_MEMORY_BYTES, GRADE_FILE_BYTES,
    GRADE_PROCESSES) and the multiplier (CK_TIMEOUT_MULTIPLIER), each its
    default when unset. Raises BadSetting."""
    d = StudentLimits()
    return {
        "uid_base": _env_number(env, "GRADE_UID_BASE", Settings.uid_base),
        "test_seconds": _env_number(env, "GRADE_TEST_SECONDS", TEST_SECONDS),
        "limits": StudentLimits(cpu=_env_number(env, "GRADE_CPU_SECONDS", d.cpu),
                                memory=_env_number(env, "GRADE_MEMORY_BYTES", d.memory),
                                fsize=_env_number(env, "GRADE_FILE_BYTES", d.fsize),
                                nproc=_env_number(env, "GRADE_PROCESSES", d.nproc)),
        "multiplier": _env_number(env, "CK_TIMEOUT_MULTIPLIER", 1.0, whole=False),
    }


def number_text(x: float) -> str:
    """X as jq and the shell print it: 2, not 2.0; 2.5."""
    return str(int(x)) if x == int(x) else repr(x)


@dataclass(frozen=True)
class Limits:
    """Every wall-clock limit of a batch, in seconds, from its settings.

    They only catch a hang, so each is generous and times the multiplier
    (CK_TIMEOUT_MULTIPLIER, times the measured slowness of where RDMA runs):
    - test: each graded test (the harness's own, RDMALAB_TEST_TIMEOUT; it
      scales it itself, and gives a step's other tests a quarter once one
      ran out);
    - lab_tests: a lab's whole test program (its tests one after another);
    - build: a lab's build, compiler and link; rules: its rules' check;
    - unpack: a tarball unpacked as the student;
    - guest: one User-Mode Linux guest grading one submission (the boot
      and each lab's build and tests);
    - environment(count): the one guest (or native run) of a whole batch;
    - grace: what a run gets between SIGTERM and SIGKILL (not scaled: the
      kernel is quick to kill; a uid's leftovers get as long, sandbox.py).
    Two more are not the grader's to set: rdmalab-receivers waits (10 + N/2)
    s for N reference receivers to listen, times the multiplier the grader
    passes it (receivers.py), and gives them 5 s to stop. The CPU seconds
    of each student process are a per-process limit, not a wall clock
    (StudentLimits.cpu)."""

    settings: Settings

    def scaled(self, seconds: float) -> int:
        """SECONDS times the multiplier, rounded up (scripts/lib.sh's rl_scaled)."""
        return math.ceil(round(seconds * self.settings.multiplier, 9))

    @property
    def test(self) -> int:
        return self.settings.test_seconds

    @property
    def lab_tests(self) -> int:
        return self.scaled(1200)

    @property
    def build(self) -> int:
        return self.scaled(600)

    @property
    def rules(self) -> int:
        return self.scaled(120)

    @property
    def unpack(self) -> int:
        return self.scaled(120)

    @property
    def guest(self) -> int:
        return self.scaled(900 + 600 * len(self.settings.labs))

    def environment(self, count: int) -> int:
        s = self.settings
        return self.scaled(900 + 600 * count * len(s.labs) // s.jobs)

    grace: int = 5
