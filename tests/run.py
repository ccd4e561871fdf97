#!/usr/bin/env python3
"""run.py: run the kit's tests, count each one, name it and show its time.

    tests/run.py [--mode M] [--unit PROGS] [--rdma PROGS] [--memcheck]
                 [--stubs-check CMD] [--handout-check CMD] [--fuzz CMD]
                 [--also CMD] [--report CMD]
                 [--extra NAME CMD]... [--beside NAME CMD]...
                 [--skip NAME REASON]...
    tests/run.py --inner --rdma PROGS [--also CMD]     (inside the guest)
    tests/run.py --run-cases MODULE...                  (one lane's cases)

What runs, in order:
- the unit programs (Check; each of their tests counts), and with
  --memcheck each once more under valgrind (one count each);
- the RDMA programs through vm/run-rdma, and CMD of --also after them in the
  same environment (one boot for all);
- CMD of --report, --stubs-check, --handout-check, --fuzz and each --extra,
  here, one count each; a CMD that exits 77 was skipped (scripts/lib.sh's
  rl_skip), counted and named with its reason at the end, never as passed;
- a CMD "cases MODULE..." (named as python -m would) runs those unittest
  modules instead, in one process of their own, each case counted, named
  and timed, and each class's or module's set-up timed apart (a guest
  booted once for several cases);
- the --beside CMDs, one after another in a second lane that starts first,
  beside all the rest (a test in a one-CPU guest leaves the machine's other
  CPU to the other lane); their output is kept and shown, and counted, once
  the rest is done. They must not need what the rest makes, nor make what
  the rest reads.
Each CMD is a list of words split on blanks, run as such: no shell (what
needs one is a make target). Ends with the ten slowest tests, the guests
that hung, died or booted again, the skipped tests and their reasons, and
"test: N passed, N failed, N skipped"; exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, TextIO

KIT = Path(__file__).resolve().parent.parent
CHECK_SUMMARY = re.compile(r"Checks: (\d+), Failures: (\d+), Errors: (\d+)")
# How a lane of unittest cases reports each case to the run that counts it.
CASE_LINE = re.compile(r"^case-result: (passed|failed|skipped) ([0-9.]+) (\S+)(?: (.*))?$")
# And the time a class's or a module's set-up took, before its first case.
SETUP_LINE = re.compile(r"^case-setup: ([0-9.]+) (\S+)$")
SKIPPED = 77


@dataclass
class Timed:
    """A test that ran, for the list of the slowest."""

    name: str
    seconds: float


@dataclass
class Tally:
    """What a run counted."""

    passed: int = 0
    failed: int = 0
    broken: int = 0
    skipped: int = 0
    timed: list[Timed] = field(default_factory=list)
    skips: list[str] = field(default_factory=list)

    def count(self, status: int) -> None:
        """One more test: passed when STATUS is 0, skipped when 77."""
        if status == 0:
            self.passed += 1
        elif status == SKIPPED:
            self.skipped += 1
        else:
            self.failed += 1

    def case(self, line: str) -> bool:
        """Count LINE when it is a case's result (CASE_LINE); time it when it
        is a set-up's (SETUP_LINE)."""
        setup = SETUP_LINE.match(line)
        if setup:
            module, _, cls = setup.group(2).partition(":")
            self.timed.append(Timed(f"{module}: the set-up before {cls}", float(setup.group(1))))
            return True
        m = CASE_LINE.match(line)
        if not m:
            return False
        result, seconds, name, why = m.groups()
        self.count({"passed": 0, "skipped": SKIPPED}.get(result, 1))
        self.timed.append(Timed(name, float(seconds)))
        if result == "skipped":
            self.skips.append(f"{name}: {why or 'no reason given'}")
        return True


def words(cmd: str) -> list[str]:
    """CMD's words: a program and its arguments, split on blanks."""
    return cmd.split()


def say(text: str) -> None:
    print(text, flush=True)


# --- One command, counted ----------------------------------------------------


