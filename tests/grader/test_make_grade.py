"""make grade LAB=0 in a copy of the kit whose Lab 1 does not compile.

The grader builds Lab 0 (and nothing of Lab 1), says the other labs were
not asked for, and the closing line tells the truth. Every run is kept in a
folder of its own: a run that cannot grade (natively, with no device) says
so in its own report and leaves latest at the last graded run; a run that
grades (in the kit's guest, or natively on a device) becomes latest, says
which grade of each lab it supersedes, and labs.txt lists every lab's last
grade, an earlier run's Lab 2 beside this run's Lab 0. A report of the
layout before runs were kept is kept as a run of its own. The runs follow
each other (setUpClass); each fact is a case.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from tests.kitbase import KIT, KitCase, full_points, labs, run

EARLIER_SUBMISSION = {"name": "student", "made": "2001-02-03T04:05:06Z", "graded": "Lab 2", "source": "", "intake": "",
                      "unsafe": None, "ungradable": None, "seconds": 9}
EARLIER_RECORDS = [
    {"lab": 2, "step": 1, "test": "connects", "result": "pass", "points": 7, "max": 7, "message": "",
     "skipped_because": None, "said": "", "ms": 1200},
    {"lab": 2, "step": 2, "test": "sends", "result": "FAIL", "points": 0, "max": 7, "message": "expected 1, got 0",
     "skipped_because": None, "said": "", "ms": 300},
]
EARLIER = "2001-02-03T040506Z"
STAMP = r"[0-9-]+T[0-9:]+Z"


def not_asked() -> str:
    """What the reports say of the other labs: "(Labs 1, 2, 3, 4 not asked for)"."""
    others = [str(n) for n in labs() if n != 0]
    return f"(Lab{'s' if len(others) > 1 else ''} {', '.join(others)} not asked for)"


class MakeGradeLab0(KitCase):
    top: Path
    copy: Path
    mine: Path
    native_out: str | None = None
    native_status: int = 0
    runs_after_native: list[str] = []
    out2: str
    status2: int
    run2: str
    labs_txt2: str
    out3: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.top = cls.class_tmp("rdmalab-test-make-grade.")
        # As root, the grader builds as an unprivileged user, who must reach the copy.
        cls.top.chmod(0o755)
        cls.copy = cls.top / "kit"
        cls.lay_out_copy()
        cls.mine = cls.top / "results/student"
        cls.lay_out_earlier_report()
        # 1. Natively, with no device here, the run cannot grade.
        if run(["vm/run-rdma", "--mode", "native", "--", "true"], status=None).returncode != 0:
            cls.native_out, cls.native_status = cls.grade("native")
            cls.runs_after_native = cls.runs()
        # 2. Where RDMA runs (a device, else the kit's guest), Lab 0 grades.
        cls.out2, cls.status2 = cls.grade("auto")
        cls.run2 = os.readlink(cls.mine / "latest") if (cls.mine / "latest").is_symlink() else ""
        cls.labs_txt2 = (cls.mine / "labs.txt").read_text() if (cls.mine / "labs.txt").exists() else ""
        # 3. Again: the new run supersedes the last.
        cls.out3, _ = cls.grade("auto")

    @classmethod
    def lay_out_copy(cls) -> None:
        """The kit's files (not a git checkout), with the kit's objects of the
        framework and the receiver so that only the labs are compiled; Lab 1
        does not compile."""
        (cls.copy / "build").mkdir(parents=True)
        for f in ("Makefile", "mk", "framework", "tests", "receiver", "grader", "scripts", "vm", "labs"):
            run(["cp", "-a", KIT / f, cls.copy / f])
        for f in ("framework", "receiver", "lib", "bin", "tests"):
            if (KIT / "build" / f).is_dir():
                run(["cp", "-a", KIT / "build" / f, cls.copy / "build/"])
        run(["rm", "-rf", cls.copy / "build/tests/unit", cls.copy / "build/tests/rdma"])
        with open(cls.copy / "labs/lab1/resources.c", "a") as source:
            source.write("\nint lab1_does_not_compile(\n")

    @classmethod
    def lay_out_earlier_report(cls) -> None:
        """A report as make grade wrote it before runs were kept: Lab 2 graded in 2001."""
        (cls.mine / "logs").mkdir(parents=True)
        (cls.mine / "submission.json").write_text(json.dumps(EARLIER_SUBMISSION) + "\n")
        (cls.mine / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in EARLIER_RECORDS))
        (cls.mine / "report.txt").write_text("student: 7/14 points\n")

    @classmethod
    def grade(cls, mode: str) -> tuple[str, int]:
        done = subprocess.run(["make", "-C", cls.copy, "--no-print-directory", "grade", "LAB=0", "GRADE_NAME=student",
                               f"RDMA_MODE={mode}", f"GRADE_OUT={cls.top}/results"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, errors="replace")
        return done.stdout, done.returncode

    @classmethod
    def runs(cls) -> list[str]:
        """The run folders kept, oldest first."""
        return sorted(p.name for p in cls.mine.iterdir() if p.is_dir() and p.name[:1].isdigit())

    @staticmethod
    def closing(out: str) -> list[str]:
        """make grade's own last lines (make adds its error line after them)."""
        return [ln for ln in out.splitlines() if ln.startswith("grade: ")]

    def native(self) -> str:
        if self.native_out is None:
            self.skipTest("this machine has an RDMA device: make grade grades natively")
        assert self.native_out is not None
        return self.native_out

    def test_with_no_device_the_run_fails_saying_what_was_not_asked_for(self) -> None:
        out = self.native()
        self.assertNotEqual(0, self.native_status, "make grade with no device exited 0")
        self.assertIn(f"Lab 0 {not_asked()}", out)
        self.assertNotIn("lab1_does_not_compile", out, "Lab 1 was compiled: it was not asked for")

    def test_with_no_device_the_earlier_report_is_kept_as_a_run_and_this_run_has_its_own(self) -> None:
        self.native()
        self.assertEqual(2, len(self.runs_after_native), self.runs_after_native)
        self.assertEqual(EARLIER, self.runs_after_native[0])
        self.assertEqual("student: 7/14 points\n", (self.mine / EARLIER / "report.txt").read_text())

    def test_with_no_device_the_runs_report_says_ungradable_and_no_latest(self) -> None:
        out = self.native()
        failed = self.mine / self.runs_after_native[-1]
        self.assertRegex((failed / "report.txt").read_text().splitlines()[0], r"^student: UNGRADABLE: ")
        self.assertIn(f"this run's note is {failed}/report.txt", "\n".join(self.closing(out)))
        self.assertRegex("\n".join(self.closing(out)), rf"(?m)^grade: NOT graded now \({STAMP}\): .*; this run's note is ")

    def test_where_rdma_runs_lab0_grades_and_becomes_latest(self) -> None:
        self.assertEqual(0, self.status2, self.out2[-1500:])
        self.assertTrue(self.run2 and (self.mine / self.run2 / "report.txt").exists(), f"latest is '{self.run2}'")
        report = (self.mine / self.run2 / "report.txt").read_text()
        self.assertIn(f"graded: Lab 0 {not_asked()}\n", report)

    def test_only_lab0_is_built_and_its_log_kept(self) -> None:
        logs = self.mine / self.run2 / "logs"
        self.assertTrue((logs / "build-lab0.log").exists(), "no build log of Lab 0")
        self.assertFalse((logs / "build-lab1.log").exists(), "a build log of Lab 1, which was not asked for")
        self.assertFalse((self.copy / "build/labs/lab1/resources.o").exists(), "Lab 1 was compiled")
        self.assertTrue((self.mine / self.run2 / "grade.log").exists(), "no grade.log in the run's folder")

    def points2(self) -> int:
        records = (self.mine / self.run2 / "results.jsonl").read_text().splitlines()
        return sum(r["points"] for r in map(json.loads, records) if r["lab"] == 0)

    def test_the_closing_lines_say_it_graded_lab0_now_its_first_grade(self) -> None:
        closing = self.closing(self.out2)
        self.assertIn("grade: graded now (", "\n".join(closing))
        self.assertTrue(any(re.fullmatch(rf"grade: graded now \({STAMP}\): Lab 0 {re.escape(not_asked())}; your report is "
                                         rf"{re.escape(str(self.mine))}/latest/report.txt \({self.run2}\)", ln)
                            for ln in closing), closing)
        self.assertIn(f"grade: Lab 0: {self.points2()}/{full_points(0)} now, its first grade", closing)

    def test_the_seconds_said_and_in_labs_txt_are_one_fact_the_runs_builds_and_tests(self) -> None:
        sub = json.loads((self.mine / self.run2 / "submission.json").read_text())
        took = sub["seconds"]
        self.assertIn(f"grade: its builds and tests took {took} s (labs.txt's built+tested; the grader's "
                      '"done in" is the whole run)', self.closing(self.out2))
        self.assertRegex(self.labs_txt2, rf"(?m)^  0 +[0-9]+/{full_points(0)}  {STAMP} +{took} s  {self.run2}/report.txt$")
        self.assertRegex(self.out2, r"(?m)^rdmalab-grade: done in [0-9]+ s, the whole run \(taking, building, testing, reports\)$")

    def test_labs_txt_lists_this_runs_lab0_and_the_2001_runs_lab2(self) -> None:
        labs_txt = self.labs_txt2  # as the second run left it
        self.assertRegex(labs_txt, rf"(?m)^  0 +{self.points2()}/{full_points(0)}  {STAMP} +[0-9]+ s  {self.run2}/report.txt$")
        self.assertRegex(labs_txt, rf"(?m)^  2 +7/14  2001-02-03T04:05:06Z +9 s  {EARLIER}/report.txt$")

    def test_a_new_run_names_the_grade_it_supersedes_and_keeps_the_last(self) -> None:
        self.assertNotEqual(self.run2, os.readlink(self.mine / "latest"), "latest did not move to the third run")
        closing = self.closing(self.out3)
        total = full_points(0)
        self.assertTrue(any(re.fullmatch(rf"grade: Lab 0: [0-9]+/{total} now; it was {self.points2()}/{total} in "
                                         rf"{self.run2} \({STAMP}\)", ln) for ln in closing), closing)
        self.assertIn(f"grade: it supersedes {self.run2} as latest; every run is kept in {self.mine}/", closing)
        self.assertTrue((self.mine / self.run2 / "report.txt").exists(), "the second run's report was not kept")
        print("every run kept; the third run said:\n" + "\n".join("    " + ln for ln in closing))
