"""PrairieLearn's external grader works on a fake /grade (see
docs/instructor.md, "PrairieLearn").

First the view alone, on crafted records of a grade made --unsafe: the
score, the failure's texts and the note of what the sandbox lacked, in
PrairieLearn's fields. Then the bundle, made from the committed kit, and
what a course copies (a question per lab whose upload names are the lab's
FILES, the image's context without solutions/); then the entrypoint as
PrairieLearn would run it, from this kit (built: the image builds the same
kit once): on submissions it cannot grade (no file of the lab; a bad
--lab), and on Lab 0's reference solution in one guest. Each results.json
must be valid JSON in PrairieLearn's documented fields
(schemas/prairielearn-results.json, with jsonschema), the entrypoint must
exit 0, and the solution's score must be 1 (its rubric's whole) and equal
the points over the maximum of the grader's own records (kept in
/grade/results/rdmalab/).
"""

from __future__ import annotations

import json
import re
import shutil
import tarfile
import time
from pathlib import Path
from typing import Any

from tests.kitbase import KIT, KitCase, full_points, labs, run, scaled

SCHEMA = KIT / "tests/grader/schemas/prairielearn-results.json"
LAB = 0
CRAFTED_RECORDS = [
    {"lab": 2, "step": 1, "test": "a", "result": "pass", "points": 1, "max": 1, "message": "", "skipped_because": None,
     "said": "", "ms": 1},
    {"lab": 2, "step": 2, "test": "b", "result": "FAIL", "points": 0, "max": 3, "message": "expected 1, got 2",
     "skipped_because": None, "said": "hello", "ms": 1},
]
CRAFTED_SUBMISSION = {"name": "s", "made": "t", "graded": "Lab 2", "source": "", "intake": "",
                      "unsafe": "root (it runs as uid 1000)", "ungradable": None, "seconds": 1}


def lab_files(lab: int) -> list[str]:
    return [ln for ln in (KIT / f"labs/lab{lab}/FILES").read_text().splitlines() if ln and not ln.startswith("#")]


class PrairieLearnCase(KitCase):
    def in_format(self, path: Path) -> dict[str, Any]:
        """PATH parses, is PrairieLearn's format and within its 1 MB."""
        self.assertTrue(path.exists() and path.stat().st_size, f"no {path}")
        done = run(["jsonschema", "-i", path, SCHEMA], status=None)
        self.assertEqual(0, done.returncode, f"not PrairieLearn's format: {done.stdout[:400]}")
        self.assertLessEqual(path.stat().st_size, 1048576, "results.json is past PrairieLearn's 1 MB")
        parsed: dict[str, Any] = json.loads(path.read_text())
        return parsed


class TheView(PrairieLearnCase):
    def test_crafted_unsafe_records_give_the_score_the_failures_texts_and_the_note(self) -> None:
        d = self.tmp()
        (d / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in CRAFTED_RECORDS))
        (d / "submission.json").write_text(json.dumps(CRAFTED_SUBMISSION) + "\n")
        out = d / "view.json"
        out.write_text(self.run_cmd(["scripts/results", "prairielearn", d], merge=False).stdout)
        v = self.in_format(out)
        self.assertEqual(0.25, v["score"])
        self.assertRegex(v["message"], r"UNSAFE: .*root \(it runs as uid 1000\)")
        self.assertEqual(("expected 1, got 2", "hello", 3),
                         (v["tests"][1]["message"], v["tests"][1]["output"], v["tests"][1]["max_points"]))


