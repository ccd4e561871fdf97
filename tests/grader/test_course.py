"""test_course: a class's records and views, as a course uses them: a regrade
of one lab (or a late lab) merges into the student's record and the class
pages; a roster makes every student a row; submission times, deadlines and
late days; every view says what kind of 0 a lab's is; what it was graded
with; the kit's preflight and the verified keys. No guest: the class
folders are made by hand, the grader's publishing called directly.

  python3 -m unittest -v tests.grader.test_course
"""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path
from typing import Callable

from tests.kitbase import KIT, KitCase

sys.path.insert(0, str(KIT / "grader"))

from rdmalab_grade import cli, course, model, publish, results  # noqa: E402
from rdmalab_grade.batch import BuildOutcome, Log, RunOutcome, Submission, write_build, write_run  # noqa: E402
from rdmalab_grade.settings import Settings  # noqa: E402

MADE = "2030-01-02T03:04:05Z"
STUB = "int lab_step(void) { return -38; }\n"


def record(lab: int, step: int, test: str, passed: bool, most: int = 1, message: str = "") -> dict[str, object]:
    return {
        "lab": lab, "step": step, "test": test, "result": "pass" if passed else "FAIL",
        "points": most if passed else 0, "max": most, "message": "" if passed else (message or "expected 0, got 1"),
        "skipped_because": None, "said": "", "ms": 3,
    }  # fmt: skip


def built(lab: int, ok: bool = True) -> dict[str, object]:
    return {**record(lab, 0, f"lab{lab}_builds", ok, 0, "labs/x.c:1: error: nope"), "points": 0, "max": 0}


def about(name: str, **fields: object) -> dict[str, object]:
    doc: dict[str, object] = {"name": name, "made": MADE, "graded": "Labs 0, 3", "source": "", "intake": "",
                              "unsafe": None, "ungradable": None, "seconds": 5}  # fmt: skip
    doc.update(fields)
    return doc


def facts(attempted: bool = True, submitted: str | None = None) -> dict[str, object]:
    return {"made": MADE, "submitted": submitted, "submitted_from": model.FROM_PLATFORM, "attempted": attempted}


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def student(top: Path, name: str, records: list[dict[str, object]], **fields: object) -> Path:
    """TOP/NAME as the grader leaves it: its records, submission.json, views."""
    folder = top / name
    (folder / "logs").mkdir(parents=True)
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "submission.json").write_text(json.dumps(about(name, **fields)) + "\n")
    results.write_submission(str(folder))
    return folder


def pages(top: Path, *options: str) -> str:
    """TOP's class pages, made with OPTIONS (course.py's words): the summary."""
    words = list(options)
    pairs = [(words[i], words[i + 1]) for i in range(0, len(words), 2)]
    return results.write_class(str(top), [], MADE, course.kept_options(str(top), pairs))


