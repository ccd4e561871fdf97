"""publish: a submission's results put in place at once.

DIR/NAME/ gets its records (results.jsonl, every lab's against the kit's
rubric), what it is (submission.json), its logs, and the views of them
(report.txt, results.json, junit.xml; results.py, called here, not run). They are
written in DIR/NAME.new and renamed into place, so a reader never sees half
a result. A student graded before keeps the labs not graded now: their
records, logs, files taken and facts are carried into DIR/NAME.new (a
regrade of one lab, or a late lab, merges). A submission that could not be graded keeps an earlier good
result, under a note at the top of its report.
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import stat
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from . import course, jsontext, model, results, sandbox
from .batch import Log, Submission, read_build, read_run
from .model import BadInput
from .settings import Settings, graded_text

MAX_LOG_BYTES = 1048576


def class_pages(settings: Settings) -> Tuple[bool, str]:
    """DIR/class.csv, summary.txt and class.html of every student with
    results in DIR, graded now or before, in every lab any of them has
    (and those graded now), with the batch's class options (course.py):
    whether they were written, and the summary (or why not, in one line)."""
    try:
        opts = course.kept_options(settings.out, list(settings.class_views))
        return True, results.write_class(settings.out, list(settings.labs), results.now(), opts)
    except (BadInput, OSError) as e:
        return False, f"results: {e}"


def files_taken(taken: List[str]) -> str:
    """What a submission is, for its report when the batch has no --source:
    one line per lab of the files taken, one per file the stub stood in
    for (and why)."""
    by_lab: dict = {}
    others = []
    for line in taken:
        if line.startswith("lab") and "/" in line and line.endswith(": taken"):
            lab, rest = line.split("/", 1)
            by_lab.setdefault(lab, []).append(rest[: -len(": taken")])
        else:
            others.append(line)
    return "\n".join([f"{lab}: {' '.join(files)}" for lab, files in by_lab.items()] + others)


def newest_mtime(source: str) -> str:
    """When SOURCE was last changed, as a time: a tarball's own mtime, a
    folder's newest regular file's (links not followed); "" when none."""
    newest = 0.0
    if os.path.isfile(source):
        newest = os.lstat(source).st_mtime
    for top, _dirs, files in os.walk(source):
        for f in files:
            st = os.lstat(os.path.join(top, f))
            if stat.S_ISREG(st.st_mode):
                newest = max(newest, st.st_mtime)
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(newest)) if newest else ""


def attempted(settings: Settings, sub: Submission, lab: int) -> bool:
    """Whether SUB gave a file of lab LAB that differs from its stub."""
    tree = os.path.join(sub.work(settings), "tree", "labs", f"lab{lab}")
    stubs = os.path.join(settings.kit, "labs", f"lab{lab}")
    for line in sub.taken:
        if line.startswith(f"lab{lab}/") and line.endswith(": taken"):
            f = line[len(f"lab{lab}/"): -len(": taken")]
            try:
                if not filecmp.cmp(os.path.join(tree, f), os.path.join(stubs, f), shallow=False):
                    return True
            except OSError:
                return True  # cannot tell: it was given
    return False


def lab_facts(settings: Settings, sub: Submission, made: str) -> Dict[str, Any]:
    """Each lab graded now's facts (model.LabFacts): when, when submitted
    (the platform's --submitted, else the files' newest mtime) and whether
    attempted."""
    submitted, where = settings.submitted, model.FROM_PLATFORM
    if not submitted:
        submitted, where = newest_mtime(sub.source) if sub.source else "", model.FROM_FILES
    return {str(lab): model.LabFacts(made, submitted or None, where, attempted(settings, sub, lab)).to_json()
            for lab in settings.labs}


def by_lab_order(by_lab: Dict[str, Any]) -> Dict[str, Any]:
    """BY_LAB (keyed by lab numbers, "3") in the labs' order."""
    return {k: by_lab[k] for k in sorted(by_lab, key=int)}


