"""build: a submission's labs built as the student, each on its own.

Each lab is built with the kit's flags (-Werror included) in the sandbox,
as the submission's uid, so a compile error costs that lab only; then its
rules are checked (scripts/lab-rules). Runs where the tests run, or on the
grader's machine when it makes the whole sandbox too (Settings.built_here).
"""

from __future__ import annotations

import os
import re
import time

from . import sandbox
from .batch import BuildOutcome, write_build
from .settings import Limits, Settings

# The lines of a build's log that say why it failed.
ERROR_LINE = re.compile(r": (fatal )?error:|undefined reference|\*\*\* ")


def test_programs(lab: int, folder: str) -> str:
    """Lab LAB's test program, as built in FOLDER."""
    return os.path.join(folder, "steps")


def build_all(settings: Settings, box: sandbox.Sandbox, w: str, uid: int, tree: str) -> BuildOutcome:
    """The submission in W built in TREE (W/tree, or a copy of it where the
    tests run), as UID: W's build logs and build.json, also returned."""
    started = time.monotonic()
    outcome = BuildOutcome()
    if sandbox.isolated():
        sandbox.chown_tree(os.path.join(tree, "build/labs"), uid, uid, folders_only=True)
    for lab in settings.labs:
        why = build_lab(settings, box, w, uid, tree, lab)
        if why.startswith("could not check"):
            outcome.infra = why
        elif why:
            outcome.not_built[str(lab)] = why
        sandbox.end_student(uid)
    # Its builds are done: not even its own uid may write its tree any more
    # (its tests could change the programs of the labs after). They run
    # from a copy (run.run_lab).
    if sandbox.isolated():
        sandbox.chown_tree(os.path.join(tree, "build/labs"), 0, 0)
    outcome.seconds = int(time.monotonic() - started)
    write_build(w, outcome)
    return outcome


def build_lab(settings: Settings, box: sandbox.Sandbox, w: str, uid: int, tree: str, lab: int) -> str:
    """Lab LAB built in TREE, its log W/build-labN.log: '' when it built
    and keeps its rules, else why not."""
    make = ["make", "--no-print-directory", "LAB_TREES=labs",
            "LABS=" + " ".join(str(n) for n in settings.all_labs)]
    targets = [f"build/labs/lab{lab}/lab{lab}", test_programs(lab, f"build/labs/lab{lab}/tests")]
    log = os.path.join(w, f"build-lab{lab}.log")
    limits = Limits(settings)
    with open(log, "wb") as out:
        rc = sandbox.as_student(settings, box, uid, limits.build, make + targets, out=out, cwd=tree)
    if rc != 0:
        with open(log, errors="replace") as f:
            lines = [l.rstrip("\n") for l in f if ERROR_LINE.search(l)][:20]
        return "\n".join(lines) or \
            f"the build failed without a compiler message (timed out?): see logs/build-lab{lab}.log"
    if not settings.rules:
        return ""
    with open(log, "ab") as out:
        rc = sandbox.as_student(settings, box, uid, limits.rules, make[:2] + ["-s"] + make[2:] +
                                ["rules", f"LAB={lab}"], out=out, cwd=tree)
    return refusal(log, lab) if rc != 0 else ""


def refusal(log: str, lab: int) -> str:
    """Why lab LAB scores 0: the rules it breaks, from its log (the class
    summary flags it); when no line says which, the rules could not be
    checked, and the submission is ungradable instead."""
    with open(log, errors="replace") as f:
        lines = [l.rstrip("\n") for l in f]
    broken = [l for l in lines if l.startswith(f"lab{lab}/")][:20]
    if not broken:
        last = [l for l in lines if not l.startswith("make")][-1:] or [""]
        return f"could not check Lab {lab}'s rules: {last[0]}"
    return (f"refused: Lab {lab} breaks the rules a lab's files must keep, so it scores 0 (docs/rules.md):\n"
            + "\n".join(broken))