def timed_cmd(name: str, argv: list[str], out: TextIO | None = None,
              running: list[subprocess.Popen[bytes]] | None = None) -> tuple[int, float]:
    """Run ARGV under a heading, its output to OUT (default: ours); print how
    it ended and its time (CI's time is a budget). Returns (status, seconds):
    0, 77 (skipped) or 1. With RUNNING, the command runs in a session of its
    own, listed there while it runs, so that an interrupted run can stop it
    and all it started."""
    stream = out or sys.stdout
    print(f"== {name}", file=stream, flush=True)
    t0 = time.monotonic()
    try:
        p = subprocess.Popen(argv, cwd=KIT, stdout=stream, stderr=stream, stdin=subprocess.DEVNULL,
                             start_new_session=running is not None)
        if running is not None:
            running.append(p)
        status = p.wait()
        if running is not None:
            running.remove(p)
    except OSError as e:
        print(f"run-tests: {name}: cannot run {argv[0]}: {e.strerror}", file=stream, flush=True)
        status = 1
    seconds = time.monotonic() - t0
    ended = {0: "passed", SKIPPED: "SKIPPED"}.get(status, "FAILED")
    print(f"run-tests: {name}: {ended} in {seconds:.0f} s", file=stream, flush=True)
    return (status if status in (0, SKIPPED) else 1), seconds


def count_cmd(t: Tally, name: str, cmd: str) -> None:
    """timed_cmd of CMD's words, counted as one test; a CMD "cases
    MODULE..." runs those unittest modules, each case counted."""
    if cmd.startswith("cases "):
        count_cases(t, cmd[len("cases "):])
        return
    status, seconds = timed_cmd(name, words(cmd))
    t.count(status)
    t.timed.append(Timed(name, seconds))


# --- Check programs -----------------------------------------------------------


def run_check_programs(t: Tally, progs: Iterable[str]) -> None:
    """Run each Check program, echo its output, count its tests from the
    summary; one that exits without a summary, or non-zero with no failure,
    is broken."""
    for prog in progs:
        say(f"== {prog}")
        t0 = time.monotonic()
        done = subprocess.run([prog], cwd=KIT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, errors="replace")
        t.timed.append(Timed(prog, time.monotonic() - t0))
        sys.stdout.write(done.stdout)
        sys.stdout.flush()
        sums = CHECK_SUMMARY.findall(done.stdout)
        if not sums:
            print(f"run-tests: {prog} exited with status {done.returncode} without a Check summary",
                  file=sys.stderr, flush=True)
            t.broken += 1
            continue
        checks, fails, errs = (int(n) for n in sums[-1])
        t.passed += checks - fails - errs
        t.failed += fails + errs
        if done.returncode != 0 and fails + errs == 0:
            t.broken += 1


def memcheck(t: Tally, progs: Iterable[str]) -> None:
    """Each unit program once more under valgrind: one count each."""
    say("-- unit tests under valgrind (no fork, leaks checked)")
    for prog in progs:
        status, seconds = timed_cmd(f"valgrind {prog}", [str(KIT / "scripts/memcheck"), prog])
        t.count(status)
        t.timed.append(Timed(f"valgrind {prog}", seconds))