class TheBundle(PrairieLearnCase):
    """What a course copies."""

    bundle: Path
    image_files: list[str]

    @classmethod
    def setUpClass(cls) -> None:
        cls.bundle = cls.class_tmp("rdmalab-prairielearn-test.") / "bundle"
        run(["grader/prairielearn/bundle", "-o", cls.bundle, "--image", "me/rdmalab-pl"], timeout=900)
        with tarfile.open(cls.bundle / "image/rdmalab-handout.tar.gz") as t:
            cls.image_files = t.getnames()

    def test_the_image_has_a_dockerfile_the_entrypoint_and_no_solutions(self) -> None:
        self.assertTrue((self.bundle / "image/Dockerfile").exists())
        self.assertIn("rdmalab/grader/prairielearn/entrypoint", self.image_files)
        self.assertEqual([], [n for n in self.image_files if n.startswith("rdmalab/solutions/")])

    def test_a_question_per_lab_graded_externally_by_the_image_with_the_labs_upload_names(self) -> None:
        uuids = []
        for lab in labs():
            with self.subTest(lab=lab):
                q = self.bundle / f"questions/rdmalab/lab{lab}"
                info = json.loads((q / "info.json").read_text())
                opts = info["externalGradingOptions"]
                self.assertEqual(("v3", "External", True, "me/rdmalab-pl"),
                                 (info["type"], info["gradingMethod"], opts["enabled"], opts["image"]))
                self.assertRegex(info["uuid"], r"^[0-9a-f-]{36}$")
                self.assertLessEqual(opts["timeout"], 600)
                self.assertTrue(opts["entrypoint"].startswith(f"/rdmalab/grader/prairielearn/entrypoint --lab {lab} "))
                self.assertIn(f'<pl-file-upload file-names="{",".join(lab_files(lab))}"></pl-file-upload>',
                              (q / "question.html").read_text())
                uuids.append(info["uuid"])
        self.assertEqual(len(uuids), len(set(uuids)), "two questions share a uuid")


class TheEntrypoint(PrairieLearnCase):
    """The entrypoint, as PrairieLearn runs it, on /grade (GRADE_ROOT)."""

    grade: Path

    @classmethod
    def setUpClass(cls) -> None:
        # /grade, like the kit, is read by the grader's unprivileged uids.
        top = cls.class_tmp("rdmalab-prairielearn-test.")
        top.chmod(0o755)
        cls.grade = top / "grade"
        (cls.grade / "student").mkdir(parents=True)
        (cls.grade / "student/notes.c").write_text("int x;\n")

    def entrypoint(self, *args: str) -> tuple[dict[str, Any], str]:
        """A fresh /grade/results, the entrypoint (exit 0: else PrairieLearn
        reads no results.json); the result and the entrypoint's output."""
        shutil.rmtree(self.grade / "results", ignore_errors=True)
        done = self.run_cmd(["grader/prairielearn/entrypoint", *args], env={"GRADE_ROOT": str(self.grade)},
                            timeout=3600)
        return self.in_format(self.grade / "results/results.json"), done.stdout

    def test_a_submission_with_no_file_of_the_lab_is_not_gradable_and_says_why(self) -> None:
        r, _ = self.entrypoint("--lab", str(LAB))
        self.assertFalse(r["gradable"])
        self.assertIn(f"no file of Lab {LAB}", r["message"])

    def test_a_lab_the_kit_does_not_have_is_not_gradable(self) -> None:
        r, _ = self.entrypoint("--lab", "99")
        self.assertFalse(r["gradable"])
        self.assertRegex(r["message"], r"--lab .99.")

    def test_lab0s_solution_scores_1_the_records_points_over_their_maximum(self) -> None:
        # Uploaded as PrairieLearn keeps it: by name. Its own limit catches
        # a hang only: a question's 570 s is PrairieLearn's, and speed is not
        # this test's to judge (docs/instructor.md gives the times).
        for f in lab_files(LAB):
            shutil.copy(KIT / f"solutions/lab{LAB}/{f}", self.grade / "student")
        t0 = time.monotonic()
        try:
            r, out = self.entrypoint("--lab", str(LAB), "--timeout", str(scaled(1800)))
            print(f"graded in {time.monotonic() - t0:.0f} s")
        finally:
            for f in lab_files(LAB):
                (self.grade / "student" / f).unlink()
        records = [json.loads(ln) for ln in (self.grade / "results/rdmalab/results.jsonl").read_text().splitlines() if ln]
        points, most = sum(x["points"] for x in records), sum(x["max"] for x in records)
        self.assertEqual(full_points(LAB), most, "the records' maximum is not the rubric's")
        self.assertTrue(r["gradable"], r.get("message"))
        self.assertAlmostEqual(points / most, r["score"], places=6)
        self.assertEqual(1, r["score"])
        self.assertTrue(r["tests"] and all(t["points"] == t["max_points"] for t in r["tests"]))
        self.assertTrue(any(re.fullmatch(r"ignored notes.c: .*", ln) for ln in out.splitlines()),
                        "notes.c was not said to be ignored")
        print(f"Lab {LAB}'s solution scored {r['score']} ({most} points), in PrairieLearn's fields")