@dataclass
class Earlier:
    """What DEST held of the labs not graded now (a regrade merges): their
    records (JSON lines), their files-taken lines, facts and errors, and
    the labs they are of."""

    records: List[model.Record] = field(default_factory=list)
    taken: List[str] = field(default_factory=list)
    facts: Dict[str, Any] = field(default_factory=dict)
    errors: Dict[str, str] = field(default_factory=dict)
    labs: List[int] = field(default_factory=list)


def earlier_of(dest: str, now: Tuple[int, ...]) -> Earlier:
    """What DEST, graded before, holds of labs other than NOW's (nothing when
    it holds no graded result); BadInput when its records do not read."""
    if not earlier_graded(dest):
        return Earlier()
    about = model.read_submission_json(os.path.join(dest, "submission.json")) or {}
    keep = [r for r in model.read_records(os.path.join(dest, "results.jsonl")) if r.lab not in now]
    try:
        with open(os.path.join(dest, "logs", "files-taken.txt")) as f:
            taken = [line.rstrip("\n") for line in f]
    except OSError:
        taken = []
    others = {str(int(r.lab)) for r in keep}
    return Earlier(
        records=keep,
        taken=[t for t in taken if t.split("/", 1)[0][3:] in others],
        facts={k: v for k, v in (about.get("labs") or {}).items() if k in others},
        errors={k: v for k, v in (about.get("lab_errors") or {}).items() if k in others},
        labs=sorted(int(k) for k in others),
    )


def submission_json(settings: Settings, sub: Submission, made: str, ungradable: str = "",
                    earlier: Optional[Earlier] = None) -> str:
    """What SUB is, as one JSON line (model.py's format): its name, when and
    what was graded, the files taken (or the batch's --source), the
    intake's note, what the sandbox lacked where its code ran (--unsafe;
    null when nothing), why it could not be graded (null when it was), the
    seconds its builds and tests took, what it was graded with, each lab's
    facts and the labs the grader failed. EARLIER: what it keeps of labs
    graded before (a regrade merges)."""
    e = earlier or Earlier()
    w = sub.work(settings)
    run = read_run(w)
    seconds: Optional[int] = None
    if not ungradable:
        seconds = read_build(w).seconds + (run.seconds if run else 0)
    labs = tuple(sorted(set(settings.labs) | set(e.labs)))
    errors = {**e.errors, **(lab_errors(settings, sub) if not ungradable else {})}
    doc = {"name": sub.name, "made": made,
           "graded": graded_text(labs, settings.all_labs) if e.labs else settings.graded,
           "source": settings.source or files_taken(e.taken + sub.taken), "intake": sub.intake,
           "unsafe": (run.unsafe if run else "") or None, "ungradable": ungradable or None,
           "seconds": seconds, "kit": settings.kit_commit, "mode": settings.mode,
           "kernel": (run.kernel if run else "") or None,
           "multiplier": (run.multiplier if run and run.multiplier else settings.multiplier),
           "labs": by_lab_order({**e.facts, **(lab_facts(settings, sub, made) if not ungradable else {})})}
    if errors:
        doc["lab_errors"] = by_lab_order(errors)
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n"


def lab_records(settings: Settings, sub: Submission, lab: int) -> str:
    """Lab LAB's records of SUB against the kit's rubric (make grader-kit
    builds it), one JSON line each: every test failed when the lab did not
    build, "did not run" where its program wrote no record. Raises
    BadInput, one line, when a line does not read."""
    rubric = os.path.join(settings.kit, f"build/rubric/lab{lab}.jsonl")
    if not os.path.isfile(rubric):
        raise BadInput(f"no rubric {rubric}: make builds it (make grader-kit)")
    why = read_build(sub.work(settings)).not_built.get(str(lab))
    if why is not None:
        return results.lab_records_text(model.read_lab_not_built(lab, rubric, why))
    records: Optional[str] = os.path.join(sub.work(settings), "results", f"lab{lab}", "steps.jsonl")
    if not os.path.isfile(records or ""):
        records = None
    return results.lab_records_text(model.read_lab_run(lab, rubric, records, f"logs/lab{lab}"))