class ARegradeMerges(KitCase):
    """Grading lab 3 of alice again into the class folder keeps her lab 0 and
    leaves bob alone; the class pages keep both labs."""

    def setUp(self) -> None:
        self.kit = self.tmp()
        (self.kit / "build/rubric").mkdir(parents=True)
        (self.kit / "build/rubric/lab3.jsonl").write_text(
            '{"lab":3,"step":1,"test":"hashes","max":2,"needs":null,"receiver":null}\n'
            '{"lab":3,"step":2,"test":"announces","max":1,"needs":null,"receiver":null}\n'
        )
        (self.kit / "labs/lab3").mkdir(parents=True)
        (self.kit / "labs/lab3/hash.c").write_text(STUB)
        self.top = self.tmp()
        lab0 = [built(0), record(0, 1, "lists", True, 2)]
        old3 = [built(3, ok=False), record(3, 1, "hashes", False, 2), record(3, 2, "announces", False)]
        student(self.top, "alice", lab0 + old3, labs={"0": facts(), "3": facts()})
        (self.top / "alice/logs/build-lab0.log").write_text("lab 0's build\n")
        (self.top / "alice/logs/files-taken.txt").write_text("lab0/devices.c: taken\nlab3/hash.c: taken\n")
        self.bob = student(self.top, "bob", lab0)
        self.bob_before = (self.bob / "report.txt").read_text()
        self.settings = Settings(kit=str(self.kit), out=str(self.top), labs=(3,), all_labs=(0, 3), mode="uml",
                                 graded="Lab 3 (Lab 0 not asked for)", kit_commit="abc1234",
                                 submitted="2030-01-05T00:00:00Z")  # fmt: skip

    def regrade(self, hash_c: str) -> Submission:
        """Alice's lab 3 graded now: it builds and passes "hashes"."""
        sub = Submission("alice", str(self.tmp()), 0, 64101, taken=["lab3/hash.c: taken"])
        w = Path(sub.work(self.settings))
        (w / "results/lab3").mkdir(parents=True)
        (w / "tree/labs/lab3").mkdir(parents=True)
        (w / "tree/labs/lab3/hash.c").write_text(hash_c)
        (w / "results/lab3/steps.jsonl").write_text(
            json.dumps(record(3, 1, "hashes", True, 2)) + "\n"
            + json.dumps(record(3, 2, "announces", False, 1, "Test timeout expired")) + "\n"
        )
        write_build(str(w), BuildOutcome(seconds=2))
        write_run(str(w), RunOutcome(graded=True, seconds=3, kernel="6.1.0-uml", multiplier=1.5))
        published = publish.publish(self.settings, sub, "", Log(None, io.StringIO()))
        self.assertTrue(published, "the regrade was not published")
        return sub

    def test_the_other_labs_records_and_logs_stay(self) -> None:
        self.regrade("int lab_step(void) { return 0; }\n")
        alice = model.read_submission(str(self.top / "alice"))
        self.assertEqual(alice.labs(), [0, 3])
        self.assertEqual([r.points for r in alice.of_lab(0)], [0, 2], "lab 0's records as they were")
        self.assertEqual([r.points for r in alice.of_lab(3)], [0, 2, 0], "lab 3's records of now")
        self.assertEqual((self.top / "alice/logs/build-lab0.log").read_text(), "lab 0's build\n")
        taken = (self.top / "alice/logs/files-taken.txt").read_text()
        self.assertEqual(taken, "lab0/devices.c: taken\nlab3/hash.c: taken\n")
        self.assertEqual(alice.graded, "Labs 0, 3")

    def test_the_report_shows_both_labs_and_what_graded_them(self) -> None:
        self.regrade("int lab_step(void) { return 0; }\n")
        report = (self.top / "alice/report.txt").read_text()
        self.assertHasLine("Lab 0: 2/2 points (passed)", report)
        self.assertHasLine("Lab 3: 2/3 points (timed out)", report)
        self.assertHasLine("with:   kit abc1234, mode uml, kernel 6.1.0-uml, limits x1.5", report)
        self.assertHasLine(f"  submitted 2030-01-05T00:00:00Z (from {model.FROM_PLATFORM}), graded "
                           + model.read_submission(str(self.top / "alice")).made, report)  # fmt: skip

    def test_the_lab_graded_now_has_its_facts_the_other_keeps_its(self) -> None:
        self.regrade("int lab_step(void) { return 0; }\n")
        doc = json.loads((self.top / "alice/submission.json").read_text())
        self.assertEqual(doc["labs"]["0"], facts())
        self.assertEqual((doc["labs"]["3"]["submitted"], doc["labs"]["3"]["attempted"]), ("2030-01-05T00:00:00Z", True))
        self.assertEqual((doc["kit"], doc["mode"], doc["kernel"], doc["multiplier"]), ("abc1234", "uml", "6.1.0-uml", 1.5))

    def test_the_stubs_unchanged_are_not_attempted(self) -> None:
        self.regrade(STUB)
        alice = model.read_submission(str(self.top / "alice"))
        self.assertEqual(model.lab_status(alice, 3), model.NOT_ATTEMPTED)

    def test_other_students_stay_and_the_class_pages_keep_every_lab(self) -> None:
        self.regrade("int lab_step(void) { return 0; }\n")
        written, said = publish.class_pages(self.settings)
        self.assertTrue(written, said)
        self.assertEqual((self.bob / "report.txt").read_text(), self.bob_before)
        by_id = {r["id"]: r for r in rows(self.top / "class.csv")}
        self.assertEqual((by_id["alice"]["lab0"], by_id["alice"]["lab3"], by_id["alice"]["total"]), ("2", "2", "4"))
        self.assertEqual((by_id["bob"]["lab0"], by_id["bob"]["lab3_status"]), ("2", model.NOT_GRADED))


