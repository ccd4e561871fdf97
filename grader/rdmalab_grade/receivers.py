"""receivers: the reference receivers a lab's tests talk to (.receiver in
tests/harness.h; Lab 3's, one per test), started by the grader.

Each runs as root with a random secret only it ever holds
(--secret-random), so the student's code, under its own uid, never sees a
secret: a test checks the key its sender printed against the key's SHA-256
in the receiver's results log, the one file of theirs the student may read.
Their files, in the folder DIR the caller gives (root's, mode 755): DIR/I/
(mode 755) with results.jsonl (mode 644) and private/receiver.log (mode
700), DIR/table ("TEST<tab>PORT<tab>RESULTS" a line, for the tests:
RDMALAB_RECEIVERS), DIR/pids, and DIR/infra when one did not start.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from typing import List, Optional, Tuple

from .settings import Limits


def port(slot: int, i: int) -> int:
    """The port of the I-th receiver (from 1) of slot SLOT: slots never share."""
    return 30000 + slot * 100 + i


def start(kit: str, listing: str, slot: int, folder: str, addr: str, limits: Limits) -> Optional[str]:
    """A receiver on ADDR for each line of LISTING ("TEST<tab>OPTIONS", the
    test program's --receivers, which make grader-kit writes), on slot
    SLOT's ports, all started at once and then waited for together. None
    when all listen; else why one did not start."""
    open(os.path.join(folder, "table"), "w").close()
    open(os.path.join(folder, "pids"), "w").close()
    if not os.path.isfile(listing):
        return f"no list of the receivers the tests need, {listing}: make grader-kit builds it"
    tests = _listing(listing)
    if not tests:
        return None
    procs = [_start_one(kit, folder, slot, i, opts, addr) for i, (_, opts) in enumerate(tests, 1)]
    with open(os.path.join(folder, "pids"), "w") as f:
        f.write("".join(f"{p.pid}\n" for p in procs))
    why = _wait_listening(folder, [t for t, _ in tests], procs, limits.receivers(len(tests)))
    if why:
        return why
    with open(os.path.join(folder, "table"), "w") as f:
        for i, (test, _) in enumerate(tests, 1):
            f.write(f"{test}\t{port(slot, i)}\t{os.path.join(folder, str(i), 'results.jsonl')}\n")
    return None


def _listing(listing: str) -> List[Tuple[str, str]]:
    with open(listing) as f:
        return [(line.rstrip("\n").split("\t", 1) + [""])[:2] for line in f if line.strip()]


def _start_one(kit: str, folder: str, slot: int, i: int, opts: str, addr: str) -> subprocess.Popen:
    """The I-th receiver, its folder made first (results open to the student)."""
    mine = os.path.join(folder, str(i))
    os.mkdir(mine, 0o755)
    os.mkdir(os.path.join(mine, "private"), 0o700)
    results = os.path.join(mine, "results.jsonl")
    open(results, "w").close()
    os.chmod(mine, 0o755)
    os.chmod(results, 0o644)
    cmd = [os.path.join(kit, "build/bin/rdmalab-receiver"), "--secret-random", "--results", results,
           *opts.split(), "-p", str(port(slot, i)), addr]
    with open(os.path.join(mine, "private/receiver.log"), "wb") as log:
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)


def _wait_listening(folder: str, tests: List[str], procs: List[subprocess.Popen],
                    seconds: int) -> Optional[str]:
    """Until each receiver logged that it listens: None; else why one did
    not (it ended first, or they took SECONDS)."""
    end = time.monotonic() + seconds
    for i, (test, p) in enumerate(zip(tests, procs), 1):
        log = os.path.join(folder, str(i), "private/receiver.log")
        while not _has(log, "listening"):
            if p.poll() is not None or time.monotonic() >= end:
                return f"the reference receiver for {test} did not start: {_last_line(log)}"
            time.sleep(0.1)
    return None


def _has(path: str, text: str) -> bool:
    try:
        with open(path, errors="replace") as f:
            return text in f.read()
    except OSError:
        return False


def _last_line(path: str) -> str:
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
        return lines[-1] if lines else ""
    except OSError:
        return ""


def stop(folder: str) -> None:
    """SIGTERM to each receiver of FOLDER, then SIGKILL to what is left after 5 s."""
    try:
        with open(os.path.join(folder, "pids")) as f:
            pids = [int(line) for line in f if line.strip()]
    except OSError:
        return
    _signal(pids, signal.SIGTERM)
    end = time.monotonic() + 5
    while time.monotonic() < end and any(_running(p) for p in pids):
        time.sleep(0.1)
    _signal(pids, signal.SIGKILL)
    for pid in pids:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    open(os.path.join(folder, "pids"), "w").close()


def _signal(pids: List[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def _running(pid: int) -> bool:
    """Whether PID, a child, has not ended (reaping it if it has)."""
    try:
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:
        return False


def keep_logs(folder: str, records: str, out: str) -> None:
    """The log of the receiver of each test that did not pass in RECORDS
    (the test program's), as OUT/TEST.receiver.log."""
    passed = set()
    try:
        with open(records, errors="replace") as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if isinstance(r, dict) and r.get("result") == "pass":
                    passed.add(r.get("test"))
    except OSError:
        pass
    with open(os.path.join(folder, "table")) as f:
        for i, line in enumerate(f, 1):
            test = line.split("\t")[0]
            if test not in passed:
                try:
                    shutil.copyfile(os.path.join(folder, str(i), "private/receiver.log"),
                                    os.path.join(out, f"{test}.receiver.log"))
                except OSError:
                    pass