def copy_logs(w: str, lab: int, logs: str) -> None:
    """What the builds and tests of lab LAB left, into LOGS: the build's log,
    the test program's records and output (at most 1 MiB each), the logs of
    the receivers of the tests that did not pass."""
    build_log = os.path.join(w, f"build-lab{lab}.log")
    if os.path.isfile(build_log):
        _copy_head(build_log, os.path.join(logs, os.path.basename(build_log)), None)
    results = os.path.join(w, "results", f"lab{lab}")
    if not os.path.isdir(results):
        return
    os.makedirs(os.path.join(logs, f"lab{lab}"), exist_ok=True)
    for f in sorted(os.listdir(results)):
        if os.path.isfile(os.path.join(results, f)):
            _copy_head(os.path.join(results, f), os.path.join(logs, f"lab{lab}", f), MAX_LOG_BYTES)


def _copy_head(src: str, dst: str, limit: Optional[int]) -> None:
    with open(src, "rb") as a, open(dst, "wb") as b:
        b.write(a.read(limit) if limit is not None else a.read())


def without_note(report: str) -> str:
    """REPORT less the note of a run that could not grade at its top (its
    lines up to the first empty one)."""
    lines = report.split("\n")
    if lines and lines[0].startswith("NOT GRADED at "):
        end = lines.index("") if "" in lines else len(lines)
        lines = lines[end + 1:]
    return "\n".join(lines)


def outcome_reason(settings: Settings, sub: Submission, batch_infra: str) -> str:
    """'' when SUB was graded; else why not, in one line."""
    w = sub.work(settings)
    run = read_run(w)
    if run and run.graded:
        return ""
    said = [read_build(w).infra, run.infra if run else "", sub.infra, batch_infra]
    first = next((s for s in said if s), "")
    return first.split("\n")[0] or \
        f"the test run did not finish (see {os.path.join(settings.out, 'grade.log')})"


def lab_errors(settings: Settings, sub: Submission) -> Dict[str, str]:
    """The labs of SUB the grader failed (run.json's lab_errors)."""
    run = read_run(sub.work(settings))
    return dict(run.lab_errors) if run else {}


def publish(settings: Settings, sub: Submission, batch_infra: str, log: Log) -> bool:
    """DIR/NAME from SUB's results, or SUB marked ungradable without
    overwriting an earlier good result. False when it could not grade."""
    dest = os.path.join(settings.out, sub.name)
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    reason = outcome_reason(settings, sub, batch_infra)
    if not reason:
        before = earlier_submission(dest)
        reason = put_graded(settings, sub, dest, now)
        if not reason:
            for line in replaced_by_nothing(before, model.read_submission(dest), settings.labs):
                log.say(f"rdmalab-grade: {sub.name}: {line}")
            for lab, why in sorted(lab_errors(settings, sub).items()):
                log.say(f"rdmalab-grade: {sub.name}: lab {lab}: THE GRADER FAILED: {why}")
            return True
    log.say(f"rdmalab-grade: {sub.name}: UNGRADABLE: {reason}")
    if earlier_graded(dest):
        keep_earlier(dest, now, reason)
    else:
        put_ungradable(settings, sub, dest, now, reason)
    return False


def earlier_submission(dest: str) -> Optional[model.Submission]:
    """The graded submission DEST held before, or None."""
    try:
        return model.read_submission(dest) if earlier_graded(dest) else None
    except BadInput:
        return None


def replaced_by_nothing(before: Optional[model.Submission], after: model.Submission,
                        labs: Tuple[int, ...]) -> List[str]:
    """A line for each of LABS that BEFORE had attempted and AFTER has not:
    a late lab graded without --lab regrades every lab from it."""
    if before is None:
        return []
    lines = []
    for lab in labs:
        was = model.lab_status(before, lab)
        if was in (model.NOT_GRADED, model.NOT_ATTEMPTED) or model.lab_status(after, lab) != model.NOT_ATTEMPTED:
            continue
        points = jsontext.number(sum(r.points for r in before.of_lab(lab)))
        lines.append(f"lab {lab} was {was} ({points} points) and is now not attempted: this submission has "
                     "none of its files (to grade only the labs it has, give --lab N)")
    return lines


