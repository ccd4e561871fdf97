"""run: the step tests where RDMA works, and the guests that give it.

Inside (grader/rdmalab-grade --inside: in a guest the grader booted, or
natively) the batch's settings come from its one file (batch.py); each
submission is built there unless the grader's machine built it, then each
lab that built has its tests run as the submission's uid, beside the
reference receivers its tests declare. On the grader's machine,
run_environment boots the guests: one User-Mode Linux guest per
submission, JOBS at once, or one guest (or native run) for the batch.
"""

from __future__ import annotations

import glob
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from typing import Callable, List, Optional, Tuple

from . import receivers, sandbox
from .batch import Batch, Log, RunOutcome, Submission, read_build, read_run, write_json, write_run
from .build import build_all, test_programs
from .settings import Limits, Settings, number_text

# The time the calibration's work took in User-Mode Linux on our 2-core
# build machines, where the limits were set.
CALIBRATION_MS = 400
PROGRESS = "rdmalab-grade: "


def environment_name() -> str:
    return os.environ.get("RDMALAB_ENV") or "native"


# --- Inside: where RDMA works ---------------------------------------------------

def inside(work: str, one: Optional[Tuple[str, int, int]]) -> int:
    """The builds and tests of the batch in WORK: every submission, JOBS at
    once, or ONE (name, slot, k) in a guest of its own."""
    batch = Batch.read(work)
    box = sandbox.probe(batch.settings.kit)
    if one is not None:
        name, slot, k = one
        w = os.path.join(work, name)
        # Not ready here: this submission's reason, not the batch's (other
        # guests share the batch's folder).
        settings, why = batch_ready(batch.settings, box)
        if why:
            write_run(w, RunOutcome(infra=why))
        else:
            run_one(settings, box, Submission(name, "", k, settings.student_uid(k)), slot)
        return 0
    settings, why = batch_ready(batch.settings, box)
    if why:
        write_json(os.path.join(batch.settings.batch_dir, "run.json"), {"infra": why})
        return 0
    for_each(batch.submissions, settings.jobs,
             lambda sub, slot: run_one(settings, box, sub, slot))
    return 0