class KindsOfZero(KitCase):
    """Each lab of each student says what kind of score it is, in every view;
    a lab the grader failed is not the student's 0."""

    top: Path
    summary: str
    csv: dict[str, dict[str, str]]
    html: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.top = cls.class_tmp()
        fail = [built(3), record(3, 1, "hashes", False, 2)]
        student(cls.top, "ann", fail, labs={"3": facts(attempted=False)})
        student(cls.top, "ben", [built(3, ok=False), record(3, 1, "hashes", False, 2)])
        student(cls.top, "cat", [built(3), record(3, 1, "hashes", False, 2, "Test timeout expired after 30 s")])
        student(cls.top, "dan", fail, lab_errors={"3": "the guest ran out of memory"})
        student(cls.top, "eve", [built(3), record(3, 1, "hashes", True, 2)], kit="abc1234", mode="uml",
                   kernel="6.1", multiplier=2)  # fmt: skip
        student(cls.top, "fay", [], ungradable="the RDMA environment failed")
        cls.summary = pages(cls.top)
        cls.csv = {r["id"]: r for r in rows(cls.top / "class.csv")}
        cls.html = (cls.top / "class.html").read_text()

    def test_class_csv_says_each_kind(self) -> None:
        got = {name: self.csv[name]["lab3_status"] for name in self.csv}
        want = {"ann": "not attempted", "ben": "does not build", "cat": "timed out", "dan": "grader failed",
                "eve": "passed", "fay": "grader failed"}  # fmt: skip
        self.assertEqual(got, want)

    def test_a_lab_the_grader_failed_has_no_points_of_the_students(self) -> None:
        self.assertEqual((self.csv["dan"]["lab3"], self.csv["dan"]["total"]), ("", "0"))
        self.assertIn("lab 3: the grader failed: the guest ran out of memory", self.csv["dan"]["notes"])
        self.assertHasLine("grader failed: dan: lab 3: the guest ran out of memory (not the student's 0)", self.summary)
        report = (self.top / "dan/report.txt").read_text()
        self.assertIn("the grader failed this lab, not you: the guest ran out of memory", report)

    def test_the_steps_figures_leave_out_a_lab_the_grader_failed(self) -> None:
        # Of ann, ben, cat, eve (dan's lab the grader failed, fay ungradable), eve passed step 1.
        self.assertIn('data-lab="3" data-step="1">1</td>', self.html)
        self.assertIn("25% of 4</td><td>hash the file</td>", self.html)

    def test_the_class_names_what_it_was_graded_with(self) -> None:
        self.assertHasLine("graded with: kit abc1234, mode uml, kernel 6.1, limits x2 (1 student(s))", self.summary)
        self.assertEqual([self.csv["eve"][k] for k in ("kit", "mode", "kernel", "multiplier")],
                         ["abc1234", "uml", "6.1", "2"])  # fmt: skip
        self.assertIn("Graded with kit abc1234, mode uml, kernel 6.1, limits x2 (1 student(s)).", self.html)

    def test_the_summary_counts_each_kind(self) -> None:
        self.assertHasLine(
            "lab 3: mean 0.5 of 2; 1 does not build, 2 grader failed, 1 not attempted, 1 passed, 1 timed out",
            self.summary,
        )

    def test_the_report_names_each_steps_title(self) -> None:
        self.assertHasLine("  step 1: hash the file", (self.top / "eve/report.txt").read_text())


