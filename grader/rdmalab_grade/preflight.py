"""preflight: the reference solution and the stub graded where the class is.

Before a class is graded, the grader grades the kit's reference solution
(solutions/labN) and its stub (labs/labN) of each graded lab as two more
submissions of the same batch: the same mode, sandbox, settings and limits,
named apart (a student's name never holds a "+": intake.safe_name) and
never published as students. The solution must earn every point of the
lab's rubric and the stub none (a point the stub earns is a test that
cannot fail); a lab where either is not so is refused, unless --force, and
then every view marks it (DIR/preflight.json). An ok verdict is kept in the
cache (RDMALAB_CACHE/preflight/KEY.json), keyed by all it depends on (key),
so that the next batch in the same environment does not pay again.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from dataclasses import asdict, dataclass, replace
from typing import Any, Dict, List, Optional, Tuple

from . import publish
from .batch import Submission, read_build, read_json, read_run, write_json
from .model import BadInput
from .settings import Settings

SOLUTION = "preflight+solution"
STUB = "preflight+stub"
NAMES = (SOLUTION, STUB)
# The kit's parts every lab's grading depends on (besides the lab's own:
# labs/labN, solutions/labN, tests/labN); tests/ less the folders below.
COMMON = ("Makefile", "mk", "framework", "receiver", "scripts", "vm", "grader/rdmalab-grade",
          "grader/rdmalab_grade")
TESTS_NOT_GRADING = ("grader", "make", "docs", "unit", "fuzz", "portability", "vm")


def is_preflight(name: str) -> bool:
    return name in NAMES


def sources(kit: str) -> List[Tuple[str, str]]:
    """(name, source) of the two submissions the preflight adds."""
    return [(SOLUTION, os.path.join(kit, "solutions")), (STUB, os.path.join(kit, "labs"))]


def without_solutions(kit: str, labs: Tuple[int, ...]) -> List[int]:
    """The labs of LABS the kit has no solutions/labN for (a handout, a
    platform's bundle): the preflight cannot check them."""
    return [lab for lab in labs if not os.path.isdir(os.path.join(kit, "solutions", f"lab{lab}"))]


@dataclass(frozen=True)
class Verdict:
    """The preflight of one lab: the points the solution and the stub got,
    of MOST; ok when the solution got them all and the stub none; forced:
    graded anyway (--force); why: one line when not ok; checked: when it
    was checked (a reused verdict's, from the cache); reused: from the
    cache."""

    lab: int
    solution: float
    stub: float
    most: float
    ok: bool
    forced: bool = False
    why: str = ""
    checked: str = ""
    reused: bool = False

    def to_json(self) -> Dict[str, object]:
        return asdict(self)


def unchecked(lab: int) -> Verdict:
    """Lab LAB where the kit has no solution to check it with."""
    return Verdict(lab, 0, 0, 0, False, why=f"not checked: the kit has no solutions/lab{lab} (a handout?)",
                   checked=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))


# --- The cache -----------------------------------------------------------------------

