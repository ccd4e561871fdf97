"""receivers: the reference receivers a lab's tests talk to (.receiver in
tests/harness.h; Lab 3's, one per test), started by the grader as root.

Thin calls of build/bin/rdmalab-receivers (tests/rdma/receivers.c), which
starts them with the code make check's fixture starts its own with, each
with a random secret only it ever holds, and keeps its state in the folder
it is given: DIR/table for the tests (RDMALAB_RECEIVERS), DIR/pids, and
DIR/infra when one did not start. Its contract is in grader/README.md
("The reference receivers").
"""

from __future__ import annotations

import os
import subprocess
from typing import Dict, List

from .settings import Settings, number_text


def _program(settings: Settings, args: List[str]) -> int:
    """rdmalab-receivers ARGS, its waits times the batch's multiplier."""
    env: Dict[str, str] = dict(os.environ, CK_TIMEOUT_MULTIPLIER=number_text(settings.multiplier))
    return subprocess.call([os.path.join(settings.kit, "build/bin/rdmalab-receivers"), *args],
                           stdin=subprocess.DEVNULL, env=env)


def start(settings: Settings, lab: int, slot: int, folder: str, addr: str) -> str:
    """A receiver on ADDR for each that lab LAB's tests declare (make
    grader-kit's build/rubric/labN.receivers), on slot SLOT's ports, their
    files in FOLDER: '' when all listen, else why one did not start."""
    listing = os.path.join(settings.kit, f"build/rubric/lab{lab}.receivers")
    if _program(settings, ["start", listing, str(slot), folder, addr]) == 0:
        return ""
    try:
        with open(os.path.join(folder, "infra")) as f:
            return f.read().split("\n")[0] or "the reference receivers did not start"
    except OSError:
        return "the reference receivers did not start (rdmalab-receivers said why above)"


def stop(settings: Settings, folder: str) -> None:
    """SIGTERM to each receiver of FOLDER, then SIGKILL to what is left after 5 s."""
    _program(settings, ["stop", folder])


def keep_logs(settings: Settings, folder: str, records: str, out: str) -> None:
    """The log of the receiver of each test that did not pass in RECORDS
    (the test program's), as OUT/TEST.receiver.log."""
    _program(settings, ["logs", folder, records, out])