class RosterAndLateDays(KitCase):
    """A roster makes every student a row, in its order, and flags a folder
    not on it; a lab late within the budget spends late days, one past it
    counts 0 with its points shown."""

    top: Path
    summary: str
    rows: list[dict[str, str]]
    by_id: dict[str, dict[str, str]]
    header: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.top = cls.class_tmp()
        lab3 = [built(3), record(3, 1, "hashes", True, 2)]
        student(cls.top, "s1", lab3, labs={"3": facts(submitted="2030-01-02T10:00:00Z")})
        student(cls.top, "s2", lab3, labs={"3": facts(submitted="2030-01-04T00:00:01Z")})
        student(cls.top, "s3", lab3, labs={"3": facts(submitted="2030-01-09T00:00:00Z")})
        student(cls.top, "zed", lab3)
        roster = cls.top.parent / f"{cls.top.name}-roster.csv"
        roster.write_text("id,name,email\ns2,Sam Two,s2@x\ns1,Sue One,s1@x\ns3,Sid Three,s3@x\ns4,Sal Four,s4@x\n")
        keys = cls.top.parent / f"{cls.top.name}-keys.csv"
        keys.write_text("id,verdict,detail\ns1,OK,matches\ns2,BAD,hash differs\n")
        cls.summary = pages(cls.top, "--roster", str(roster), "--deadline", "3=2030-01-02T12:00:00Z",
                               "--late-days", "3", "--keys", str(keys), "--key-points", "5")  # fmt: skip
        cls.rows = rows(cls.top / "class.csv")
        cls.by_id = {r["id"]: r for r in cls.rows}
        cls.header = (cls.top / "class.csv").read_text().split("\n")[0]

    def test_the_roster_gives_the_rows_and_their_order(self) -> None:
        self.assertEqual([r["id"] for r in self.rows], ["s2", "s1", "s3", "s4", "zed"])
        self.assertTrue(self.header.startswith('"id","name","email","lab3","key","total","max"'), self.header)
        self.assertEqual((self.by_id["s2"]["name"], self.by_id["s2"]["email"]), ("Sam Two", "s2@x"))

    def test_a_student_with_no_submission_is_a_row_of_0(self) -> None:
        s4 = self.by_id["s4"]
        self.assertEqual((s4["lab3"], s4["total"], s4["status"], s4["lab3_status"]),
                         ("0", "0", "no submission", "no submission"))  # fmt: skip
        self.assertHasLine("no submission: s4 (Sal Four): 0 in every lab", self.summary)

    def test_a_folder_not_on_the_roster_is_shown_and_flagged(self) -> None:
        self.assertEqual(self.by_id["zed"]["notes"], "not on the roster")
        self.assertHasLine("not on the roster: zed", self.summary)

    def test_late_days_are_spent_and_past_the_budget_a_lab_counts_0(self) -> None:
        self.assertEqual((self.by_id["s1"]["lab3"], self.by_id["s1"]["lab3_status"]), ("2", "passed"))
        self.assertEqual((self.by_id["s2"]["lab3"], self.by_id["s2"]["lab3_status"]),
                         ("2", "passed; late 2 days, late days used 2"))  # fmt: skip
        self.assertEqual(self.by_id["s2"]["late_days_used"], "2")
        self.assertEqual((self.by_id["s3"]["lab3"], self.by_id["s3"]["lab3_status"]),
                         ("0", "passed; late 7 days, past the late-day budget: counts 0"))  # fmt: skip
        self.assertHasLine("late: s3: lab 3: late 7 days, past the late-day budget: counts 0 (earned 2)", self.summary)

    def test_the_rule_is_stated(self) -> None:
        self.assertIn("rule: deadlines: lab 3 2030-01-02T12:00:00Z; 3 late day(s) per student", self.summary)

    def test_an_ok_key_adds_its_points(self) -> None:
        got = {i: (self.by_id[i]["key"], self.by_id[i]["total"], self.by_id[i]["max"]) for i in ("s1", "s2", "s4")}
        self.assertEqual(got, {"s1": ("OK", "7", "7"), "s2": ("BAD", "2", "7"), "s4": ("MISSING", "0", "7")})
        self.assertHasLine("keys: 1 OK, 1 BAD, 3 MISSING; an OK key adds 5 points", self.summary)

    def test_numbers_are_numbers(self) -> None:
        line = next(x for x in (self.top / "class.csv").read_text().split("\n") if x.startswith('"s1"'))
        self.assertTrue(line.startswith('"s1","Sue One","s1@x",2,"OK",7,7,"graded",5,'), line)


class KeptOptions(KitCase):
    """The class folder keeps its options: pages drawn again with none (a
    regrade, a late submission) keep the roster, deadlines and keys, even
    when the roster's file has gone; an option given again replaces only
    itself."""

    def setUp(self) -> None:
        self.top = self.tmp() / "class"
        student(self.top, "s1", [built(3), record(3, 1, "hashes", True, 2)],
                labs={"3": facts(submitted="2030-01-04T00:00:01Z")})  # fmt: skip
        roster = self.tmp() / "roster.csv"
        roster.write_text("id,name\ns1,Sue One\ns2,Sam Two\n")
        pages(self.top, "--roster", str(roster), "--deadline", "3=2030-01-02T12:00:00Z", "--late-days", "3")
        roster.unlink()

    def test_pages_drawn_with_no_options_keep_the_kept_ones(self) -> None:
        summary = pages(self.top)
        by_id = {r["id"]: r for r in rows(self.top / "class.csv")}
        self.assertEqual(sorted(by_id), ["s1", "s2"])
        self.assertEqual(by_id["s1"]["lab3_status"], "passed; late 2 days, late days used 2")
        self.assertIn("3 late day(s) per student", summary)

    def test_an_option_given_again_replaces_only_itself(self) -> None:
        pages(self.top, "--late-days", "1")
        by_id = {r["id"]: r for r in rows(self.top / "class.csv")}
        self.assertEqual(sorted(by_id), ["s1", "s2"])
        self.assertEqual(by_id["s1"]["lab3_status"], "passed; late 2 days, past the late-day budget: counts 0")

    def test_a_kept_file_that_does_not_read_is_one_line(self) -> None:
        (self.top / "course.json").write_text("{")
        with self.assertRaises(model.BadInput) as caught:
            pages(self.top)
        self.assertIn("course.json: not the class's options", str(caught.exception))


