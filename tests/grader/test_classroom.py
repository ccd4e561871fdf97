"""GitHub Classroom's recipe (docs/instructor.md, "GitHub Classroom"),
without GitHub: we cannot run Actions here.

- grader/classroom/classroom.yml parses (yq) and has what Classroom and its
  grading reporter read: the workflow's and the job's names, a push trigger,
  one job on an Ubuntu runner, the kit's packages installed and make grade
  run with sudo, and the reporter's step with, for each of its runners (an
  id of letters and digits, the reporter's own pattern), the step of that id
  before it and the variable ID_RESULTS set to its output;
- the workflow's own Report step, run here on a folder laid out as make
  grade leaves it, writes a result that decodes (base64) to JSON valid
  against the reporter's format (schemas/classroom-result.json, written from
  its source) whose scores add up to the records' points, and whose maximum,
  tests and status are the records';
- the result of every test of every lab failing with the longest message
  the grader keeps fits in one environment variable (128 KiB, Linux's
  MAX_ARG_STRLEN), which is how the reporter gets it.
The records: each student of the class folders in RDMALAB_CLASS_DIRS
(":"-separated; default: the sample classes of tests/grader/test_samples.py)
and students made here. No RDMA, no guest.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from pathlib import Path
from typing import Any

from tests.kitbase import KIT, KitCase, labs, run

WORKFLOW = KIT / "grader/classroom/classroom.yml"
SCHEMA = KIT / "tests/grader/schemas/classroom-result.json"
JOB = "run-autograding-tests"
REPORTER = "classroom-resources/autograding-grading-reporter@"
ARG_MAX = 131072  # MAX_ARG_STRLEN: one environment variable's bytes


def class_dirs() -> list[Path]:
    given = os.environ.get("RDMALAB_CLASS_DIRS")
    if given:
        return [Path(d) for d in given.split(":") if d]
    return sorted(p for p in (KIT / "build/grader-samples").glob("results-*") if p.is_dir())


def graded_students(dirs: list[Path]) -> list[Path]:
    """Each student folder with records, a submission and a report."""
    return [s for d in dirs for s in sorted(d.iterdir())
            if s.is_dir() and all((s / f).is_file() for f in ("results.jsonl", "submission.json", "report.txt"))]


def workflow() -> dict[str, Any]:
    done = run(["yq", ".", WORKFLOW], merge=False, status=None)
    if done.returncode != 0:
        raise AssertionError(f"{WORKFLOW} does not parse: {done.stderr[:300]}")
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


class TheWorkflow(KitCase):
    """What Classroom and its reporter read of classroom.yml."""

    wf: dict[str, Any]

    @classmethod
    def setUpClass(cls) -> None:
        cls.wf = workflow()

    def job(self) -> dict[str, Any]:
        job: dict[str, Any] = self.wf["jobs"][JOB]
        return job

    def test_the_workflow_is_named_as_classroom_looks_for_it(self) -> None:
        self.assertEqual("Autograding Tests", self.wf.get("name"))

    def test_it_runs_on_push(self) -> None:
        on = self.wf.get("on")
        self.assertTrue((isinstance(on, list) and "push" in on) or (isinstance(on, dict) and "push" in on),
                        'no push trigger ("on" must be quoted: YAML 1.1 reads a bare on as true)')

    def test_one_job_on_a_github_hosted_ubuntu_runner(self) -> None:
        self.assertEqual([JOB], list(self.wf["jobs"]), "expected one job, run-autograding-tests (Classroom looks for it)")
        self.assertTrue(str(self.job().get("runs-on", "")).startswith("ubuntu-"))

    def test_it_checks_out_installs_the_kits_packages_and_grades_as_root(self) -> None:
        steps = self.job()["steps"]
        self.assertTrue(any(s.get("uses", "").startswith("actions/checkout@") for s in steps), "no checkout step")
        runs = [s.get("run", "") for s in steps]
        parts = next((m.group(1) for r in runs for m in [re.search(r"sudo scripts/deps install((?: [a-z]+)+)", r)] if m), None)
        self.assertIsNotNone(parts, "no step installs the kit's packages with sudo scripts/deps install PART...")
        self.assertTrue(any(re.search(r"sudo .*make grade", r) for r in runs), "no step runs make grade as root (sudo)")
        self.run_cmd(["scripts/deps", "list", *(parts or "").split()])

    def test_the_reporters_runners_each_have_their_step_before_it_and_its_variable(self) -> None:
        steps = self.job()["steps"]
        at = [i for i, s in enumerate(steps) if s.get("uses", "").startswith(REPORTER)]
        self.assertEqual(1, len(at), f"expected one step that uses {REPORTER}")
        reporter = steps[at[0]]
        runners = str(reporter.get("with", {}).get("runners", ""))
        self.assertTrue(runners, "the reporter's step has no runners")
        ids = [s.get("id") for s in steps]
        for rid in runners.split(","):
            with self.subTest(rid):
                self.assertRegex(rid, r"^[A-Za-z0-9]+$", "not letters and digits (the reporter's pattern)")
                var = f"{rid.upper()}_RESULTS"
                got = re.sub(r"\s", "", str(reporter.get("env", {}).get(var, "")))
                self.assertEqual(f"${{{{steps.{rid}.outputs.result}}}}", got, f"the reporter's env {var}")
                self.assertIn(rid, ids[:at[0]], f"no step with id {rid} before the reporter's")


class TheReportStep(KitCase):
    """The workflow's Report step, run as on the runner, on records."""

    report_run: str
    variable: str
    made: Path

    @classmethod
    def setUpClass(cls) -> None:
        steps = workflow()["jobs"][JOB]["steps"]
        reporter = next(s for s in steps if s.get("uses", "").startswith(REPORTER))
        rid = str(reporter["with"]["runners"]).split(",")[-1]
        cls.report_run = next(s.get("run", "") for s in steps if s.get("id") == rid)
        cls.variable = f"{rid.upper()}_RESULTS"
        cls.made = cls.class_tmp("rdmalab-test-classroom.")

    def report(self, student: Path) -> tuple[dict[str, Any], int]:
        """The Report step on STUDENT laid out as make grade leaves it
        (GRADE_OUT/NAME/RUN/, latest, labs.txt): the decoded result, and
        its size in base64."""
        temp = self.tmp()
        run_dir = temp / "grade/student/2026-01-01T000000Z"
        run_dir.mkdir(parents=True)
        for f in ("submission.json", "results.jsonl", "report.txt"):
            (run_dir / f).write_bytes((student / f).read_bytes())
        (temp / "grade/student/latest").symlink_to("2026-01-01T000000Z")
        (temp / "grade/student/labs.txt").write_text("")
        output = temp / "output"
        output.write_text("")
        done = self.run_cmd(["bash", "-eo", "pipefail", "-c", self.report_run], status=None,
                            env={"RUNNER_TEMP": str(temp), "GITHUB_OUTPUT": str(output)})
        self.assertEqual(0, done.returncode, f"{student}: the Report step failed: {done.stdout[-400:]}")
        first = (student / "report.txt").read_text().splitlines()[0][:40]
        self.assertIn(first, done.stdout, f"{student}: the Report step did not print report.txt")
        results = [ln[len("result="):] for ln in output.read_text().splitlines() if ln.startswith("result=")]
        self.assertEqual(1, len(results), f"{student}: expected one result= line in GITHUB_OUTPUT")
        try:
            decoded = json.loads(base64.b64decode(results[0], validate=True))
        except (binascii.Error, ValueError):
            self.fail(f"{student}: the result is not base64 of JSON")
        return decoded, len(results[0])

    def check(self, student: Path) -> dict[str, Any]:
        """The result against the schema and the records (the reporter
        sends Classroom the tests' scores, out of max_score)."""
        result, encoded = self.report(student)
        path = self.tmp() / "result.json"
        path.write_text(json.dumps(result))
        valid = run(["jsonschema", "-i", path, SCHEMA], status=None)
        self.assertEqual(0, valid.returncode, f"{student}: not the reporter's format: {valid.stdout[:400]}")
        sub = json.loads((student / "submission.json").read_text())
        records = [json.loads(ln) for ln in (student / "results.jsonl").read_text().splitlines() if ln]
        ungradable, unsafe = sub.get("ungradable") is not None, sub.get("unsafe") is not None
        want = {"points": 0 if ungradable else sum(r["points"] for r in records),
                "max": sum(r["max"] for r in records),
                "tests": 1 if ungradable else len(records) + (1 if unsafe else 0),
                "status": "error" if ungradable else
                ("pass" if not unsafe and all(r["result"] == "pass" for r in records) else "fail")}
        got = {"points": sum(t["score"] for t in result["tests"]), "max": result["max_score"],
               "tests": len(result["tests"]), "status": result["status"]}
        self.assertEqual(want, got, f"{student}: the result says {got}, the records {want}")
        self.assertLess(encoded, ARG_MAX - len(self.variable) - 2,
                        f"{student}: {encoded} bytes of base64, more than one environment variable holds")
        return result

    def made_student(self, name: str, submission: dict[str, Any], records: list[dict[str, Any]], report: str) -> Path:
        d = self.made / name
        d.mkdir()
        (d / "submission.json").write_text(json.dumps({"name": name, "made": "t", "source": "", "intake": "",
                                                       **submission}) + "\n")
        (d / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        (d / "report.txt").write_text(report + "\n")
        return d

    def test_each_graded_student_of_the_sample_classes(self) -> None:
        students = graded_students(class_dirs())
        if not students:
            self.skipTest("no class folder (tests/grader/run-samples makes them; or set RDMALAB_CLASS_DIRS)")
        for s in students:
            with self.subTest(str(s)):
                self.check(s)

    def test_an_ungradable_submission_is_an_error(self) -> None:
        d = self.made_student("ungradable", {"graded": "Lab 3", "unsafe": None, "seconds": None,
                                             "ungradable": "the test run did not finish"}, [],
                              "ungradable: UNGRADABLE: the test run did not finish")
        self.assertEqual("error", self.check(d)["status"])

    def test_an_unsafe_grade_fails_and_says_what_was_missing(self) -> None:
        d = self.made_student("unsafe", {"graded": "Lab 0", "unsafe": "root (it runs as uid 1000)", "ungradable": None,
                                         "seconds": 1},
                              [{"lab": 0, "step": 1, "test": "t", "result": "pass", "points": 2, "max": 2,
                                "message": "", "skipped_because": None, "said": "", "ms": 1}], "unsafe: 2/2 points")
        first = self.check(d)["tests"][0]
        self.assertEqual("sandbox", first["name"])
        self.assertTrue(first["message"].startswith("UNSAFE: ") and "root (it runs as uid 1000)" in first["message"],
                        first["message"])

    def test_a_long_failure_message_is_cut_after_a_word_and_says_so(self) -> None:
        line = "step 2: " + "lab3: connection lost: the receiver disconnected; " * 6
        d = self.made_student("long", {"graded": "Lab 3", "unsafe": None, "ungradable": None, "seconds": 1},
                              [{"lab": 3, "step": 0, "test": "t", "result": "FAIL", "points": 0, "max": 2,
                                "message": line, "skipped_because": None, "said": "", "ms": 1}], "long: 0/2 points")
        message = self.check(d)["tests"][0]["message"]
        self.assertTrue(message.endswith("..."), f"a cut message ends with ...: {message!r}")
        kept = message[:-3]
        self.assertTrue(line.startswith(kept) and line[len(kept)] in " ;",
                        f"the message is cut mid-word: {message[-30:]!r}")

    def test_every_lab_failing_with_the_longest_messages_fits_one_variable(self) -> None:
        long = "x" * 600
        text = "\n".join(f"{i} {long}" for i in range(30))
        lines = []
        for lab in labs():
            rubric = KIT / f"build/rubric/lab{lab}.jsonl"
            records = self.tmp() / "records.jsonl"
            records.write_text("".join(json.dumps({"lab": r["lab"], "step": r["step"], "test": r["test"], "result": "FAIL",
                                                   "points": 0, "max": r["max"], "message": text, "skipped_because": None,
                                                   "said": text, "ms": 12345}) + "\n"
                                       for r in map(json.loads, rubric.read_text().splitlines())))
            lines.append(self.run_cmd(["scripts/results", "lab", "--lab", str(lab), rubric, records], merge=False).stdout)
        d = self.made / "worst"
        d.mkdir()
        (d / "results.jsonl").write_text("".join(lines))
        (d / "submission.json").write_text(json.dumps({"name": "worst", "made": "t", "graded": "every lab", "source": "",
                                                       "intake": "", "unsafe": None, "ungradable": None,
                                                       "seconds": 1}) + "\n")
        (d / "report.txt").write_text("worst: 0 points\n")
        _, encoded = self.report(d)
        self.check(d)
        print(f"every lab failing, with the longest messages kept: {encoded} bytes of base64 (at most {ARG_MAX})")