def put_graded(settings: Settings, sub: Submission, dest: str, now: str) -> str:
    """DEST from SUB's records, logs and views, in place at once: '' or why
    the records could not be read. The labs graded now replace theirs; DEST's
    other labs (records, logs, facts) stay."""
    try:
        earlier = earlier_of(dest, settings.labs)
    except BadInput as e:
        return f"the earlier results in {dest} do not read ({e}): move {dest} away to grade it afresh"
    new = dest + ".new"
    sandbox.remove(new)
    os.makedirs(os.path.join(new, "logs"))
    w = sub.work(settings)
    now_records: Dict[int, str] = {}
    for lab in settings.labs:
        try:
            now_records[lab] = lab_records(settings, sub, lab)
        except BadInput as e:
            return f"the results of lab {lab} could not be read: {e}"
        copy_logs(w, lab, os.path.join(new, "logs"))
    keep_logs(dest, earlier.labs, os.path.join(new, "logs"))
    by_lab = {**{lab: "" for lab in earlier.labs}, **now_records}
    with open(os.path.join(new, "results.jsonl"), "w") as records:
        for lab in sorted(by_lab):
            records.write(now_records.get(lab) or "".join(
                jsontext.dumps(r.to_json()) + "\n" for r in earlier.records if r.lab == lab))
    with open(os.path.join(new, "logs/files-taken.txt"), "w") as f:
        f.write("".join(line + "\n" for line in earlier.taken + sub.taken))
    with open(os.path.join(new, "submission.json"), "w") as f:
        f.write(submission_json(settings, sub, now, earlier=earlier))
    try:
        results.write_submission(new)
    except (BadInput, OSError) as e:
        return str(e).split("\n")[0]
    sandbox.remove(dest + ".old")
    if os.path.isdir(dest):
        os.rename(dest, dest + ".old")
    os.rename(new, dest)
    sandbox.remove(dest + ".old")
    return ""


def keep_logs(dest: str, labs: List[int], logs: str) -> None:
    """The logs of LABS (graded before) from DEST/logs into LOGS."""
    for lab in labs:
        for name in (f"lab{lab}", f"build-lab{lab}.log"):
            src = os.path.join(dest, "logs", name)
            if os.path.isdir(src):
                shutil.copytree(src, os.path.join(logs, name), symlinks=True)
            elif os.path.isfile(src):
                shutil.copy2(src, os.path.join(logs, name))


def earlier_graded(dest: str) -> bool:
    """Whether DEST holds a result that was graded."""
    try:
        with open(os.path.join(dest, "submission.json")) as f:
            return json.load(f).get("ungradable") is None
    except (OSError, ValueError, AttributeError):
        return False


def keep_earlier(dest: str, now: str, reason: str) -> None:
    """The earlier report stays, under a note that this run could not grade
    (the note of a run before it replaced)."""
    with open(os.path.join(dest, "ungradable.txt"), "a") as f:
        f.write(f"{now} UNGRADABLE: {reason} (the earlier result above is kept)\n")
    try:
        with open(os.path.join(dest, "report.txt")) as f:
            earlier = without_note(f.read())
    except OSError:
        earlier = ""
    tmp = os.path.join(dest, "report.txt.new")
    with open(tmp, "w") as f:
        f.write(f"NOT GRADED at {now}: {reason}\n"
                "(the report below is from an earlier run; this run could not grade)\n\n" + earlier)
    os.replace(tmp, os.path.join(dest, "report.txt"))
    sandbox.remove(dest + ".new")


def put_ungradable(settings: Settings, sub: Submission, dest: str, now: str, reason: str) -> None:
    """DEST says SUB could not be graded, and why: no records."""
    new = dest + ".new"
    sandbox.remove(new)
    os.makedirs(new)
    open(os.path.join(new, "results.jsonl"), "w").close()
    with open(os.path.join(new, "submission.json"), "w") as f:
        f.write(submission_json(settings, sub, now, reason))
    try:
        results.write_submission(new)
    except (BadInput, OSError):
        pass  # no records to read: the submission.json says why
    sandbox.remove(dest)
    os.rename(new, dest)