class NotAttemptedIsNeverLate(KitCase):
    """A lab the student did not attempt (its stubs, unchanged) spends no
    late day, though the submission came late: their budget goes to the lab
    they handed in."""

    def test_the_budget_goes_to_the_lab_handed_in(self) -> None:
        top = self.tmp() / "class"
        late = "2030-01-04T00:00:01Z"
        student(top, "s1", [built(0), record(0, 1, "lists", False), built(3), record(3, 1, "hashes", True, 2)],
                labs={"0": facts(attempted=False, submitted=late), "3": facts(submitted=late)})  # fmt: skip
        pages(top, "--deadline", "2030-01-02T12:00:00Z", "--late-days", "2")
        s1 = rows(top / "class.csv")[0]
        self.assertEqual((s1["lab0_status"], s1["lab3_status"], s1["lab3"], s1["late_days_used"]),
                         ("not attempted", "passed; late 2 days, late days used 2", "2", "2"))  # fmt: skip


class SubmissionTimes(KitCase):
    """A platform's time, in any zone, is kept in UTC; Gradescope's metadata
    file gives it; a time without its zone, or a file without one, is one
    line."""

    def test_a_time_with_an_offset_is_kept_in_utc(self) -> None:
        self.assertEqual("2026-12-04T21:13:00Z", course.any_utc_time("2026-12-04T13:13:00.365935-08:00", "t"))
        self.assertEqual("2026-12-04T21:13:00Z", course.any_utc_time("2026-12-04T21:13:00Z", "t"))

    def test_a_deadline_with_an_offset_is_the_same_instant(self) -> None:
        opts = course.class_options([("--deadline", "3=2026-12-05T00:59:00+01:00")])
        self.assertEqual("2026-12-04T23:59:00Z", course.time_text(opts.deadlines[3]))

    def test_a_time_without_its_zone_is_refused(self) -> None:
        with self.assertRaises(model.BadInput) as caught:
            course.any_utc_time("2026-12-04T21:13:00", "--submitted")
        self.assertIn("give a time with its zone", str(caught.exception))

    def test_gradescopes_metadata_gives_the_time(self) -> None:
        meta = self.tmp() / "submission_metadata.json"
        meta.write_text('{"id": 1, "created_at": "2026-12-05T00:30:00+01:00", "users": []}')
        self.assertEqual("2026-12-04T23:30:00Z", course.submitted_in(str(meta)))
        meta.write_text('{"id": 1}')
        with self.assertRaises(model.BadInput) as caught:
            course.submitted_in(str(meta))
        self.assertIn("no created_at in it", str(caught.exception))


class BadInputs(KitCase):
    """A roster, keys file or preflight.json that is not what it must be
    stops the views with one line naming it."""

    def refused(self, text: str, read: Callable[[str], object], name: str) -> str:
        path = self.tmp() / name
        path.write_text(text)
        with self.assertRaises(model.BadInput) as caught:
            read(str(path if name != "preflight.json" else path.parent))
        said = str(caught.exception)
        self.assertNotIn("\n", said)
        return said

    def test_a_roster_without_an_id_column_is_refused(self) -> None:
        self.assertIn("expected a header with the columns id, name", self.refused("name\nx\n", model.read_roster, "r.csv"))

    def test_a_roster_with_an_id_twice_is_refused(self) -> None:
        self.assertIn(":3: id a again", self.refused("id,name\na,A\na,B\n", model.read_roster, "r.csv"))

    def test_a_key_verdict_not_known_is_refused(self) -> None:
        self.assertIn(":2: verdict MAYBE", self.refused("id,verdict,detail\na,MAYBE,x\n", model.read_keys, "k.csv"))

    def test_a_bad_preflight_is_refused(self) -> None:
        said = self.refused('{"kit":"x","mode":"uml","labs":[{"lab":2}]}', model.read_preflight, "preflight.json")
        self.assertIn("expected the preflight's result", said)

    def test_a_bad_deadline_is_refused(self) -> None:
        with self.assertRaises(model.BadInput):
            course.class_options([("--deadline", "3=tomorrow")])