def for_each(subs: List[Submission], jobs: int, grade: Callable[[Submission, int], None]) -> None:
    """GRADE each of SUBS, JOBS at once: slot k takes the next submission
    left when it is free, so that a few slow ones (hangs, timeouts) do not
    hold up the submissions behind them in one slot."""
    queue = list(subs)
    lock = threading.Lock()

    def slot(k: int) -> None:
        while True:
            with lock:
                if not queue:
                    return
                sub = queue.pop(0)
            try:
                grade(sub, k)
            except Exception as e:  # one submission's failure is not the batch's
                traceback.print_exc()
                sub.infra = f"the grader failed on it: {e}"

    threads = [threading.Thread(target=slot, args=(k,)) for k in range(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def batch_ready(settings: Settings, box: sandbox.Sandbox) -> Tuple[Settings, str]:
    """Before the first test: the device, its nodes open to the students'
    uids, and the sandbox whole (or --unsafe). The settings, calibrated;
    and '' or why the batch cannot be tested here."""
    env = environment_name()
    if not os.environ.get("RDMALAB_DEVICE") or not os.environ.get("RDMALAB_ADDR"):
        return settings, "no RDMA device (RDMALAB_DEVICE/RDMALAB_ADDR unset)"
    if sandbox.isolated() and not device_nodes_open(settings.uid_base):
        return settings, ("the RDMA device nodes (/dev/infiniband) are not open to unprivileged users: "
                          "make them mode 666 as Debian's udev rules do")
    refusal = box.refusal(f"in the RDMA environment ({env})", settings.unsafe)
    if refusal:
        return settings, refusal
    if box.missing:
        print(f"rdmalab-grade: --unsafe: building and testing without {box.missing} ({env}); "
              "every report says so", file=sys.stderr, flush=True)
    return calibrate(settings), ""


def device_nodes_open(uid: int) -> bool:
    """Debian's udev rules let everyone open the verbs devices; the VM (and
    a container given its nodes) has no udev: open them as those rules do,
    and check an unprivileged UID can."""
    for node in glob.glob("/dev/infiniband/uverbs*") + ["/dev/infiniband/rdma_cm"]:
        try:
            os.chmod(node, 0o666)
        except OSError:
            pass
    return sandbox.can(uid, ["sh", "-c", "[ -r /dev/infiniband/rdma_cm ] && [ -w /dev/infiniband/rdma_cm ]"])


def calibrate(settings: Settings) -> Settings:
    """The limits follow this environment's measured speed. It times a fixed
    piece of work (the SHA-256 of 64 MiB of zeros, read in 4 MiB blocks: CPU
    bound, as rxe and the tests are, with few system calls, which cost
    User-Mode Linux most and vary most there; the same pipeline the
    reference was measured with) three times and keeps the fastest, so a
    neighbour's burst does not count as this environment's speed. Where it
    takes longer than CALIBRATION_MS, every limit stretches as much: from 1
    (never shorter) to 8 (a QEMU VM in software emulation)."""
    timings = []
    for _ in range(3):
        t0 = time.monotonic()
        subprocess.run("dd if=/dev/zero bs=4M count=16 status=none | sha256sum >/dev/null", shell=True)
        timings.append(int((time.monotonic() - t0) * 1000))
    best = min(timings)
    factor = math.floor(min(max(best / CALIBRATION_MS, 1), 8) * 10 + 0.5) / 10
    settings = settings.scaled_by(factor)
    print(f"rdmalab-grade: the calibration took {best} ms here, the best of 3 ({CALIBRATION_MS} ms where "
          f"the limits were set): limits times {number_text(settings.multiplier)}", flush=True)
    return settings


def run_one(settings: Settings, box: sandbox.Sandbox, sub: Submission, slot: int) -> None:
    """SUB built (unless the grader's machine built it), then the graded
    tests of each lab that built, as its uid, in slot SLOT (which picks the
    receivers' ports): its records in WORK/NAME/results, its run.json."""
    w = sub.work(settings)
    outcome = RunOutcome(kernel=os.uname().release, multiplier=settings.multiplier)
    if box.missing:
        outcome.unsafe = f"where its code ran ({environment_name()}): {box.missing}"
    run = tempfile.mkdtemp(prefix="rdmalab-run.", dir="/tmp")
    sandbox.own_folder(sub.uid, run)
    if settings.built_here:
        os.symlink(os.path.join(w, "tree"), os.path.join(run, "tree"))
        built = read_build(w)
    else:
        subprocess.run(["cp", "-a", os.path.join(w, "tree"), os.path.join(run, "tree")])
        built = build_all(settings, box, w, sub.uid, os.path.join(run, "tree"))
    started = time.monotonic()
    outcome.infra = built.infra
    for lab in settings.labs if not built.infra else ():
        # A lab that did not build has no tests to run: its records say so (publish.py).
        if str(lab) in built.not_built:
            continue
        outcome.infra, failed = run_lab(settings, box, sub, lab, run, slot)
        if failed:
            outcome.lab_errors[str(lab)] = failed
        if outcome.infra:
            break
    sandbox.remove(run)
    sandbox.clean_student(sub.uid)
    outcome.seconds = int(time.monotonic() - started)
    outcome.graded = not outcome.infra
    write_run(w, outcome)


def run_lab(settings: Settings, box: sandbox.Sandbox, sub: Submission, lab: int, run: str,
            slot: int) -> Tuple[str, str]:
    """The graded tests of lab LAB of SUB, as its uid, from its programs
    (built in RUN/tree) copied into RUN, beside the receivers its tests
    declare on slot SLOT's ports. The test program's parent writes the
    records to a file the grader opened (--results-fd), which no process
    that runs student code holds; its output goes to another. Both are in
    W/results/labN. ('', failed) when it ran, FAILED '' or why the grader
    failed the lab (grader_failed); else (why not, '') (a receiver did not
    start)."""
    t0 = time.monotonic()
    w = sub.work(settings)
    out = os.path.join(w, "results", f"lab{lab}")
    os.makedirs(os.path.join(run, "build/labs"), exist_ok=True)
    os.makedirs(out, exist_ok=True)
    programs = os.path.join(run, "tree/build/labs", f"lab{lab}")
    subprocess.run(["cp", "-a", programs, os.path.join(run, "build/labs/")])
    sandbox.give_student(sub.uid, os.path.join(run, "build"))
    try:
        rdir = tempfile.mkdtemp(prefix="rdmalab-receivers.", dir="/tmp")
        os.chmod(rdir, 0o755)
    except OSError:
        return "could not make a folder for the receivers in /tmp", ""
    why = failed = ""
    try:
        why = receivers.start(settings, lab, slot, rdir, os.environ.get("RDMALAB_ADDR", ""))
        if not why:
            rc = run_tests(settings, box, sub.uid, lab, run, out, rdir)
            sandbox.end_student(sub.uid)
            failed = grader_failed(settings, lab, rc, os.path.join(out, "steps.jsonl"))
    finally:
        receivers.stop(settings, rdir)
    records = os.path.join(out, "steps.jsonl")
    if not why:
        receivers.keep_logs(settings, rdir, records, out)
    sandbox.remove(rdir)
    if why:
        return why, ""
    print(progress(sub.name, lab, records, time.monotonic() - t0), file=sys.stderr, flush=True)
    return "", failed


def count_lines(path: str) -> int:
    """The lines of PATH that are not blank (0 when it is not there)."""
    try:
        with open(path, "rb") as f:
            return sum(1 for line in f if line.strip())
    except OSError:
        return 0


def grader_failed(settings: Settings, lab: int, rc: int, records: str) -> str:
    """'' when lab LAB's test program ended as it does whatever the
    student's code does: status 0 or 1, a record for each test of its
    rubric (its parent, which runs no student code, decides every result
    and writes them all at its end: a crash or a hang of the student's code
    is a failed test there). Else why the grader failed it, one line: the
    program ran out of the grader's limit (124), could not be started in
    the sandbox (125 to 127), failed itself (2: its message is in its
    output), was killed by a signal (the harness crashed: no student code
    runs in it, and the rules leave the student's code no way to signal
    it), or wrote fewer records than its rubric has tests. With --no-rules
    the student's code could kill it: never the grader's failure then."""
    if not settings.rules:
        return ""
    rubric = count_lines(os.path.join(settings.kit, "build/rubric", f"lab{lab}.jsonl"))
    wrote = count_lines(records)
    output = f"logs/lab{lab}/steps.out"
    if rc < 0 or rc > 128:
        sig = -rc if rc < 0 else rc - 128
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        how = f"was killed by {name}"
    elif rc == 124:
        how = f"ran out of the grader's limit ({Limits(settings).lab_tests} s for the whole lab)"
    elif rc in (125, 126, 127):
        how = f"could not be started in the sandbox (exit {rc})"
    elif rc not in (0, 1):
        how = f"failed itself (exit {rc}: its message is at the end of {output})"
    elif wrote < rubric:
        how = f"ended (exit {rc}) with {wrote} records of the rubric's {rubric} tests"
    else:
        return ""
    return (f"Lab {lab}'s test program {how}, {wrote} of {rubric} records written: the grader failed, "
            f"not the student's code (see {output}); grade it again")


def run_tests(settings: Settings, box: sandbox.Sandbox, uid: int, lab: int, run: str, out: str,
              rdir: str) -> int:
    """Lab LAB's test program, as UID: its records to OUT/steps.jsonl on a
    descriptor it is given, its output to OUT/steps.out. From the kit's
    folder, as make check runs it: a crash report names the files from
    there. Its exit status (as_student's)."""
    kit = settings.kit
    env = dict(os.environ, RDMALAB_RECEIVER=os.path.join(kit, "build/bin/rdmalab-receiver"),
               RDMALAB_RECEIVERS=os.path.join(rdir, "table"), RDMALAB_TEST_TIMEOUT=str(settings.test_seconds),
               CK_TIMEOUT_MULTIPLIER=number_text(settings.multiplier))
    e = os.environ
    with open(os.path.join(out, "steps.out"), "wb") as output:
        output.write((f"rdmalab-grade: lab {lab} on {e.get('RDMALAB_DEVICE') or 'no device'} (GID index "
                      f"{e.get('RDMALAB_GID_INDEX') or 'none'}, {environment_name()})\n").encode())
        output.flush()
        with open(os.path.join(out, "steps.jsonl"), "wb") as records:
            fd = records.fileno()
            program = test_programs(lab, os.path.join(run, f"build/labs/lab{lab}/tests"))
            return sandbox.as_student(settings, box, uid, Limits(settings).lab_tests,
                                      [program, "--results-fd", str(fd)], out=output, cwd=kit, env=env,
                                      pass_fds=(fd,))


def progress(name: str, lab: int, records: str, seconds: float) -> str:
    """The line the grader shows as a lab's tests end: passed, failed,
    skipped, points, and the seconds they took."""
    rs = []
    try:
        with open(records, errors="replace") as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if isinstance(r, dict):
                    rs.append(r)
    except OSError:
        pass

    def n(result: str) -> int:
        return sum(1 for r in rs if r.get("result") == result)

    points = sum(r.get("points") or 0 for r in rs)
    most = sum(r.get("max") or 0 for r in rs)
    tenths = math.floor(seconds * 10 + 0.5) / 10
    return (f"rdmalab-grade: {name}: lab {lab}: {n('pass')} passed, {n('FAIL')} failed, {n('skipped')} "
            f"skipped, {number_text(points)}/{number_text(most)} points, tests in {number_text(tenths)} s")


# --- On the grader's machine: the guests -----------------------------------------

def run_environment(batch: Batch, log: Log) -> str:
    """The batch's builds and tests where RDMA works: '' when the
    environment ran (each submission's outcome is its own), else why the
    whole batch could not be tested."""
    s = batch.settings
    if s.mode == "uml":
        why = guest_user(s)
        if why:
            return why
        for_each(batch.submissions, s.jobs, lambda sub, slot: grade_in_guest(s, sub, slot, log))
        return ""
    logfile = os.path.join(s.batch_dir, "rdma.log")
    seconds = Limits(s).environment(len(batch.submissions))
    rc = run_rdma(s, ["--mode", s.mode, "--rw", s.work, "--timeout", str(seconds)], ["--inside", s.work], logfile, log)
    inside_said = read_json_infra(os.path.join(s.batch_dir, "run.json"))
    if rc != 0:
        return inside_said or f"the RDMA environment failed: {why_guest_failed(logfile)}"
    return inside_said


def read_json_infra(path: str) -> str:
    """The reason a batch's run.json gives, or ''."""
    try:
        with open(path) as f:
            return json.load(f).get("infra") or ""
    except (OSError, ValueError, AttributeError):
        return ""


def run_rdma(settings: Settings, options: List[str], inside_args: List[str], logfile: str, log: Log) -> int:
    """vm/run-rdma OPTIONS -- grader/rdmalab-grade INSIDE_ARGS: its output
    whole in LOGFILE, its progress (the grader's own lines) shown."""
    kit = settings.kit
    cmd = [os.path.join(kit, "vm/run-rdma"), *options, "--",
           os.path.join(kit, "grader/rdmalab-grade"), *inside_args]
    with open(logfile, "ab") as whole:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert p.stdout is not None
        for line in p.stdout:
            whole.write(line)
            whole.flush()
            text = line.decode(errors="replace")
            if text.startswith(PROGRESS):
                log.say(text)
        return p.wait()


def guest_user(settings: Settings) -> str:
    """As root here, each guest runs as a host user of its own (uid
    uid_base - 1, no student's), whose root can write on this machine only
    what that user owns: the work folder and each submission's results.
    Not root here, the guest runs as you. '' or why the guests cannot run."""
    if not sandbox.isolated():
        return ""
    uid, work, batch = settings.guest_uid, settings.work, settings.batch_dir
    for path in [work, batch] + glob.glob(os.path.join(glob.escape(batch), "*")):
        os.chown(path, uid, uid)
    for w in glob.glob(os.path.join(glob.escape(work), "*", "")):
        os.chown(w, uid, -1)  # the group stays the submission's (sandbox.own_folder)
        sandbox.chown_tree(os.path.join(w, "results"), uid, uid)
    if not sandbox.can(uid, ["test", "-w", work]):
        return (f"the results folder {settings.out} cannot be reached by the grader's guest user (uid {uid}): "
                "make every folder above it traversable (mode 711 or 755)")
    return ""


def guest_options(settings: Settings) -> List[str]:
    """vm/run-rdma's options for a guest that grades: as the guest user, or,
    not root here, as guest root (it can still write only what you can)."""
    if sandbox.isolated():
        return ["--host-uid", str(settings.guest_uid)]
    return ["--guest-root"]


def grade_in_guest(settings: Settings, sub: Submission, slot: int, log: Log) -> None:
    """SUB graded in a User-Mode Linux guest of its own. A guest that died
    or hung (exit 2 or 125: seen under load, not caused by the submission)
    gets one more boot from a clean results folder; a timeout (124) does
    not, as a second one would double it."""
    w = sub.work(settings)
    logfile = os.path.join(settings.batch_dir, f"{sub.name}.rdma.log")
    for attempt in (1, 2):
        rc = run_rdma(settings, ["--mode", "uml", *guest_options(settings), "--rw", settings.work,
                                 "--timeout", str(Limits(settings).guest)],
                      ["--inside", settings.work, sub.name, str(slot), str(sub.k)], logfile, log)
        if rc == 0:
            return
        done = read_run(w)
        if attempt == 1 and rc in (2, 125) and not (done and done.graded):
            why = why_guest_failed(logfile)
            log.say(f"rdmalab-grade: {sub.name}: the guest failed (exit {rc}: {why}): grading it again")
            with open(logfile, "a") as f:
                f.write(f"rdmalab-grade: --- the guest failed (exit {rc}); a second boot ---\n")
            guest_event("retried", f"rdmalab-grade: {sub.name}: the guest failed (exit {rc}): booted again")
            sandbox.remove(os.path.join(w, "run.json"))
            for p in glob.glob(os.path.join(glob.escape(w), "results", "*")) + \
                    glob.glob(os.path.join(glob.escape(w), "results", ".[!.]*")):
                sandbox.remove(p)
            continue
        sub.infra = f"the RDMA environment failed: {why_guest_failed(logfile)}"
        return


def why_guest_failed(logfile: str) -> str:
    """The line of a guest's log that says why it failed (not the probe's
    progress line, which says nothing of an outcome)."""
    try:
        with open(logfile, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return ""
    said = [l for l in lines if re.match(r"(uml-run|rxe-run|run-rdma|uml-probe|uml-kernel): ", l)
            and not l.startswith("uml-probe: booting ")]
    if said:
        return said[-1]
    rest = [l for l in lines if l.strip() and not l.startswith("rdmalab-grade: --- ")]
    return rest[-1] if rest else ""


def guest_event(kind: str, what: str) -> None:
    """Record that a guest was booted again (scripts/lib.sh's
    rl_guest_event): a line in the file RDMALAB_GUEST_EVENTS names, which
    make test shows at its end."""
    path = os.environ.get("RDMALAB_GUEST_EVENTS")
    if path:
        try:
            with open(path, "a") as f:
                f.write(f"{kind}\t{what}\n")
        except OSError:
            pass