def rdma_in_guest(t: Tally, mode: str, progs: str, also: str) -> None:
    """The RDMA programs, and ALSO after them, in one boot of the RDMA
    environment (vm/run-rdma): the inner run prints its counts."""
    say(f"-- RDMA tests (mode {mode})")
    t0 = time.monotonic()
    env = dict(os.environ)
    # The kit's own code: User-Mode Linux's seccomp mode (docs/environment.md,
    # "Guest modes"), unless the environment says.
    env.setdefault("RDMALAB_UML_SECCOMP", "1")
    argv = [str(KIT / "vm/run-rdma"), "--mode", mode, "--", sys.executable, str(KIT / "tests/run.py"),
            "--inner", "--rdma", progs, "--also", also]
    counts = None
    with subprocess.Popen(argv, cwd=KIT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace", stdin=subprocess.DEVNULL) as p:
        assert p.stdout is not None
        for line in p.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            if line.startswith("rdma-counts: "):
                counts = [int(n) for n in line.split()[1:4]]
    seconds = time.monotonic() - t0
    t.timed.append(Timed("the RDMA tests and the lab step tests, in one boot", seconds))
    if counts is None:
        print(f"run-tests: the RDMA tests did not run (status {p.returncode}): see the messages above",
              file=sys.stderr, flush=True)
        t.broken += 1
    else:
        t.passed += counts[0]
        t.failed += counts[1]
        t.broken += counts[2]
    say(f"run-tests: the RDMA tests took {seconds:.0f} s")


def inner(progs: str, also: str) -> int:
    """Inside the RDMA environment: report counts for the outer run."""
    t = Tally()
    run_check_programs(t, words(progs))
    say(f"rdma-counts: {t.passed} {t.failed} {t.broken}")
    if also:
        say(f"== {also}")
        subprocess.call(words(also), cwd=KIT)
    return 0


# --- unittest cases -------------------------------------------------------------


class CaseResult(unittest.TextTestResult):
    """unittest's result, and one CASE_LINE per case for the counting run:
    written when the case ends, from the worst of its outcomes (a failed
    subTest fails its case); an error outside any case (setUpClass) is a
    line of its own."""

    # What ran between two cases (a class's or a module's set-up: a guest
    # booted once for all its cases) is a line of its own, SETUP_LINE, so
    # that the slowest list shows where the time went.
    _t0 = time.monotonic()

    def startTest(self, test: unittest.TestCase) -> None:
        gap = time.monotonic() - self._t0
        if gap >= 1:
            # A module's set-up, or its first class's: named by both.
            module, cls = test.id().replace("tests.", "", 1).rsplit(".", 2)[:2]
            self.stream.write(f"case-setup: {gap:.1f} {module}:{cls}\n")
            self.stream.flush()
        self._t0 = time.monotonic()
        self._outcome = ("passed", "")
        super().startTest(test)

    def stopTest(self, test: unittest.TestCase) -> None:
        super().stopTest(test)
        self._line(test, *self._outcome)
        self._t0 = time.monotonic()

    def _line(self, test: unittest.TestCase, result: str, why: str = "") -> None:
        seconds = max(0.0, time.monotonic() - self._t0)
        name = test.id()
        holder = re.fullmatch(r"(\w+) \((.+)\)", name)  # "setUpClass (module.Class)"
        if holder:
            name = f"{holder.group(2)}.{holder.group(1)}"
        name = name.replace("tests.", "", 1)
        why = " ".join(why.split())
        self.stream.write(f"case-result: {result} {seconds:.1f} {name}{' ' + why if why else ''}\n")
        self.stream.flush()

    def _failed(self, test: unittest.TestCase) -> None:
        if isinstance(test, unittest.TestCase):
            self._outcome = ("failed", "")
        else:  # setUpClass, setUpModule: no case started
            self._line(test, "failed")

    def addFailure(self, test: unittest.TestCase, err: object) -> None:
        super().addFailure(test, err)  # type: ignore[arg-type]
        self._failed(test)

    def addError(self, test: unittest.TestCase, err: object) -> None:
        super().addError(test, err)  # type: ignore[arg-type]
        self._failed(test)

    def addSubTest(self, test: unittest.TestCase, subtest: unittest.TestCase, err: object) -> None:
        super().addSubTest(test, subtest, err)  # type: ignore[arg-type]
        if err is not None:
            self._failed(test)

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:
        super().addSkip(test, reason)
        if isinstance(test, unittest.TestCase):
            self._outcome = ("skipped", reason)
        else:
            self._line(test, "skipped", reason)


def run_cases(modules: list[str]) -> int:
    """The unittest cases of MODULES, here, each reported by a CASE_LINE."""
    sys.path.insert(0, str(KIT))
    suite = unittest.defaultTestLoader.loadTestsFromNames(modules)
    runner = unittest.TextTestRunner(stream=sys.stdout, verbosity=0, resultclass=CaseResult)
    CaseResult._t0 = time.monotonic()
    result = runner.run(suite)
    return 0 if result.wasSuccessful() else 1


def count_cases(t: Tally, modules: str, out: TextIO | None = None) -> None:
    """Run the cases of MODULES in a process of their own (a case that
    crashes it loses no count): each case is counted from its CASE_LINE."""
    stream = out or sys.stdout
    argv = [sys.executable, str(KIT / "tests/run.py"), "--run-cases", *words(modules)]
    print(f"== unittest: {modules}", file=stream, flush=True)
    before = t.passed + t.failed + t.skipped
    with subprocess.Popen(argv, cwd=KIT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace", stdin=subprocess.DEVNULL) as p:
        assert p.stdout is not None
        for line in p.stdout:
            stream.write(line)
            stream.flush()
            t.case(line.rstrip("\n"))
    if p.returncode != 0 and t.failed + t.passed + t.skipped == before:
        print(f"run-tests: unittest {modules}: ran no case (status {p.returncode})", file=stream, flush=True)
        t.broken += 1


# --- The lane beside the rest ----------------------------------------------------


class Beside:
    """The --beside CMDs, in turn, in a thread beside the rest: each one's
    output kept in a file, shown and counted once the rest is done."""

    def __init__(self, tests: list[tuple[str, str]]) -> None:
        self.tests = tests
        self.dir = Path(tempfile.mkdtemp(prefix="rdmalab-beside-"))
        self.tally = Tally()
        self.thread = threading.Thread(target=self._lane, daemon=True)
        self.running: list[subprocess.Popen[bytes]] = []

    def start(self) -> None:
        for i, (name, _) in enumerate(self.tests):
            say(f"-- beside the rest, in turn: {name} (output: {self.dir}/{i}.log, shown at the end)")
        if self.tests:
            self.thread.start()

    def _lane(self) -> None:
        for i, (name, cmd) in enumerate(self.tests):
            with open(self.dir / f"{i}.log", "w") as log:
                if cmd.startswith("cases "):
                    count_cases(self.tally, cmd[len("cases "):], log)
                    continue
                status, seconds = timed_cmd(name, words(cmd), log, self.running)
                self.tally.count(status)
                self.tally.timed.append(Timed(name, seconds))

    def stop(self) -> None:
        """Stop what still runs beside (an interrupted run), and all it started."""
        for p in list(self.running):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def wait(self, t: Tally) -> None:
        """Wait for the lane, show its output, add its counts to T."""
        if not self.tests:
            return
        say("-- waiting for the tests beside the rest")
        t0 = time.monotonic()
        self.thread.join()
        say(f"run-tests: the rest waited {time.monotonic() - t0:.0f} s for them")
        for i in range(len(self.tests)):
            log = self.dir / f"{i}.log"
            if log.exists():
                sys.stdout.write(log.read_text(errors="replace"))
        sys.stdout.flush()
        for name in ("passed", "failed", "broken", "skipped"):
            setattr(t, name, getattr(t, name) + getattr(self.tally, name))
        t.timed += self.tally.timed
        t.skips += self.tally.skips


# --- The end of a run ---------------------------------------------------------------


def slowest(t: Tally, n: int = 10) -> None:
    """The N slowest tests: where CI's time goes."""
    say(f"run-tests: the {n} slowest tests:")
    for x in sorted(t.timed, key=lambda x: x.seconds, reverse=True)[:n]:
        say(f"  {x.seconds:6.1f} s  {x.name}")


def guest_events(path: Path) -> None:
    """What rl_guest_event (scripts/lib.sh) recorded: every guest that hung,
    died or was killed, and every second boot, whoever asked for it."""
    lines = [ln for ln in path.read_text(errors="replace").splitlines() if ln]
    retried = sum(1 for ln in lines if ln.startswith("retried"))
    say(f"run-tests: guests: {len(lines) - retried} hung, died or killed; {retried} booted again")
    for ln in lines:
        kind, _, what = ln.partition("\t")
        say(f"  {kind}: {what}")


def skips(t: Tally, path: Path) -> None:
    """The tests that were skipped, each with its reason."""
    if not t.skipped:
        return
    say(f"run-tests: {t.skipped} test(s) skipped, not passed:")
    for ln in path.read_text(errors="replace").splitlines():
        name, _, why = ln.partition("\t")
        say(f"  {name}: {why}")
    for s in t.skips:
        say(f"  {s}")


def options(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="tests/run.py", description="run the kit's tests (see the top of tests/run.py)")
    p.add_argument("--mode", default=os.environ.get("RDMALAB_MODE", "auto"))
    for name in ("unit", "rdma", "also", "report", "stubs-check", "handout-check", "fuzz"):
        p.add_argument(f"--{name}", default="")
    p.add_argument("--memcheck", action="store_true")
    p.add_argument("--inner", action="store_true")
    p.add_argument("--run-cases", nargs="+", metavar="MODULE")
    for name in ("extra", "beside", "skip"):
        p.add_argument(f"--{name}", nargs=2, action="append", default=[], metavar=("NAME", "CMD"))
    return p.parse_args(argv)


def main(argv: list[str]) -> int:
    o = options(argv)
    if o.run_cases:
        return run_cases(o.run_cases)
    if o.inner:
        return inner(o.rdma, o.also)
    os.environ.setdefault("CK_FORK", "yes")
    # Where RDMA runs, for every test it starts (vm/run-rdma reads it).
    os.environ["RDMALAB_MODE"] = o.mode
    # A student's course hub (vm/hub) is for their Lab 3 runs: the tests'
    # guests stay off it (tests/vm/test_hub.py gives its own a hub of its own).
    os.environ.pop("RDMALAB_HUB", None)
    t = Tally()
    t_start = time.monotonic()
    with tempfile.NamedTemporaryFile(prefix="rdmalab-guests-") as ev, \
            tempfile.NamedTemporaryFile(prefix="rdmalab-skips-") as sk:
        os.environ["RDMALAB_GUEST_EVENTS"] = ev.name
        os.environ["RDMALAB_TEST_SKIPS"] = sk.name
        beside = Beside(o.beside)
        beside.start()
        try:
            run_main_lane(t, o, Path(sk.name))
            beside.wait(t)
        finally:
            beside.stop()
        if t.broken:
            print(f"run-tests: {t.broken} test program(s) crashed or did not run", file=sys.stderr, flush=True)
        slowest(t)
        guest_events(Path(ev.name))
        skips(t, Path(sk.name))
    say(f"run-tests: {time.monotonic() - t_start:.0f} s in all")
    say(f"test: {t.passed} passed, {t.failed + t.broken} failed, {t.skipped} skipped")
    return 0 if t.failed == 0 and t.broken == 0 else 1


def run_main_lane(t: Tally, o: argparse.Namespace, skip_file: Path) -> None:
    """Everything but the lane beside, in order (see the top)."""
    for name, why in o.skip:
        say(f"-- not run: {name}: {why}")
        with open(skip_file, "a") as f:
            f.write(f"{name}\t{why}\n")
        t.count(SKIPPED)
    if o.stubs_check:
        count_cmd(t, "labs/ is what solutions/ generate", o.stubs_check)
    if o.handout_check:
        count_cmd(t, "the student handout holds no solutions; its docs name only what it holds", o.handout_check)
    if o.unit:
        say("-- unit tests (host)")
        run_check_programs(t, words(o.unit))
        if o.memcheck:
            memcheck(t, words(o.unit))
    if o.fuzz:
        count_cmd(t, "bounded fuzzing run", o.fuzz)
    if o.rdma:
        rdma_in_guest(t, o.mode, o.rdma, o.also)
    if o.report:
        count_cmd(t, "lab step tests: solutions pass, stubs fail", o.report)
    for name, cmd in o.extra:
        count_cmd(t, name, cmd)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