class PreflightMarks(KitCase):
    """A lab graded though the kit's preflight failed (--force) is marked in
    summary.txt, class.html, class.csv and each report.txt."""

    def test_every_view_marks_a_forced_lab(self) -> None:
        top = self.tmp()
        (top / "preflight.json").write_text(json.dumps({"kit": "abc", "mode": "uml", "labs": [
            {"lab": 3, "solution": 40, "stub": 0, "most": 58, "ok": False, "forced": True, "why": "the solution fell short"},
            {"lab": 0, "solution": 8, "stub": 0, "most": 8, "ok": True, "forced": False, "why": ""}]}))  # fmt: skip
        student(top, "amy", [built(3), record(3, 1, "hashes", True, 2)])
        summary = pages(top)
        note = "lab 3 was graded though the kit's preflight failed (--force): the solution fell short (solution 40, stubs 0, of 58)"
        self.assertHasLine(f"preflight: {note}", summary)
        self.assertIn(note, rows(top / "class.csv")[0]["notes"])
        html = note.replace("'", "&apos;")
        self.assertIn(f'<p class="stuck banner" data-forced="3">{html}</p>', (top / "class.html").read_text())
        self.assertHasLine(f"NOTE: {note}", (top / "amy/report.txt").read_text())
        self.assertNotIn("lab 0 was graded", summary)


class TheCommandLines(KitCase):
    """rdmalab-grade and scripts/results class take the course's options,
    and refuse a bad one with one line and exit 2."""

    def test_rdmalab_grade_keeps_the_class_options_for_its_pages(self) -> None:
        o = cli.parse(["--roster", "r.csv", "--deadline", "3=2030-01-02T12:00:00Z", "--late-days", "2",
                       "--submitted", "2030-01-01T00:00:00Z", "sub"], "", str(KIT))  # fmt: skip
        self.assertEqual(o.class_views, [("--roster", "r.csv"), ("--deadline", "3=2030-01-02T12:00:00Z"),
                                         ("--late-days", "2")])  # fmt: skip
        self.assertEqual((o.submitted, o.submissions), ("2030-01-01T00:00:00Z", ["sub"]))

    def test_bad_course_options_are_one_line_and_exit_2(self) -> None:
        for args, says in ((["--submitted", "yesterday", "x"], "--submitted yesterday: give a time"),
                           (["--late-days", "two", "x"], "--late-days two: give a whole number"),
                           (["--roster", "/nonexistent.csv", "x"], "cannot read /nonexistent.csv"),
                           (["--key-points", "3", "x"], "--key-points needs --keys")):  # fmt: skip
            done = self.run_cmd([KIT / "grader/rdmalab-grade", *args], status=2)
            self.assertEqual(len(done.stdout.splitlines()), 1, done.stdout)
            self.assertIn(f"rdmalab-grade: {says}", done.stdout)

    def test_scripts_results_class_takes_them_too(self) -> None:
        top = self.tmp()
        student(top, "s1", [built(3), record(3, 1, "hashes", True, 2)])
        roster = self.tmp() / "roster.csv"
        roster.write_text("id,name\ns1,Sue\ns2,Sam\n")
        done = self.run_cmd([KIT / "scripts/results", "class", "--roster", roster, "--made", MADE, top])
        self.assertHasLine("no submission: s2 (Sam): 0 in every lab", done.stdout)
        bad = self.run_cmd([KIT / "scripts/results", "class", "--deadline", "soon", top], status=2)
        self.assertIn("results: --deadline soon: give a time", bad.stdout)


class ALateLabWithoutItsLab(KitCase):
    """Grading a late lab without --lab regrades every lab from it: the grader
    says which attempted lab it replaced with nothing."""

    def test_the_grader_names_the_lab_it_replaced_with_nothing(self) -> None:
        top = self.tmp()
        before = model.read_submission(str(student(top, "s1", [built(0), record(0, 1, "lists", True, 2)])))
        after = model.read_submission(str(student(top, "s2", [built(0), record(0, 1, "lists", False, 2)],
                                                  labs={"0": facts(attempted=False)})))  # fmt: skip
        self.assertEqual(publish.replaced_by_nothing(before, after, (0,)), [
            "lab 0 was passed (2 points) and is now not attempted: this submission has none of its files "
            "(to grade only the labs it has, give --lab N)"])  # fmt: skip
        self.assertEqual(publish.replaced_by_nothing(after, after, (0,)), [])