def cache_dir() -> str:
    """RDMALAB_PREFLIGHT_CACHE, else the kit's cache (vm/'s too) /preflight."""
    own = os.environ.get("RDMALAB_PREFLIGHT_CACHE")
    if own:
        return own
    top = os.environ.get("RDMALAB_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "rdmalab")
    return os.path.join(top, "preflight")


def _digest(kit: str, parts: Tuple[str, ...], h: Any) -> None:
    """Every file of PARTS (paths in KIT), by path and content, into H."""
    for part in parts:
        top = os.path.join(kit, part)
        if os.path.isfile(top):
            files = [top]
        else:
            files = [os.path.join(d, f) for d, dirs, fs in os.walk(top) for f in fs
                     if "__pycache__" not in d]
        for path in sorted(files):
            h.update(os.path.relpath(path, kit).encode() + b"\0")
            if os.path.islink(path):
                h.update(b"->" + os.readlink(path).encode())
            else:
                with open(path, "rb") as f:
                    h.update(hashlib.sha256(f.read()).digest())


def kit_parts(kit: str, lab: int) -> Tuple[str, ...]:
    """The kit's files lab LAB's grading depends on, as paths in KIT."""
    tests = sorted(f for f in os.listdir(os.path.join(kit, "tests"))
                   if f not in TESTS_NOT_GRADING and not (f.startswith("lab") and f != f"lab{lab}"))
    return COMMON + tuple(os.path.join("tests", f) for f in tests) + (f"labs/lab{lab}", f"solutions/lab{lab}")


def kernel(kit: str, mode: str) -> str:
    """What names the kernel the tests run on: this machine's, and the
    guest's (vm/uml-kernel's key; the VM's cached kernels)."""
    guest = ""
    if mode == "uml":
        p = subprocess.run([os.path.join(kit, "vm/uml-kernel"), "--cached-key"], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        guest = p.stdout.decode().strip()
    elif mode == "vm":
        kernels = os.path.join(os.path.dirname(cache_dir()), "kernel")
        guest = " ".join(sorted(os.listdir(kernels))) if os.path.isdir(kernels) else ""
    return f"{os.uname().release} {mode} {guest}"


def key(s: Settings, lab: int, kernel_id: str) -> str:
    """What lab LAB's verdict depends on, hashed: the kit's files it is
    graded with, where (the mode, the kernels) and how (every limit and the
    multiplier, --unsafe). Not the rules: they only refuse a lab's files,
    and a verdict is kept only when they were checked (keep), so it holds
    with --no-rules too (tests/grader/run-samples' batches reuse it)."""
    h = hashlib.sha256()
    _digest(s.kit, kit_parts(s.kit, lab), h)
    how = {"lab": lab, "kernel": kernel_id, "test_seconds": s.test_seconds, "limits": asdict(s.limits),
           "multiplier": s.multiplier, "unsafe": s.unsafe}
    h.update(json.dumps(how, sort_keys=True).encode())
    return h.hexdigest()[:32]


def cached(keys: Dict[int, str]) -> Dict[int, Verdict]:
    """The verdicts kept for KEYS (lab: key), each marked reused."""
    found = {}
    for lab, k in keys.items():
        doc = read_json(os.path.join(cache_dir(), f"{k}.json"))
        try:
            v = Verdict(**doc) if doc else None
        except TypeError:
            v = None
        if v is not None and v.ok and v.lab == lab:
            found[lab] = replace(v, reused=True)
    return found


def keep(s: Settings, verdicts: List[Verdict], keys: Dict[int, str]) -> None:
    """The ok ones of VERDICTS in the cache, when the rules were checked (a
    refusal is checked again next time: the environment may have been
    mended)."""
    if not s.rules:
        return
    try:
        os.makedirs(cache_dir(), exist_ok=True)
        for v in verdicts:
            if v.ok and v.lab in keys:
                write_json(os.path.join(cache_dir(), f"{keys[v.lab]}.json"), v.to_json())
    except OSError:
        pass  # no cache: the next batch checks again


# --- The verdict -------------------------------------------------------------------

@dataclass(frozen=True)
class Graded:
    """One lab of one of the preflight's submissions: points of most, the
    tests it failed and passed, and why it could not be graded ('')."""

    points: float
    most: float
    failed: Tuple[str, ...]
    passed: Tuple[str, ...]
    trouble: str


def graded(s: Settings, sub: Submission, lab: int, batch_infra: str) -> Graded:
    """Lab LAB of SUB, as publish would put it."""
    reason = publish.outcome_reason(s, sub, batch_infra)
    w = sub.work(s)
    run = read_run(w)
    lab_error = (run.lab_errors.get(str(lab), "") if run else "")
    not_built = read_build(w).not_built.get(str(lab))
    trouble = reason or lab_error or (f"it does not build here: {not_built.splitlines()[0]}" if not_built else "")
    try:
        records = [json.loads(line) for line in publish.lab_records(s, sub, lab).splitlines()]
    except BadInput as e:
        return Graded(0, 0, (), (), trouble or str(e))
    tests = [r for r in records if r["step"] != 0]
    return Graded(sum(r["points"] for r in tests), sum(r["max"] for r in tests),
                  tuple(r["test"] for r in tests if r["result"] != "pass"),
                  tuple(r["test"] for r in tests if r["result"] == "pass"), trouble)


def named(tests: Tuple[str, ...]) -> str:
    """At most five of TESTS, and how many more."""
    more = f" and {len(tests) - 5} more" if len(tests) > 5 else ""
    return ", ".join(tests[:5]) + more


def judge(s: Settings, subs: Dict[str, Submission], lab: int, batch_infra: str, now: str) -> Verdict:
    """Lab LAB's verdict from the preflight's two submissions SUBS."""
    sol = graded(s, subs[SOLUTION], lab, batch_infra)
    stub = graded(s, subs[STUB], lab, batch_infra)
    why = []
    if sol.trouble:
        why.append(f"the solution could not be graded here ({sol.trouble})")
    elif sol.points < sol.most:
        why.append(f"the solution got {sol.points:g}/{sol.most:g} here, failing {named(sol.failed)}")
    if stub.trouble:
        why.append(f"the stub could not be graded here ({stub.trouble})")
    elif stub.points > 0:
        why.append(f"the stub earned {stub.points:g} (tests that cannot fail: {named(stub.passed)})")
    return Verdict(lab, sol.points, stub.points, sol.most, not why, why="; ".join(why), checked=now)


def said(v: Verdict, out: str) -> str:
    """The grader's line for V."""
    if v.ok:
        how = f"reused, checked {v.checked} in this environment" if v.reused else "checked now"
        return (f"rdmalab-grade: preflight: Lab {v.lab}: the solution got {v.most:g}/{v.most:g}, "
                f"the stub 0 ({how})")
    where = os.path.join(out, ".work", SOLUTION, "results", f"lab{v.lab}")
    if v.forced:
        return f"rdmalab-grade: preflight: Lab {v.lab} graded anyway (--force), every view marks it: {v.why}"
    return (f"rdmalab-grade: preflight: Lab {v.lab} not graded: {v.why}; the environment or the kit is "
            "broken here: mend it and grade again, or pass --force to grade it anyway, every view then "
            f"marking it (see {where}/steps.out, and make doctor)")


# --- DIR/preflight.json ----------------------------------------------------------------

def write(s: Settings, verdicts: List[Verdict]) -> None:
    """DIR/preflight.json: the kit, the mode and each lab's verdict, those
    of VERDICTS replacing the labs' earlier ones (labs not graded now keep
    theirs), written whole."""
    path = os.path.join(s.out, "preflight.json")
    earlier: Optional[Dict[str, object]] = read_json(path)
    labs = {v.lab: v.to_json() for v in verdicts}
    kept = earlier.get("labs") if earlier else None
    for entry in kept if isinstance(kept, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("lab"), int) and entry["lab"] not in labs:
            labs[entry["lab"]] = entry
    doc = {"kit": s.kit_commit, "mode": s.mode, "made": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "labs": [labs[lab] for lab in sorted(labs)]}
    tmp = path + ".new"
    with open(tmp, "w") as f:
        json.dump(doc, f)
        f.write("\n")
    os.replace(tmp, path)


# --- A batch's preflight -----------------------------------------------------------

@dataclass(frozen=True)
class Plan:
    """What a batch's preflight does. wanted: the batch is a class (the
    preflight checks its labs); force: --force; keys: each checkable lab's
    cache key; reused: the verdicts found in the cache; unchecked: the labs
    the kit has no solution of."""

    wanted: bool = False
    force: bool = False
    keys: Tuple[Tuple[int, str], ...] = ()
    reused: Tuple[Verdict, ...] = ()
    unchecked: Tuple[int, ...] = ()

    @property
    def runs(self) -> bool:
        """Whether the two submissions join the batch: a lab is not cached."""
        return len(self.reused) < len(self.keys)


def plan(s: Settings, wanted: bool, force: bool) -> Plan:
    """The preflight of a batch with settings S (WANTED: a class)."""
    if not wanted:
        return Plan()
    missing = without_solutions(s.kit, s.labs)
    kernel_id = kernel(s.kit, s.mode)
    keys = {lab: key(s, lab, kernel_id) for lab in s.labs if lab not in missing}
    return Plan(True, force, tuple(keys.items()), tuple(cached(keys).values()), tuple(missing))


def refusal_of_unchecked(p: Plan) -> List[str]:
    """The lines that refuse the labs P cannot check (none with --force)."""
    if p.force:
        return []
    return [f"rdmalab-grade: preflight: Lab {lab} not graded: the kit has no solutions/lab{lab} (a handout or a "
            "platform's bundle), so nothing checks that its tests can pass here: grade the class from the "
            f"kit with its solutions, or pass --force (every view then marks Lab {lab})" for lab in p.unchecked]


def verdicts(s: Settings, p: Plan, subs: Dict[str, Submission], batch_infra: str) -> List[Verdict]:
    """Every graded lab's verdict, by lab: reused, checked now (and kept
    when ok), or unchecked; each not ok marked forced with --force."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    keys = dict(p.keys)
    reused = {v.lab: v for v in p.reused}
    fresh = [judge(s, subs, lab, batch_infra, now) for lab in keys if lab not in reused]
    keep(s, fresh, keys)
    every = {v.lab: v for v in [*reused.values(), *fresh, *(unchecked(lab) for lab in p.unchecked)]}
    return [replace(v, forced=p.force and not v.ok) for _, v in sorted(every.items())]
