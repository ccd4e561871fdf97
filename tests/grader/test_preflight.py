"""The preflight, and the grader's failures kept apart from the student's.

A class of one student (alice, who hands in the solution of Lab 0) is
graded from a copy of the kit, Lab 0 only (the cheapest lab), with a
preflight cache of its own. In turn, the runs follow each other
(setUpClass) and each fact is a case:
1. the kit as it is: the preflight grades the solution and the stub beside
   alice, finds them right, and says so in DIR/preflight.json;
2. again: the verdict is reused from the cache, and nothing more is graded;
3. a solution planted with a mistake (docs/lab0.md's common error of the
   GUID's byte order): Lab 0 is refused, one line naming the test, exit 3,
   nothing published;
4. the same with --force: alice is graded, and preflight.json marks Lab 0;
5. a harness that crashes before writing its records (its parent, which
   runs no student code: the student cannot cause it), with --force:
   alice's Lab 0 is the grader's failure (lab_errors), exit 4.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

from tests.kitbase import KIT, KitCase, full_points, rubric, run

sys.path.insert(0, str(KIT / "grader"))
from rdmalab_grade import run as grader_run  # noqa: E402
from rdmalab_grade.settings import Settings  # noqa: E402

GRADER = "grader/rdmalab-grade"
# The copy takes the kit's files, and its built framework and receiver, so
# that only Lab 0 (and, for case 5, the harness) compiles.
KIT_FILES = ["Makefile", "mk", "framework", "tests", "receiver", "grader", "scripts", "vm", "labs", "solutions"]
KIT_BUILT = ["framework", "receiver", "lib", "bin", "tests"]
# The mistake planted in the solution (tests/make/test_common_errors.py's
# Lab 0 one): step 2's GUID test fails.
PLANT = ("devices.c", "be64toh(ibv_get_device_guid(dev))", "ibv_get_device_guid(dev)")
# The crash planted in the harness: the test program's parent dies of
# SIGSEGV (its crash handler reports it, then dies of it) before it writes
# the records.
CRASH = ("\tif (o.results         ? write_results(o.results, r, nr) :",
         "\tif (o.results_fd >= 0)\n\t\traise(SIGSEGV);\n\tif (o.results         ? write_results(o.results, r, nr) :")


class Preflight(KitCase):
    top: Path
    copy: Path
    said: dict[str, str]
    status: dict[str, int]
    seconds: dict[str, float]

    @classmethod
    def setUpClass(cls) -> None:
        cls.top = cls.class_tmp("rdmalab-test-preflight.")
        # As root, the grader builds as an unprivileged user, who must reach the copy.
        cls.top.chmod(0o755)
        cls.copy = cls.top / "kit"
        cls.lay_out_copy()
        alice = cls.top / "class/alice/labs/lab0"
        shutil.copytree(KIT / "solutions/lab0", alice)
        cls.said, cls.status, cls.seconds = {}, {}, {}
        cls.grade("fresh")
        cls.grade("again")
        cls.grade("week0", "--preflight-only", whole=False)
        plant(cls.copy / "solutions/lab0", *PLANT)
        cls.grade("refused")
        cls.grade("forced", "--force")
        plant(cls.copy / "solutions/lab0", PLANT[0], PLANT[2], PLANT[1])
        plant(cls.copy / "tests", "graded.c", *CRASH)
        cls.grade("crashed", "--force")

    @classmethod
    def lay_out_copy(cls) -> None:
        (cls.copy / "build").mkdir(parents=True)
        for f in KIT_FILES:
            run(["cp", "-a", KIT / f, cls.copy / f])
        for f in KIT_BUILT:
            if (KIT / "build" / f).is_dir():
                run(["cp", "-a", KIT / "build" / f, cls.copy / "build/"])
        run(["rm", "-rf", cls.copy / "build/tests/unit", cls.copy / "build/tests/rdma"])

    @classmethod
    def grade(cls, name: str, *options: str, whole: bool = True) -> None:
        """The class (WHOLE; else no submission) graded into DIR=TOP/NAME,
        Lab 0, its preflight cached in TOP/cache."""
        t0 = time.monotonic()
        klass: list[str | Path] = ["--class", cls.top / "class"] if whole else []
        done = run([cls.copy / GRADER, "--mode", os.environ.get("RDMALAB_MODE", "auto"), "-j", "3", "--lab", "0",
                    "-o", cls.top / name, *options, *klass], cwd=cls.copy,
                   env={"RDMALAB_PREFLIGHT_CACHE": str(cls.top / "cache")}, status=None, timeout=1800)
        cls.seconds[name] = time.monotonic() - t0
        cls.said[name], cls.status[name] = done.stdout, done.returncode

    def preflight_json(self, name: str) -> dict:
        return json.loads((self.top / name / "preflight.json").read_text())

    def alice(self, name: str) -> dict:
        return json.loads((self.top / name / "alice/submission.json").read_text())

    def alice_points(self, name: str) -> int:
        lines = (self.top / name / "alice/results.jsonl").read_text().splitlines()
        return sum(json.loads(line)["points"] for line in lines)

    def test_a_right_kit_passes_its_preflight(self) -> None:
        most = full_points(0)
        self.assertEqual(self.status["fresh"], 0, self.said["fresh"])
        self.assertHasLine(f"rdmalab-grade: preflight: Lab 0: the solution got {most}/{most}, the stub 0 (checked now)",
                           self.said["fresh"])
        doc = self.preflight_json("fresh")
        self.assertEqual(doc["labs"], [{"lab": 0, "solution": most, "stub": 0, "most": most, "ok": True,
                                        "forced": False, "why": "", "checked": doc["labs"][0]["checked"],
                                        "reused": False}])
        self.assertEqual(self.alice_points("fresh"), most)
        self.assertFalse(any("preflight" in p.name for p in (self.top / "fresh").iterdir() if p.is_dir()),
                         "the preflight's submissions were published")

    def test_a_second_batch_reuses_the_verdict(self) -> None:
        self.assertEqual(self.status["again"], 0, self.said["again"])
        self.assertRegex(self.said["again"], r"(?m)^rdmalab-grade: preflight: Lab 0: the solution got [0-9]+/[0-9]+, "
                                             r"the stub 0 \(reused, checked [0-9T:-]+Z in this environment\)$")
        self.assertNotIn("preflight+solution", self.said["again"])
        self.assertFalse((self.top / "again/.work/preflight+solution").exists())
        self.assertTrue(self.preflight_json("again")["labs"][0]["reused"])
        print(f"\n  preflight of Lab 0: {self.seconds['fresh']:.1f} s checked, {self.seconds['again']:.1f} s reused")

    def test_week_0s_preflight_only_grades_no_student(self) -> None:
        self.assertEqual(self.status["week0"], 0, self.said["week0"])
        self.assertIn("rdmalab-grade: preflight: Lab 0: the solution got", self.said["week0"])
        self.assertTrue(self.preflight_json("week0")["labs"][0]["reused"])
        self.assertEqual(sorted(p.name for p in (self.top / "week0").iterdir() if not p.name.startswith(".")),
                         ["grade.log", "preflight.json"])

    def test_a_failing_solution_refuses_the_lab(self) -> None:
        self.assertEqual(self.status["refused"], 3, self.said["refused"])
        lines = [line for line in self.said["refused"].splitlines() if "preflight: Lab 0" in line]
        self.assertEqual(len(lines), 1, self.said["refused"])
        self.assertRegex(lines[0], r"^rdmalab-grade: preflight: Lab 0 not graded: the solution got [0-9]+/[0-9]+ here, "
                                   r"failing [a-z_]*guid[a-z_]*.*or pass --force")
        self.assertFalse((self.top / "refused/alice").exists(), "a refused lab's results were published")
        self.assertFalse((self.top / "refused/preflight.json").exists())

    def test_force_grades_the_refused_lab_and_marks_it(self) -> None:
        self.assertEqual(self.status["forced"], 0, self.said["forced"])
        self.assertIn("rdmalab-grade: preflight: Lab 0 graded anyway (--force), every view marks it: the solution got",
                      self.said["forced"])
        lab = self.preflight_json("forced")["labs"][0]
        self.assertEqual((lab["ok"], lab["forced"], lab["stub"]), (False, True, 0))
        self.assertLess(lab["solution"], lab["most"])
        self.assertEqual(self.alice_points("forced"), full_points(0))
        self.assertNotIn("lab_errors", self.alice("forced"))

    def test_a_harness_crash_is_the_graders_failure(self) -> None:
        self.assertEqual(self.status["crashed"], 4, self.said["crashed"])
        errors = self.alice("crashed").get("lab_errors") or {}
        self.assertEqual(list(errors), ["0"], self.said["crashed"])
        self.assertRegex(errors["0"], r"^Lab 0's test program was killed by SIGSEGV, 0 of [0-9]+ records written: "
                                      r"the grader failed, not the student's code")
        self.assertIn(f"rdmalab-grade: alice: lab 0: THE GRADER FAILED: {errors['0']}", self.said["crashed"])
        lab = self.preflight_json("crashed")["labs"][0]
        self.assertEqual((lab["ok"], lab["forced"]), (False, True))
        self.assertRegex(lab["why"], r"^the solution could not be graded here \(Lab 0's test program was killed")


class GraderFailed(KitCase):
    """run.grader_failed on a lab's test program's ending, without a guest:
    what the student's code can cause (a crash or a hang of its own is a
    failed test in records written whole) is never the grader's failure."""

    def failed(self, rc: int, records: int, rules: bool = True) -> str:
        out = self.tmp()
        with open(out / "steps.jsonl", "w") as f:
            f.write('{"test": "t"}\n' * records)
        settings = Settings(kit=str(KIT), out=str(out), labs=(0,), all_labs=(0,), rules=rules)
        return grader_run.grader_failed(settings, 0, rc, str(out / "steps.jsonl"))

    def test_a_program_that_ends_with_every_record_is_the_students(self) -> None:
        most = len(rubric(0))
        self.assertEqual(self.failed(0, most), "")
        self.assertEqual(self.failed(1, most), "")

    def test_a_program_killed_or_failing_itself_is_the_graders(self) -> None:
        most = len(rubric(0))
        self.assertRegex(self.failed(128 + 11, 0), rf"^Lab 0's test program was killed by SIGSEGV, 0 of {most} records")
        self.assertRegex(self.failed(-9, 0), r"^Lab 0's test program was killed by SIGKILL")
        self.assertRegex(self.failed(124, 0), r"ran out of the grader's limit \([0-9]+ s for the whole lab\)")
        self.assertRegex(self.failed(2, 0), r"failed itself \(exit 2: its message is at the end of logs/lab0/steps.out\)")
        self.assertRegex(self.failed(125, 0), r"could not be started in the sandbox \(exit 125\)")
        self.assertRegex(self.failed(1, most - 1), rf"ended \(exit 1\) with {most - 1} records of the rubric's {most} tests")

    def test_without_the_rules_nothing_is_the_graders(self) -> None:
        self.assertEqual(self.failed(128 + 11, 0, rules=False), "")


def plant(folder: Path, file: str, old: str, new: str) -> None:
    """OLD replaced by NEW in FOLDER/FILE, once (the test fails when OLD is not there)."""
    path = folder / file
    text = path.read_text()
    if text.count(old) != 1:
        raise AssertionError(f"{path}: expected {old!r} once, to plant a mistake")
    # Written now: newer than the kit's objects copied (cp -a keeps their
    # times), so the grader's build of the kit makes them again.
    path.write_text(text.replace(old, new))


if __name__ == "__main__":
    import unittest

    unittest.main()
