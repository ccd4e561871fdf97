"""Autolab's autograding files work as Autolab and Tango's autodriver run
them (see docs/instructor.md, "Autolab").

In make test, the view and the bundle only (a job builds the whole kit,
minutes of CI): crafted records of two labs give a score each and their
total, one that could not be graded no JSON; autograde.tar holds no
solutions; each graded submission of a class folder (RDMALAB_AUTOLAB_RESULTS,
default the Lab 3 samples', build/grader-samples/results-lab3) gets as its
last line the points of its own records.

With RDMALAB_AUTOLAB_JOB=1 (tests/grader/autolab-test without --view), also
a job: autograde.tar and autograde-Makefile made from the committed kit
(RDMALAB_AUTOLAB_LABS, default Lab 0) in an empty folder with a handin (the
reference solutions' labs/, as a tarball), make run there as autodriver
does: as root, as an unprivileged user of its own, within autodriver's
limits (100 processes; files of at most what docs/instructor.md asks Tango
for, so that User-Mode Linux runs), with the kernels where the image keeps
them, read-only; otherwise as you, with the file size limit only. The last
line must be JSON with one score per lab, each the points of the grader's
own records for that lab and the whole of its rubric. It prints the most
tasks the user had at once (threads too, as RLIMIT_NPROC counts them) and
the largest file its processes held open, sampled every 0.25 s. A handin
that is no tarball must end in a "NOT GRADED" last line, not JSON.
RDMALAB_AUTOLAB_TANGO_DEFAULTS=1: Tango's own file size limit, 100 MB, under
which User-Mode Linux cannot start and the grader must fall back to the
QEMU VM (its kernel prepared: vm/rxe-run --prepare).
RDMALAB_AUTOLAB_KEEP=1 leaves the job's folder, and says where.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import threading
import time
import unittest
from pathlib import Path
from typing import Any

from tests.kitbase import KIT, KitCase, full_points, run, scaled

JOB = os.environ.get("RDMALAB_AUTOLAB_JOB") == "1"
LABS = [int(n) for n in os.environ.get("RDMALAB_AUTOLAB_LABS", "0").split(",") if n]
TANGO_DEFAULTS = os.environ.get("RDMALAB_AUTOLAB_TANGO_DEFAULTS") == "1"
# autodriver's limits: Tango's config.py, VM_ULIMIT_USER_PROC and
# VM_ULIMIT_FILE_SIZE: 100 MB by default, and what docs/instructor.md asks
# for the guest of autograde-Makefile's GUEST_MEM, 1024 MB.
NPROC = 100
FSIZE = 104857600 if TANGO_DEFAULTS else 2148532224
# The user autodriver runs make as: a uid none of the grader's (GRADE_UID_BASE
# and above: the students, the guest's host user one below).
UID = int(os.environ.get("GRADE_UID_BASE", "64100")) - 2
ROOT = os.getuid() == 0


def record(lab: int, step: int, test: str, result: str, points: int, most: int) -> dict[str, Any]:
    return {"lab": lab, "step": step, "test": test, "result": result, "points": points, "max": most, "message": "",
            "skipped_because": None, "said": "", "ms": 1}


class TheView(KitCase):
    """scripts/results autolab, on crafted records."""

    def crafted(self, ungradable: str | None = None) -> Path:
        d = self.tmp()
        rows = [record(2, 1, "a", "pass", 2, 2), record(2, 3, "b", "pass", 1, 1), record(2, 3, "c", "FAIL", 0, 2),
                record(4, 1, "d", "FAIL", 0, 2)]
        (d / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (d / "submission.json").write_text(json.dumps({"name": "s", "made": "t", "graded": "Labs 2, 4", "source": "",
                                                       "intake": "", "unsafe": None, "ungradable": ungradable,
                                                       "seconds": 1}) + "\n")
        return d

    def test_two_labs_records_give_a_score_each_and_their_total(self) -> None:
        got = self.run_cmd(["scripts/results", "autolab", self.crafted()], merge=False).stdout.strip()
        self.assertEqual('{"scores":{"lab2":3,"lab4":0},"scoreboard":[3,3,0]}', got)

    def test_an_ungradable_submission_gets_no_autoresult_and_says_why(self) -> None:
        done = self.run_cmd(["scripts/results", "autolab", self.crafted("no guest")], status=None)
        self.assertNotEqual(0, done.returncode, f"an ungradable submission got an autoresult: {done.stdout}")
        self.assertIn("not graded: no guest", done.stdout)

    def test_each_graded_sample_gets_the_points_of_its_own_records(self) -> None:
        results = Path(os.environ.get("RDMALAB_AUTOLAB_RESULTS") or KIT / "build/grader-samples/results-lab3")
        subs = sorted(p for p in results.glob("*/") if (p / "submission.json").exists()) if results.is_dir() else []
        if not subs:
            self.skipTest(f"no class results in {results}: tests/grader/run-samples makes them (make test does)")
        for sub in subs:
            with self.subTest(sub.name):
                done = self.run_cmd(["scripts/results", "autolab", sub], status=None, merge=False)
                if json.loads((sub / "submission.json").read_text()).get("ungradable") is not None:
                    self.assertNotEqual(0, done.returncode, "ungradable, yet it got an autoresult")
                    continue
                scores: dict[str, int] = {}
                for ln in (sub / "results.jsonl").read_text().splitlines():
                    r = json.loads(ln)
                    scores[f"lab{r['lab']}"] = scores.get(f"lab{r['lab']}", 0) + r["points"]
                want = {"scores": scores, "scoreboard": [sum(scores.values()), *scores.values()]}
                self.assertEqual(want, json.loads(done.stdout.splitlines()[-1]), "not its records' points")


class TheBundle(KitCase):
    def test_autograde_tar_has_autolab_conf_and_no_solutions(self) -> None:
        out = self.tmp() / "bundle"
        self.run_cmd(["grader/autolab/bundle", "-o", out, "--lab", ",".join(map(str, LABS))], timeout=900)
        with tarfile.open(out / "autograde.tar") as t:
            names = t.getnames()
        self.assertIn("autolab.conf", names)
        self.assertEqual([], [n for n in names if n.startswith("rdmalab/solutions/")])


class AJob(KitCase):
    top: Path

    @classmethod
    def setUpClass(cls) -> None:
        if os.environ.get("RDMALAB_AUTOLAB_KEEP") == "1":
            cls.top = Path(tempfile.mkdtemp(prefix="rdmalab-autolab-test."))
            print(f"autolab-test: working in {cls.top} (kept)")
        else:
            cls.top = cls.class_tmp("rdmalab-autolab-test.")
        cls.top.chmod(0o755)
        run(["grader/autolab/bundle", "-o", cls.top / "bundle", "--lab", ",".join(map(str, LABS))], timeout=900)
        cls.kernels()

    @classmethod
    def kernels(cls) -> None:
        """The guests' kernels where the user can read but not write them, as
        in the image (RDMALAB_UML_KERNEL; the QEMU VM's in RDMALAB_CACHE)."""
        shutil.copy(run(["vm/uml-kernel"], merge=False, timeout=3600).stdout.strip(), cls.top / "linux")
        (cls.top / "linux").chmod(0o755)
        (cls.top / "cache/kernel").mkdir(parents=True)
        if TANGO_DEFAULTS:
            cache = Path(os.environ.get("RDMALAB_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or
                                                                 Path.home() / ".cache") / "rdmalab")
            for k in sorted((cache / "kernel").glob("linux-image-*/")):
                if (k / ".ready").exists():
                    shutil.copytree(k, cls.top / "cache/kernel" / k.name)
            if not list((cls.top / "cache/kernel").glob("linux-image-*/.ready")):
                raise AssertionError(f"no QEMU VM kernel prepared in {cache}/kernel: run vm/rxe-run --prepare")
        run(["chmod", "-R", "a+rX", cls.top / "cache"])

    def job(self, name: str, handin: Path) -> Path:
        """An empty folder as Autolab fills it."""
        d = self.top / name
        d.mkdir()
        shutil.copy(self.top / "bundle/autograde-Makefile", d / "Makefile")
        shutil.copy(self.top / "bundle/autograde.tar", d)
        shutil.copy(handin, d)
        if ROOT:
            run(["chown", "-R", f"{UID}:{UID}", d])
        return d

    def as_autodriver(self, d: Path) -> subprocess.CompletedProcess[str]:
        """make in D, as autodriver runs it: its user, its limits (soft and
        hard), no writable home. The grader asked for a file size limit past
        autodriver's: it must keep within its own."""
        env = ["env", "HOME=/nonexistent", f"RDMALAB_UML_KERNEL={self.top}/linux", f"RDMALAB_CACHE={self.top}/cache",
               f"GRADE_FILE_BYTES={FSIZE * 2}"]
        limits = ["prlimit", f"--fsize={FSIZE}", "--"]
        if ROOT:
            limits = ["prlimit", f"--nproc={NPROC}", f"--fsize={FSIZE}", "--", "setpriv", f"--reuid={UID}",
                      f"--regid={UID}", "--clear-groups", "--"]
        return run(["timeout", "-k", "10", str(scaled(1800)), *limits, *env, "make"], cwd=d, status=None, timeout=2400)

    def test_a_handin_that_is_no_tarball_ends_in_not_graded(self) -> None:
        notes = self.top / "notes.txt"
        notes.write_text("not a tarball\n")
        done = self.as_autodriver(self.job("refused", notes))
        self.assertEqual(0, done.returncode, done.stdout[-400:])
        self.assertRegex(done.stdout.splitlines()[-1], r"^rdmalab: NOT GRADED: notes.txt is n.* tarball")

    def test_the_solutions_handin_scores_each_labs_rubric_in_the_last_line(self) -> None:
        student = self.tmp() / "student"
        for lab in LABS:
            (student / f"labs/lab{lab}").mkdir(parents=True)
            for f in [ln for ln in (KIT / f"labs/lab{lab}/FILES").read_text().splitlines() if ln and ln[0] != "#"]:
                shutil.copy(KIT / f"solutions/lab{lab}/{f}", student / f"labs/lab{lab}")
        handin = self.top / "handin.tgz"
        with tarfile.open(handin, "w:gz") as t:
            t.add(student / "labs", arcname="labs")
        d = self.job("graded", handin)
        peak = Sampler(UID) if ROOT else None
        t0 = time.monotonic()
        done = self.as_autodriver(d)
        seconds = time.monotonic() - t0
        if peak:
            peak.stop()
            print(f"autolab-test: in {seconds:.0f} s; at most {peak.tasks} tasks of uid {UID} at once (limit {NPROC}); "
                  f"largest file open {peak.biggest} bytes (limit {FSIZE})")
        else:
            print(f"autolab-test: in {seconds:.0f} s")
        self.assertEqual(0, done.returncode, done.stdout[-600:])
        self.assertRegex(done.stdout, rf"(?m)^rdmalab-grade: limits lowered to this process's own.* fsize {FSIZE}")
        last = json.loads(done.stdout.splitlines()[-1])
        records = [json.loads(ln) for ln in (d / "autolab-results/student/results.jsonl").read_text().splitlines() if ln]
        for lab in LABS:
            points = sum(r["points"] for r in records if r["lab"] == lab)
            self.assertEqual((points, full_points(lab)), (last["scores"].get(f"lab{lab}"), full_points(lab)))
        self.assertEqual(len(LABS), len(last["scores"]))
        self.assertEqual(sum(last["scores"].values()), last["scoreboard"][0])
        print(f"autolab-test: ok: the last line is {json.dumps(last, separators=(',', ':'))}")


class Sampler:
    """Every 0.25 s, until stopped: the tasks whose real uid is UID (threads
    too) and the largest regular file they hold open (the guest's memory
    file is one, unlinked); the peaks."""

    def __init__(self, uid: int) -> None:
        self.uid, self.tasks, self.biggest = uid, 0, 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self) -> None:
        while not self.done.wait(0.25):
            for pid in Path("/proc").iterdir():
                if not pid.name.isdigit():
                    continue
                try:
                    if (pid / "status").stat().st_uid != self.uid:
                        continue
                    self.look(pid)
                except OSError:
                    continue
            self.tasks = max(self.tasks, self.count_tasks())

    def count_tasks(self) -> int:
        n = 0
        for pid in Path("/proc").glob("[0-9]*/task/[0-9]*"):
            try:
                n += pid.stat().st_uid == self.uid
            except OSError:
                pass
        return n

    def look(self, pid: Path) -> None:
        for fd in (pid / "fd").iterdir():
            try:
                st = fd.stat()
            except OSError:
                continue
            if (st.st_mode & 0o170000) == 0o100000:
                self.biggest = max(self.biggest, st.st_size)

    def stop(self) -> None:
        self.done.set()
        self.thread.join()


def load_tests(loader: unittest.TestLoader, tests: unittest.TestSuite, pattern: str | None) -> unittest.TestSuite:
    """Without RDMALAB_AUTOLAB_JOB=1 (make test), no job: it is no test of
    make test's, neither run nor skipped (tests/grader/autolab-test runs one)."""
    suite = unittest.TestSuite()
    for case in (TheView, TheBundle, *((AJob,) if JOB else ())):
        suite.addTests(loader.loadTestsFromTestCase(case))
    return suite
