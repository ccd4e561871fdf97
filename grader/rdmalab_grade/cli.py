"""cli: grader/rdmalab-grade's command line, and the batch from end to end.

main() reads the options into one Settings, lays the batch out, has its
submissions taken (intake.py) and maybe built (build.py), tested where RDMA
works (run.py) and published (publish.py). With --inside it is the part
that runs where RDMA works, reading the batch's settings from its file.
A class (--class, or more than one submission) is preflighted first
(preflight.py): the kit's solution and stub of each graded lab, graded as
two more submissions of the batch, must get all and none of its points.

Exit statuses:
  0  every submission was graded (with --force, refused labs too, marked);
  1  some submissions are ungradable (the grader or its environment could
     not grade them at all: each says why; an earlier result is kept);
  2  a usage error, or the sandbox cannot be made (and no --unsafe);
  3  the preflight refused a lab (its solution missed a point, its stub
     earned one, or the kit has no solution to check it with): one line
     each, nothing published; mend it, or --force;
  4  graded, but the grader failed some lab of some submission (its test
     program crashed, was killed or ran out of the grader's limit: never
     what the student's code can cause): submission.json's lab_errors and
     a line each say which; grade those again.
When two apply, the lower one (but 0) is the status.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import List, NoReturn, Tuple

from . import course, intake, preflight, publish, run, sandbox, uploads
from .batch import Batch, Log, Submission
from .build import build_all, test_programs
from .settings import BadSetting, Settings, StudentLimits, from_environment, graded_text, kit_commit

PROG = "rdmalab-grade"
GRADED, UNGRADABLE, USAGE, REFUSED, GRADER_FAILED = 0, 1, 2, 3, 4


class Stop(Exception):
    """The grader stops: STATUS, after MESSAGE on standard error."""

    def __init__(self, status: int, message: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def die(message: str) -> NoReturn:
    raise Stop(USAGE, f"{PROG}: {message}")


@dataclass
class Options:
    """The command line as given, before it is checked."""

    out: str = "grade-results"
    jobs: str = "1"
    mode: str = "auto"
    whole_class: bool = False
    name: str = ""
    labs: str = ""
    source: str = ""
    rules: bool = True
    class_pages: bool = True
    unsafe: bool = False
    submitted: str = ""
    submitted_from: str = ""
    class_views: List[Tuple[str, str]] = field(default_factory=list)
    force: bool = False
    preflight_only: bool = False
    preflight: bool = True
    submissions: List[str] = field(default_factory=list)


def kit_dir() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv: List[str], usage: str) -> int:
    """The grader: ARGV its arguments, USAGE its help (the entry's header)."""
    try:
        if argv[:1] == ["--inside"]:
            return inside_main(argv[1:])
        if argv[:1] == ["--route"]:
            return uploads.main(kit_dir(), argv[1:])
        opts = parse(argv, usage, kit_dir())
        batch, box, lowered, plan = settle(opts, usage, kit_dir())
        return grade(batch, box, lowered, plan)
    except Stop as stop:
        if stop.message:
            print(stop.message, file=sys.stderr)
        return stop.status


# The options that take a value: the field of Options it sets, and the line
# said when the value is missing.
VALUED = {
    "--lab": ("labs", "--lab needs N[,N...]"),
    "-j": ("jobs", "-j needs a number"),
    "-o": ("out", "-o needs a folder"),
    "--name": ("name", "--name needs a name"),
    "--source": ("source", "--source needs a text"),
    "--mode": ("mode", "--mode needs auto, native, uml or vm"),
    "--submitted": ("submitted", "--submitted needs a time, YYYY-MM-DDTHH:MM:SSZ"),
    "--submitted-from": ("submitted_from", "--submitted-from needs the platform's metadata file"),
}
# The switches: the field of Options each sets, and to what.
SWITCHES = {
    "--class": ("whole_class", True),
    "--no-rules": ("rules", False),
    "--no-class": ("class_pages", False),
    "--unsafe": ("unsafe", True),
    "--force": ("force", True),
    "--no-preflight": ("preflight", False),
    "--preflight-only": ("preflight_only", True),
}


def parse(argv: List[str], usage: str, kit: str) -> Options:
    """The options, as bash's case loop read them: the first argument that
    is not an option starts the submissions."""
    o = Options(mode=os.environ.get("RDMALAB_MODE") or "auto")
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in VALUED:
            name, missing = VALUED[a]
            if i + 1 >= len(argv):
                die(missing)
            setattr(o, name, argv[i + 1])
            i += 1
        elif a in SWITCHES:
            setattr(o, *SWITCHES[a])
        elif a in course.OPTIONS:
            if i + 1 >= len(argv):
                die(f"{a} needs a value (see -h)")
            o.class_views.append((a, argv[i + 1]))
            i += 1
        elif re.match(r"-j[0-9]", a):
            o.jobs = a[2:]
        elif a in ("-h", "--help", "--manifest-files", "--name-of"):
            answer_and_stop(a, argv[i + 1:], usage, kit)
        elif a == "--":
            i += 1
            break
        elif a.startswith("-"):
            die(f"unknown option {a} (run with -h for help)")
        else:
            break
        i += 1
    o.labs = o.labs.replace(",", " ")
    o.submissions = argv[i:]
    return o


def answer_and_stop(option: str, rest: List[str], usage: str, kit: str) -> None:
    """The options that answer a question and grade nothing: -h, the files
    of a lab a submission may give, the names paths would be graded as."""
    if option in ("-h", "--help"):
        print(usage, end="")
    elif option == "--manifest-files":
        lab = rest[0] if rest else ""
        files = os.path.join(kit, "labs", f"lab{lab}", "FILES")
        if not lab or not os.path.isfile(files):
            die("--manifest-files needs a lab of the kit with a labs/labN/FILES (make stubs writes it)")
        with open(files) as f:
            sys.stdout.write("".join(line for line in f if not line.startswith("#")))
    else:
        for path in rest:
            print(intake.safe_name(path))
    raise Stop(0)


def kit_labs(kit: str) -> Tuple[int, ...]:
    """Every lab of the kit (labs/labN), in order."""
    return tuple(sorted(int(m.group(1)) for d in os.listdir(os.path.join(kit, "labs"))
                        for m in [re.fullmatch(r"lab([0-9]+)", d)] if m))


def check_labs(opts: Options, kit: str, all_labs: Tuple[int, ...]) -> Tuple[int, ...]:
    words = opts.labs.split() or [str(n) for n in all_labs]
    for lab in words:
        if not (os.path.isdir(os.path.join(kit, "tests", f"lab{lab}"))
                and os.path.isfile(os.path.join(kit, "labs", f"lab{lab}", "FILES"))):
            die(f"--lab {lab}: the kit has labs {' '.join(str(n) for n in all_labs)}")
    return tuple(int(lab) for lab in words)


def where_rdma_runs(kit: str, mode: str) -> str:
    """The mode, resolved once, here: where User-Mode Linux cannot run, its
    line says why and what the QEMU VM costs."""
    p = subprocess.run([os.path.join(kit, "vm/run-rdma"), "--mode", mode, "--print-mode"],
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    where = p.stdout.decode().strip()
    if p.returncode != 0 or not where:
        die(f"cannot tell where RDMA runs (vm/run-rdma --mode {mode})")
    return where


def settle(opts: Options, usage: str, kit: str) -> Tuple[Batch, sandbox.Sandbox, str, preflight.Plan]:
    """The options checked, the batch's folders made and its settings
    decided: the batch, this machine's sandbox, the limits lowered to
    the grader's own (prlimit's names, each with a leading space), and its
    preflight (the batch then holds its two submissions last)."""
    if opts.preflight_only and (opts.submissions or not opts.preflight or opts.force):
        die("--preflight-only grades no submission and is the preflight: give no submission, --no-preflight or --force")
    if not opts.submissions and not opts.preflight_only:
        print(f"{PROG}: no submission given", file=sys.stderr)
        print(usage, end="", file=sys.stderr)
        raise Stop(2)
    if not opts.jobs.isdigit() or int(opts.jobs) == 0:
        die(f"-j {opts.jobs}: give a number of submissions to grade at once, 1 or more")
    if opts.mode not in ("auto", "native", "uml", "vm"):
        die(f"--mode {opts.mode}: give auto, native, uml or vm")
    all_labs = kit_labs(kit)
    labs = check_labs(opts, kit, all_labs)
    if opts.name and (len(opts.submissions) != 1 or opts.whole_class):
        die("--name is for one submission, not a class")
    if (opts.submitted or opts.submitted_from) and (len(opts.submissions) != 1 or opts.whole_class):
        die("--submitted is for one submission, not a class (a class's times are its files')")
    if opts.submitted and opts.submitted_from:
        die("--submitted and --submitted-from: give one")
    try:
        if opts.submitted:
            opts.submitted = course.any_utc_time(opts.submitted, "--submitted")
        if opts.submitted_from:
            opts.submitted = course.submitted_in(opts.submitted_from)
        course.class_options(opts.class_views)
    except course.BadInput as e:
        die(str(e))
    try:
        env = from_environment(dict(os.environ))
    except BadSetting as e:
        die(str(e))
    # The students' code is built and tested where RDMA runs: in a guest,
    # whose root makes the sandbox there; natively, here, which must then.
    where = where_rdma_runs(kit, opts.mode)
    box = sandbox.probe(kit)
    if where == "native":
        refusal = box.refusal("on this machine", opts.unsafe)
        if refusal:
            die(refusal)
    out = make_folders(opts.out)
    named = list_submissions(opts) if not opts.preflight_only else []
    limits, lowered = own_limits(env.pop("limits"))
    settings = Settings(
        kit=kit, out=out, labs=labs, all_labs=all_labs, jobs=int(opts.jobs), mode=where,
        graded=graded_text(labs, all_labs), source=opts.source, rules=opts.rules,
        class_pages=opts.class_pages and not opts.preflight_only, unsafe=opts.unsafe, kit_commit=kit_commit(kit),
        submitted=opts.submitted, class_views=tuple(opts.class_views),
        # Where this machine makes the whole sandbox too, the builds are
        # made here, before the guests boot: a build in User-Mode Linux
        # takes ten times as long (11 s against 1 s for Lab 3), and guests
        # building at once slow each other's tests.
        built_here=where == "native" or not box.missing, limits=limits, **env)
    wanted = opts.preflight and (opts.whole_class or len(named) > 1 or opts.preflight_only)
    plan = preflight.plan(settings, wanted, opts.force)
    refused = preflight.refusal_of_unchecked(plan)
    if refused:
        raise Stop(REFUSED, "\n".join(refused))
    named += preflight.sources(kit) if plan.runs else []
    subs = [Submission(n, src, k, settings.student_uid(k)) for k, (n, src) in enumerate(named)]
    batch = Batch(settings, subs)
    try:
        batch.write()
    except OSError:
        die(f"cannot write {os.path.join(settings.batch_dir, 'batch.json')}")
    return batch, box, lowered, plan


def make_folders(out: str) -> str:
    """The results folder DIR (made), and its work folder made anew: DIR/.work
    for the submissions, DIR/.work/.batch the batch's own (the grader's alone)."""
    try:
        os.makedirs(out, exist_ok=True)
    except OSError:
        die(f"cannot create {out}")
    out = os.path.abspath(out)
    work = os.path.join(out, ".work")
    sandbox.remove(work)
    os.makedirs(os.path.join(work, ".batch"))
    os.chmod(out, 0o711)
    os.chmod(work, 0o711)
    os.chmod(os.path.join(work, ".batch"), 0o700)
    return out


def list_submissions(opts: Options) -> List[Tuple[str, str]]:
    """(name, source) of each submission, names made safe for file names."""
    named = []
    for arg in opts.submissions:
        if not os.path.exists(arg):
            die(f"{arg}: no such file or folder")
        bare = arg.rstrip("/") or "/"
        src = os.path.join(os.path.abspath(os.path.dirname(bare) or "."), os.path.basename(bare))
        if opts.whole_class:
            if not os.path.isdir(src):
                die(f"--class {arg}: expected a folder of submissions")
            for entry in sorted(os.listdir(src)):
                path = os.path.join(src, entry)
                if not entry.startswith(".") and os.path.exists(path):
                    named.append((intake.safe_name(path), path))
        else:
            named.append((opts.name or intake.safe_name(src), src))
    if not named:
        die(f"no submissions found in {' '.join(opts.submissions)}")
    names = [n for n, _ in named]
    dups = sorted({n for n in names if names.count(n) > 1})[:3]
    if dups:
        die(f"two submissions would share the name(s) {' '.join(dups)}: rename them or use --name")
    return named


def own_limits(asked: StudentLimits) -> Tuple[StudentLimits, str]:
    """ASKED, each within this process's own hard limit; and the ones
    lowered, as " NAME VALUE" each."""
    names = {"cpu": "cpu", "memory": "as", "fsize": "fsize", "nproc": "nproc"}
    got = StudentLimits(**{f: sandbox.within_own(getattr(asked, f), n) for f, n in names.items()})
    lowered = "".join(f" {n} {getattr(got, f)}" for f, n in names.items() if getattr(got, f) != getattr(asked, f))
    return got, lowered


# --- The batch, from end to end ------------------------------------------------------

def grade(batch: Batch, box: sandbox.Sandbox, lowered: str, plan: preflight.Plan) -> int:
    """Every submission of BATCH taken, built, tested and, unless the
    preflight refuses a lab of it (PLAN), published; the class's pages. All
    it says goes to DIR/grade.log too. Its exit status."""
    s = batch.settings
    log = Log(os.path.join(s.out, "grade.log"))
    students = [sub for sub in batch.submissions if not preflight.is_preflight(sub.name)]
    log.say(f"{PROG}: {len(students)} submission(s), {s.graded}, {s.jobs} at once, results in {s.out}")
    for v in plan.reused:
        log.say(preflight.said(v, s.out))
    if plan.runs:
        log.say(f"{PROG}: preflight: the kit's solutions and stubs graded beside them, as {' and '.join(preflight.NAMES)}")
    if lowered:
        log.say(f"{PROG}: limits lowered to this process's own (prlimit's names):{lowered}")
    uids = sandbox.hold_uids(s.uid_base, lambda: log.say(
        f"{PROG}: another grader on this machine has the uids from {s.uid_base + 1}: waiting for it to end "
        "(GRADE_UID_BASE gives this one others)"))
    started = time.monotonic()
    batch_infra = kit_ready(s, log)
    if not batch_infra:
        log.say(f"{PROG}: taking each submission's files{', building it' if s.built_here else ''}")
        run.for_each(batch.submissions, s.jobs, lambda sub, _slot: prepare(s, box, sub))
        log.say(f"{PROG}: {'built' if s.built_here else 'taken'} in {int(time.monotonic() - started)} s; "
                f"{'' if s.built_here else 'building and '}testing each (mode {s.mode})")
        batch_infra = run.run_environment(batch, log)
    status = checked(batch, plan, batch_infra, log)
    for sub in students if status != REFUSED else ():
        if not publish.publish(s, sub, batch_infra, log):
            status = worst(status, UNGRADABLE)
        elif publish.lab_errors(s, sub):
            status = worst(status, GRADER_FAILED)
    # The class: every student with results in DIR, graded now or before.
    if s.class_pages and status != REFUSED:
        written, said = publish.class_pages(s)
        log.say(said)
        status = status if written else worst(status, UNGRADABLE)
        log.say(f"{PROG}: the class: {s.out}/class.html (and class.csv, summary.txt)")
    log.say(work_note(s.work))
    log.say(f"{PROG}: done in {int(time.monotonic() - started)} s, the whole run (taking, building, "
            "testing, reports)")
    log.close()
    if uids:
        uids.close()
    return status


def work_note(work: str) -> str:
    """What the work folder holds, how big it is, and that it may go."""
    size = 0
    for top, _dirs, files in os.walk(work):
        for f in files:
            try:
                size += os.lstat(os.path.join(top, f)).st_size
            except OSError:
                pass
    return (f"{PROG}: {work} ({size // 1048576} MiB: each submission's unpacked files, built tree and raw logs) "
            "may be deleted now: the results and logs that count are in each DIR/NAME/; the next run empties it")


def worst(status: int, other: int) -> int:
    """Of two exit statuses, the one the grader exits with: the lower, but 0."""
    return min(status, other) if status and other else status or other


def checked(batch: Batch, plan: preflight.Plan, batch_infra: str, log: Log) -> int:
    """The preflight's verdicts said, and written (DIR/preflight.json)
    unless one refuses a lab: REFUSED then, else GRADED. Nothing is
    checked when the batch could not be tested at all (BATCH_INFRA)."""
    s = batch.settings
    if not plan.wanted or batch_infra:
        return GRADED
    subs = {sub.name: sub for sub in batch.submissions if preflight.is_preflight(sub.name)}
    verdicts = preflight.verdicts(s, plan, subs, batch_infra)
    for v in verdicts:
        if not v.reused:
            log.say(preflight.said(v, s.out))
    if any(not v.ok and not v.forced for v in verdicts):
        log.say(f"{PROG}: preflight: nothing published: no student's result changed")
        return REFUSED
    preflight.write(s, verdicts)
    return GRADED


def kit_ready(s: Settings, log: Log) -> str:
    """The kit's own build, which every submission's tree links: the
    receiver, the libraries, each graded lab's rubric (make grader-kit),
    then each graded lab's program and tests on the kit's labs/. A lab that
    does not compile there is no failure of the kit (with make grade, labs/
    is the student's own): each submission's build compiles it again. ''
    or why the batch cannot be graded."""
    kit, build_log = s.kit, os.path.join(s.batch_dir, "kit-build.log")
    readable = ["test", "-r", os.path.join(kit, "Makefile"), "-a", "-r", os.path.join(kit, "framework/rdmalab.h")]
    if sandbox.isolated() and not sandbox.can(s.uid_base, readable):
        return (f"the kit at {kit} is not readable by an unprivileged user (uid {s.uid_base}), who builds and "
                "runs the student's code: put it where others can read it (every folder above it mode 755)")
    labs = " ".join(str(n) for n in s.labs)
    make = ["make", "-C", kit, "--no-print-directory", "-s"]
    with open(build_log, "wb") as f:
        rc = subprocess.call(make + ["grader-kit", f"GRADER_LABS={labs}"], stdin=subprocess.DEVNULL, stdout=f,
                             stderr=subprocess.STDOUT)
    if rc != 0:
        return f"the kit itself does not build (see {build_log}): run make in {kit}"
    targets = [t for lab in s.labs for t in (f"build/labs/lab{lab}/lab{lab}",
                                             test_programs(lab, f"build/labs/lab{lab}/tests"))]
    with open(build_log, "ab") as f:
        rc = subprocess.call(make + ["-k", *targets],
                             stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT)
    if rc != 0:
        log.say(f"{PROG}: some of the kit's labs/ did not build (see {build_log}): "
                "each submission's build tries again")
    return ""


def prepare(s: Settings, box: sandbox.Sandbox, sub: Submission) -> None:
    """SUB's files taken into its tree, and built there when this machine
    makes the whole sandbox (Settings.built_here)."""
    intake.take(s, box, sub)
    if s.built_here:
        w = sub.work(s)
        build_all(s, box, w, sub.uid, os.path.join(w, "tree"))
    sandbox.clean_student(sub.uid)


def inside_main(args: List[str]) -> int:
    """--inside WORK [NAME SLOT K]: where RDMA works, the batch's builds and
    tests (run.inside)."""
    if len(args) not in (1, 4) or (len(args) == 4 and not (args[2].isdigit() and args[3].isdigit())):
        die("usage: grader/rdmalab-grade --inside WORK [NAME SLOT K]")
    if not os.path.isfile(os.path.join(args[0], ".batch", "batch.json")):
        die(f"{os.path.join(args[0], '.batch')} holds no batch.json: grader/rdmalab-grade writes it")
    one = (args[1], int(args[2]), int(args[3])) if len(args) == 4 else None
    return run.inside(args[0], one)
