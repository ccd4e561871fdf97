"""publish: a submission's results put in place at once.

DIR/NAME/ gets its records (results.jsonl, every lab's against the kit's
rubric), what it is (submission.json), its logs, and the views of them
(report.txt, results.json, junit.xml; results.py, called here, not run). They are
written in DIR/NAME.new and renamed into place, so a reader never sees half
a result. A submission that could not be graded keeps an earlier good
result, under a note at the top of its report.
"""

from __future__ import annotations

import json
import os
import time
from typing import Dict, List, Optional, Tuple

from . import model, results, sandbox
from .batch import Log, Submission, read_build, read_run
from .model import BadInput
from .settings import Settings

MAX_LOG_BYTES = 1048576


def class_pages(settings: Settings) -> Tuple[bool, str]:
    """DIR/class.csv, summary.txt and class.html of every student with
    results in DIR, graded now or before: whether they were written, and the
    summary (or why not, in one line)."""
    try:
        return True, results.write_class(settings.out, list(settings.labs), results.now())
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


def submission_json(settings: Settings, sub: Submission, made: str, ungradable: str = "") -> str:
    """What SUB is, as one JSON line: its name, when and what was graded,
    the files taken (or the batch's --source), the intake's note, what the
    sandbox lacked where its code ran (--unsafe; null when nothing), why it
    could not be graded (null when it was), the seconds its builds and
    tests took, and, only when some, the labs whose grading failed through
    the grader's fault, not the student's (lab_errors: {"2": "why"};
    run.grader_failed)."""
    w = sub.work(settings)
    run = read_run(w)
    seconds: Optional[int] = None
    if not ungradable:
        seconds = read_build(w).seconds + (run.seconds if run else 0)
    doc: Dict[str, object] = {
        "name": sub.name, "made": made, "graded": settings.graded,
        "source": settings.source or files_taken(sub.taken), "intake": sub.intake,
        "unsafe": (run.unsafe if run else "") or None, "ungradable": ungradable or None,
        "seconds": seconds}
    if run and run.lab_errors and not ungradable:
        doc["lab_errors"] = dict(run.lab_errors)
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
        reason = put_graded(settings, sub, dest, now)
        if not reason:
            for lab, why in sorted(lab_errors(settings, sub).items()):
                log.say(f"rdmalab-grade: {sub.name}: lab {lab}: THE GRADER FAILED: {why}")
            return True
    log.say(f"rdmalab-grade: {sub.name}: UNGRADABLE: {reason}")
    if earlier_graded(dest):
        keep_earlier(dest, now, reason)
    else:
        put_ungradable(settings, sub, dest, now, reason)
    return False


def put_graded(settings: Settings, sub: Submission, dest: str, now: str) -> str:
    """DEST from SUB's records, logs and views, in place at once: '' or why
    the records could not be read."""
    new = dest + ".new"
    sandbox.remove(new)
    os.makedirs(os.path.join(new, "logs"))
    w = sub.work(settings)
    with open(os.path.join(new, "results.jsonl"), "w") as records:
        for lab in settings.labs:
            try:
                records.write(lab_records(settings, sub, lab))
            except BadInput as e:
                return f"the results of lab {lab} could not be read: {e}"
            copy_logs(w, lab, os.path.join(new, "logs"))
    with open(os.path.join(new, "logs/files-taken.txt"), "w") as f:
        f.write("".join(line + "\n" for line in sub.taken))
    with open(os.path.join(new, "submission.json"), "w") as f:
        f.write(submission_json(settings, sub, now))
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
