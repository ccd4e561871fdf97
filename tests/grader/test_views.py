"""test_views: scripts/results, the one collector, on records crafted as a
lab's test program writes them (tests/graded.c, framework/json.c).

CraftedRecords: a message with quotes, backslashes, a tab, newlines, < and
&, UTF-8 and a lone byte escaped \\u00XX and a control character; what the
code printed; a crash report; a skipped test; a stub's note; a test with no
record; a lab that did not build; one refused for its rules; an ungradable
student. Each field must show right in every view: make check's table,
report.txt, results.json (Gradescope's schema), junit.xml (JUnit's XSD),
class.csv, summary.txt and class.html; a bad record stops it with one line
naming it.

LongMessages: a failure message of many lines (a program's output, as
tests/lab3/test_sender.c quotes it) reaches the student whole, bounded: the
table shows its first line and the next ones under it, at most 20 and then
where the rest is; the grader's records keep its lines, and report.txt,
results.json and junit.xml show them. No RDMA, no guest, no lab built.

  python3 -m unittest -v tests.grader.test_views
"""

from __future__ import annotations

import json
import shutil
import subprocess
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from tests.kitbase import KIT, KitCase

RESULTS = KIT / "scripts" / "results"
LAB_CHECK = KIT / "scripts" / "lab-check"
SCHEMAS = KIT / "tests" / "grader" / "schemas"


def results(*args: object, cwd: Path = KIT) -> subprocess.CompletedProcess[str]:
    """scripts/results ARGS, its output and errors kept apart."""
    return subprocess.run(
        [str(RESULTS), *map(str, args)], cwd=cwd, capture_output=True, text=True, errors="replace", timeout=120
    )


def jsonl(*values: dict[str, object]) -> str:
    return "".join(json.dumps(v, separators=(",", ":")) + "\n" for v in values)


def submission(name: str, **fields: object) -> str:
    about: dict[str, object] = {
        "name": name, "made": "2030-01-02T03:04:05Z", "graded": "Labs 0, 3", "source": "", "intake": "",
        "unsafe": None, "ungradable": None, "seconds": None,
    }  # fmt: skip
    about.update(fields)
    return jsonl(about)


def schema_errors(document: Path, schema: str) -> list[str]:
    """What in DOCUMENT (JSON) breaks the schema SCHEMA (in schemas/)."""
    try:
        import jsonschema
    except ImportError:
        raise unittest.SkipTest("no python3-jsonschema: run make deps") from None
    validator = jsonschema.Draft7Validator(json.loads((SCHEMAS / schema).read_text()))
    return [e.message for e in validator.iter_errors(json.loads(document.read_text()))]


def xsd_errors(document: Path) -> str:
    """What in DOCUMENT breaks JUnit's XSD (xmllint's words), or ""."""
    if shutil.which("xmllint") is None:
        raise unittest.SkipTest("no xmllint: run make deps (libxml2-utils)")
    done = subprocess.run(
        ["xmllint", "--noout", "--schema", str(SCHEMAS / "junit.xsd"), str(document)],
        capture_output=True, text=True,
    )  # fmt: skip
    return "" if done.returncode == 0 else done.stderr


# Lab 3's rubric and records, as its test program prints and writes them.
LAB3_RUBRIC = """\
{"lab":3,"step":1,"test":"hash_of_nothing","max":2,"needs":null,"receiver":null}
{"lab":3,"step":1,"test":"quotes_everything","max":1,"needs":null,"receiver":null}
{"lab":3,"step":2,"test":"crashes","max":1,"needs":null,"receiver":null}
{"lab":3,"step":2,"test":"never_ran","max":1,"needs":null,"receiver":null}
{"lab":3,"step":3,"test":"needs_step_2","max":2,"needs":2,"receiver":null}
{"lab":3,"step":3,"test":"stub_step","max":1,"needs":null,"receiver":"--fault-drop 4"}
"""
LAB3_RECORDS = r"""{"lab":3,"step":1,"test":"hash_of_nothing","result":"pass","points":2,"max":2,"message":"","skipped_because":null,"said":"not shown: it passed","ms":7}
{"lab":3,"step":1,"test":"quotes_everything","result":"FAIL","points":0,"max":1,"message":"expected \"done\", got:\n\ta\\b <x> & y caf\u00c3\u00a9 \u00e9 \u0001 end","skipped_because":null,"said":"<b>bold</b> & \"more\"\nsecond\\line","ms":1234}
{"lab":3,"step":2,"test":"crashes","result":"FAIL","points":0,"max":1,"message":"Received signal 11 (Segmentation fault)\ncrash in test crashes: SIGSEGV (segmentation fault) at address 0x0\n    #0 lab3_hash (labs/lab3/hash.c:12)\n","skipped_because":null,"said":"","ms":7}
{"lab":3,"step":3,"test":"needs_step_2","result":"skipped","points":0,"max":2,"message":"step 2 failed","skipped_because":"step 2 failed","said":"","ms":7}
{"lab":3,"step":3,"test":"stub_step","result":"FAIL","points":0,"max":1,"message":"expected 0, got -38 (Function not implemented)\nstep 3 not implemented: see docs/lab3.md#step-3","skipped_because":null,"said":"","ms":7}
"""
# The fields as they must show: the bytes of é in UTF-8 and a lone byte
# 0xe9 both é; the control character as it is, or a space in XML.
MESSAGE = 'expected "done", got:\n\ta\\b <x> & y caf\u00e9 \u00e9 \x01 end'
SAID = '<b>bold</b> & "more"\nsecond\\line'
UNSAFE_LINE = "UNSAFE: graded without the grader's whole sandbox (--unsafe): it lacked root (this runs as uid 1000)"
BUILD_ERROR = "labs/lab0/devices.c:3:1: error: expected ';' before '}' token"
ODD_NAME = "o'hara&co, \"x\""


class CraftedRecords(KitCase):
    """Every field of crafted records in every view."""

    work: Path
    table: subprocess.CompletedProcess[str]
    step3: subprocess.CompletedProcess[str]
    stubs: subprocess.CompletedProcess[str]
    summary: subprocess.CompletedProcess[str]
    csv: str
    summary_txt: str
    html: str
    odd: subprocess.CompletedProcess[str]
    odd_csv: str
    odd_html: str

    @classmethod
    def setUpClass(cls) -> None:
        tmp = cls.class_tmp("rdmalab-test-views.")
        cls.work = tmp
        (tmp / "run").mkdir()
        (tmp / "lab3.jsonl").write_text(LAB3_RUBRIC)
        (tmp / "lab0.jsonl").write_text(LAB3_RUBRIC.replace('"lab":3', '"lab":0'))
        (tmp / "run" / "steps.jsonl").write_text(LAB3_RECORDS)
        cls.table = results("table", "--lab", 3, "--from", "labs", "--logs-as", "build/labs/lab3/results",
                            tmp / "lab3.jsonl", tmp / "run")  # fmt: skip
        cls.step3 = results("table", "--step", 3, "--lab", 3, "--from", "solutions", tmp / "lab3.jsonl", tmp / "run")
        cls.stubs = results("table", "--stubs", "--lab", 3, "--from", "labs", tmp / "lab3.jsonl", tmp / "run")
        cls.make_class(tmp / "class")

    @classmethod
    def lab_records(cls, why_lab0_failed: str) -> str:
        """Lab 3's records and those of a Lab 0 that did not build (WHY)."""
        lab3 = results("lab", "--lab", 3, cls.work / "lab3.jsonl", cls.work / "run" / "steps.jsonl")
        lab0 = results("lab", "--lab", 0, "--not-built", why_lab0_failed, cls.work / "lab0.jsonl")
        if lab3.returncode or lab0.returncode:
            raise AssertionError(f"scripts/results lab failed: {lab3.stderr}{lab0.stderr}")
        return lab3.stdout + lab0.stdout

    @classmethod
    def student(cls, folder: Path, records: str, about: str) -> None:
        folder.mkdir(parents=True)
        (folder / "results.jsonl").write_text(records)
        (folder / "submission.json").write_text(about)
        done = results("submission", folder)
        if done.returncode:
            raise AssertionError(f"scripts/results submission {folder.name} failed: {done.stderr}")

    @classmethod
    def make_class(cls, top: Path) -> None:
        """alice (graded --unsafe), bob (ungradable), carol (her Lab 0
        refused); the class's pages, then again with an odd name in it."""
        source = "lab3: hash.c\nlab0/devices.c: not in the submission, the stub is used"
        cls.student(top / "alice", cls.lab_records(BUILD_ERROR),
                    submission("alice", source=source, unsafe="root (this runs as uid 1000)", seconds=42))  # fmt: skip
        cls.student(top / "bob", "", submission("bob", ungradable="the RDMA environment failed: no device"))
        refused = "refused: Lab 0 breaks the rules (docs/rules.md):\nlab0/devices.c: calls open"
        cls.student(top / "carol", cls.lab_records(refused), submission("carol", made="t", seconds=7))
        cls.summary = results("class", "--labs", "0 3", "--made", "2030-01-02T03:04:05Z", top)
        cls.csv = (top / "class.csv").read_text()
        cls.summary_txt = (top / "summary.txt").read_text()
        cls.html = (top / "class.html").read_text()
        # A folder name with characters of HTML, URLs and CSV (names are made
        # safe before, but the views must not rely on it).
        odd = top / ODD_NAME
        odd.mkdir()
        (odd / "results.jsonl").write_text("")
        (odd / "submission.json").write_text(submission("odd", made="t", graded="g", ungradable="x"))
        cls.odd = results("class", "--labs", "0 3", top)
        cls.odd_csv = (top / "class.csv").read_text()
        cls.odd_html = (top / "class.html").read_text()

    def file(self, *parts: str) -> str:
        return self.work.joinpath(*parts).read_text()

    # --- make check's table ----------------------------------------------------

    def test_table_exits_1_when_a_test_failed(self) -> None:
        self.assertEqual(self.table.returncode, 1, self.table.stderr)

    def test_table_shows_each_result_and_its_points(self) -> None:
        for line in (
            "Lab 3 from labs/lab3",
            "step  test               result   points    time",
            "   1  hash_of_nothing    pass      2/2     0.0 s",
            "   1  quotes_everything  FAIL      0/1     1.2 s",
            "   2  never_ran          FAIL      0/1     0.0 s",
            "   3  needs_step_2       skipped   0/2     0.0 s  step 2 failed",
            "total: 2/8 points; 1 passed, 4 failed, 1 skipped",
        ):
            self.assertHasLine(line, self.table.stdout)

    def test_table_shows_a_message_each_character_right(self) -> None:
        self.assertHasLine('      expected "done", got:', self.table.stdout, "a message's first line")
        self.assertHasLine("        \ta\\b <x> & y caf\u00e9 \u00e9 \x01 end", self.table.stdout, "its next line")

    def test_table_shows_what_the_code_printed_under_a_failure(self) -> None:
        for line in ("      your code printed:", '        <b>bold</b> & "more"', "        second\\line"):
            self.assertHasLine(line, self.table.stdout)

    def test_table_hides_what_a_passing_test_printed(self) -> None:
        self.assertNotIn("not shown: it passed", self.table.stdout)

    def test_table_shows_a_crash_report(self) -> None:
        self.assertHasLine("        crash in test crashes: SIGSEGV (segmentation fault) at address 0x0", self.table.stdout)
        self.assertHasLine("            #0 lab3_hash (labs/lab3/hash.c:12)", self.table.stdout)

    def test_table_says_where_a_test_with_no_record_failed(self) -> None:
        self.assertHasLine("      did not run: see build/labs/lab3/results/steps.out", self.table.stdout)

    def test_table_shows_a_stubs_note_under_its_message(self) -> None:
        self.assertHasLine("      step 3 not implemented: see docs/lab3.md#step-3", self.table.stdout)

    def test_table_of_one_step_shows_that_steps_tests_only(self) -> None:
        self.assertHasLine("Lab 3 from solutions/lab3, step 3 only", self.step3.stdout)
        self.assertNotIn("hash_of_nothing", self.step3.stdout)

    def test_stubs_table_fails_when_a_test_passes(self) -> None:
        self.assertEqual(self.stubs.returncode, 1)
        self.assertHasLine(
            "stubs: these tests pass without the student's code, so they grade nothing: hash_of_nothing",
            self.stubs.stdout,
        )

    def test_bad_records_stop_the_table_with_one_line_naming_them(self) -> None:
        good = json.loads(LAB3_RECORDS.splitlines()[0])
        bad = {
            "a line cut short": '{"lab":3,"step":1,"test":"hash_of_nothing","result":"pa',
            "points past the test's": jsonl({**good, "points": 3}),
            "points for a failure": jsonl({**good, "result": "FAIL"}),
            "a test the rubric does not have": jsonl({**good, "test": "forged"}),
            "points the rubric does not give": jsonl({**good, "test": "quotes_everything", "points": 5, "max": 5}),
        }
        for what, line in bad.items():
            with self.subTest(what):
                folder = self.tmp_with_records(line)
                done = results("table", "--lab", 3, "--from", "labs", self.work / "lab3.jsonl", folder)
                self.assertEqual((done.returncode, len(done.stderr.splitlines())), (2, 1), done.stderr)
                self.assertTrue(done.stderr.startswith(f"results: {folder}/steps.jsonl:1: "), done.stderr)

    def tmp_with_records(self, line: str) -> Path:
        folder = self.tmp() / "bad"
        folder.mkdir()
        (folder / "steps.jsonl").write_text(line if line.endswith("\n") else line + "\n")
        return folder

    # --- report.txt ----------------------------------------------------------------

    def test_report_says_the_score_and_what_was_graded(self) -> None:
        report = self.file("class", "alice", "report.txt")
        for line in (
            "alice: 2/16 points",
            "from:   lab3: hash.c",
            "        lab0/devices.c: not in the submission, the stub is used",
            UNSAFE_LINE,
        ):
            self.assertHasLine(line, report)

    def test_report_shows_each_lab_and_record(self) -> None:
        report = self.file("class", "alice", "report.txt")
        for line in (
            "Lab 3: 2/8 points (failed)",
            "  build   lab3_builds" + " " * 61 + "pass      0/0     0.0 s",
            "            \ta\\b <x> & y caf\u00e9 \u00e9 \x01 end",
            "          your code printed:",
            "          did not run: see logs/lab3/steps.out",
        ):
            self.assertHasLine(line, report)

    def test_report_says_why_a_lab_did_not_build(self) -> None:
        report = self.file("class", "alice", "report.txt")
        self.assertHasLine("Lab 0: 0/8 points (does not build)", report)
        self.assertHasLine("          " + BUILD_ERROR, report)
        self.assertHasLine("          not graded: see lab0_builds", report)

    def test_report_of_an_ungradable_submission_says_why_first(self) -> None:
        first = self.file("class", "bob", "report.txt").split("\n")[0]
        self.assertEqual(first, "bob: UNGRADABLE: the RDMA environment failed: no device")

    # --- results.json (Gradescope) ---------------------------------------------------

    def gradescope(self, name: str = "alice") -> dict[str, Any]:
        """NAME's results.json, as JSON reads it (its values of any type)."""
        return json.loads(self.file("class", name, "results.json"))

    def gradescope_test(self, name: str) -> dict[str, Any]:
        return next(t for t in self.gradescope()["tests"] if t["name"] == name)

    def test_results_json_is_gradescopes_format(self) -> None:
        for name in ("alice", "bob"):
            with self.subTest(name):
                path = self.work / "class" / name / "results.json"
                self.assertEqual(schema_errors(path, "gradescope-results.json"), [])

    def test_results_json_has_the_score_and_the_most(self) -> None:
        doc = self.gradescope()
        got = (doc["score"], doc["extra_data"]["max_score"], doc["extra_data"]["ungradable"])
        self.assertEqual(got, (2, 16, False))

    def test_results_json_shows_a_failure_and_what_its_code_printed(self) -> None:
        got = self.gradescope_test("Lab 3 step 1: quotes_everything")["output"]
        self.assertEqual(got, f"{MESSAGE}\n\nyour code printed:\n{SAID}")

    def test_results_json_shows_a_skipped_test_and_a_build(self) -> None:
        self.assertEqual(self.gradescope_test("Lab 3 step 3: needs_step_2")["output"], "skipped: step 2 failed")
        self.assertEqual(self.gradescope_test("Lab 0: the lab builds")["output"], BUILD_ERROR)

    def test_results_json_output_says_the_score_and_the_sandbox(self) -> None:
        output = self.gradescope()["output"]
        self.assertEqual(str(output).split("\n")[0], "alice: 2/16 points")
        self.assertHasLine(UNSAFE_LINE, str(output))
        self.assertEqual(self.gradescope()["extra_data"]["unsafe"], "root (this runs as uid 1000)")

    def test_results_json_has_a_tests_time_in_ms(self) -> None:
        self.assertEqual(self.gradescope_test("Lab 3 step 1: quotes_everything")["extra_data"], {"ms": 1234})

    # --- junit.xml -----------------------------------------------------------------

    def junit(self) -> ET.Element:
        return ET.fromstring(self.file("class", "alice", "junit.xml"))

    def case(self, name: str) -> ET.Element:
        found = self.junit().find(f".//testcase[@name='{name}']")
        assert found is not None, f"no test case {name} in junit.xml"
        return found

    def test_junit_xml_is_junits_format(self) -> None:
        for name in ("alice", "bob"):
            with self.subTest(name):
                self.assertEqual(xsd_errors(self.work / "class" / name / "junit.xml"), "")

    def test_junit_xml_shows_a_failure_its_control_character_a_space(self) -> None:
        failure = self.case("quotes_everything").find("failure")
        self.assertEqual(failure.get("message") if failure is not None else None, MESSAGE.replace("\x01", " "))

    def test_junit_xml_shows_what_the_code_printed(self) -> None:
        self.assertEqual(self.case("quotes_everything").findtext("system-out"), SAID)

    def test_junit_xml_shows_a_skipped_test_and_a_time_in_seconds(self) -> None:
        skipped = self.case("needs_step_2").find("skipped")
        self.assertEqual(skipped.get("message") if skipped is not None else None, "step 2 failed")
        self.assertEqual(self.case("quotes_everything").get("time"), "1.234")

    def test_junit_xml_fails_every_test_of_a_lab_that_did_not_build(self) -> None:
        suite = self.junit().find("testsuite[@name='alice.lab0']")
        self.assertEqual(suite.get("failures") if suite is not None else None, "7")

    def test_junit_xml_shows_what_the_sandbox_lacked_as_an_error(self) -> None:
        error = self.junit().find("testsuite[@name='alice.sandbox']/testcase/error")
        self.assertEqual(error.get("message") if error is not None else None, UNSAFE_LINE)

    # --- class.csv, summary.txt, class.html ----------------------------------------

    def test_class_csv_has_a_line_per_student(self) -> None:
        want = (
            '"id","name","lab0","lab3","total","max","status","seconds","lab0_status","lab3_status",'
            '"late_days_used","kit","mode","kernel","multiplier","notes"\n'
            '"alice","",0,2,2,16,"unsafe",42,"does not build","failed",0,,,,,""\n'
            '"bob","",,,,16,"ungradable",,"grader failed","grader failed",0,,,,,""\n'
            '"carol","",0,2,2,16,"graded",7,"does not build","failed",0,,,,,""\n'
        )
        self.assertEqual(self.csv, want)

    def test_summary_gives_the_figures_of_the_class(self) -> None:
        self.assertEqual(self.summary.returncode, 0, self.summary.stderr)
        for line in (
            "3 student(s): 2 graded, 1 ungradable; labs 0 3, 16 points in all",
            "total: min 2, median 2, mean 2.0, max 2",
            " 10- 19%    2  ##",
            "grading time per student (builds and tests): min 7 s, median 7 s, max 42 s",
            "flagged: carol: lab 0 broke the rules of a lab's files, scored 0 (see the report)",
            "unsafe: alice: graded without the grader's whole sandbox (--unsafe): it lacked root (this runs as uid 1000)",
        ):
            self.assertHasLine(line, self.summary.stdout)

    def test_summary_printed_is_summary_txt(self) -> None:
        self.assertEqual(self.summary.stdout, self.summary_txt)

    def test_class_html_shows_class_csvs_figures(self) -> None:
        for cells in (
            '<td class="n" data-student="alice" data-col="lab3">2</td><td class="n" data-student="alice" data-col="total">2</td>',
            '<td class="n" data-student="bob" data-col="total"></td><td class="n">16</td><td>ungradable</td>',
            '<td class="n" data-student="alice" data-col="total">2</td><td class="n">16</td><td>unsafe</td>',
        ):
            self.assertIn(cells, self.html)

    def test_class_html_marks_the_steps_where_the_class_is_stuck(self) -> None:
        self.assertIn('<tr class="stuck"><td>3</td><td>2</td><td class="n" data-lab="3" data-step="2">0</td>', self.html)
        self.assertIn('<tr><td>3</td><td>build</td><td class="n" data-lab="3" data-step="build">2</td>', self.html)

    def test_class_pages_escape_an_odd_name(self) -> None:
        self.assertEqual(self.odd.returncode, 0, self.odd.stderr)
        self.assertHasLine('"o\'hara&co, ""x""","",,,,16,"ungradable",,"grader failed","grader failed",0,,,,,""',
                           self.odd_csv)
        link = '<a href="o\'hara%26co%2C%20%22x%22/report.txt">o&apos;hara&amp;co, &quot;x&quot;</a>'
        self.assertIn(link, self.odd_html)

    def test_class_html_parses_as_html(self) -> None:
        if shutil.which("xmllint") is None:
            self.skipTest("no xmllint: run make deps (libxml2-utils)")
        page = self.work / "class" / "class.html"
        self.run_cmd(["xmllint", "--html", "--noout", page])


# A lab of four tests, its messages of many lines.
QUOTED = '{"lab":3,"step":2,"test":"quotes_a_long_output","result":"pass","points":1,"max":1}'
FIRST_MESSAGE = (
    "expected exit 0, got 1; stderr:\nsend_file: ibv_post_send: Invalid argument\n"
    f"{QUOTED}\na\\path and a\ttab"
)
LONG = (
    'expected "done", got:\n'
    + "".join(f"output line {i}\n" for i in range(1, 31))
    + "crash in test quotes_a_long_output: SIGSEGV at 0x0\n    #0 lab_x_step (labs/lab3/x.c:12)"
)


def message_record(step: int, test: str, result: str, points: int, most: int, message: str) -> dict[str, object]:
    return {
        "lab": 3, "step": step, "test": test, "result": result, "points": points, "max": most,
        "message": message, "skipped_because": None, "said": "", "ms": 5,
    }  # fmt: skip


class LongMessages(KitCase):
    """A message of many lines, in the table, the records and the report."""

    work: Path
    table: subprocess.CompletedProcess[str]
    records: subprocess.CompletedProcess[str]
    submission: subprocess.CompletedProcess[str]

    @classmethod
    def setUpClass(cls) -> None:
        tmp = cls.class_tmp("rdmalab-test-messages.")
        cls.work = tmp
        tests = [(1, "prints_its_key", 2), (1, "quotes_a_long_output", 1), (2, "passes", 1), (2, "says_one_line", 1)]
        (tmp / "rubric").write_text(
            jsonl(*({"lab": 3, "step": s, "test": t, "max": m, "needs": None, "receiver": None} for s, t, m in tests))
        )
        (tmp / "results").mkdir()
        (tmp / "results" / "steps.jsonl").write_text(
            jsonl(
                message_record(1, "prints_its_key", "FAIL", 0, 2, FIRST_MESSAGE + "\n\n"),
                message_record(1, "quotes_a_long_output", "FAIL", 0, 1, LONG),
                message_record(2, "passes", "pass", 1, 1, ""),
                message_record(2, "says_one_line", "FAIL", 0, 1, "expected 0, got -38 (Function not implemented)"),
            )
        )
        cls.table = subprocess.run(
            [str(LAB_CHECK), "report", "--lab", "3", "--from", "labs", "--logs-as", "logs/lab3",
             str(tmp / "rubric"), str(tmp / "results")],
            cwd=KIT, capture_output=True, text=True,
        )  # fmt: skip
        cls.records = results("lab", "--lab", 3, tmp / "rubric", tmp / "results" / "steps.jsonl")
        out = tmp / "out"
        out.mkdir()
        (out / "results.jsonl").write_text(cls.records.stdout)
        (out / "submission.json").write_text(
            submission("student", graded="Lab 3", source="commit 1234567", seconds=1)
        )
        cls.submission = results("submission", out)

    def test_table_exits_1_when_tests_failed(self) -> None:
        self.assertEqual(self.table.returncode, 1, self.table.stderr)

    def test_table_shows_a_messages_lines_under_its_first(self) -> None:
        for line in (
            "      expected exit 0, got 1; stderr:",
            "        send_file: ibv_post_send: Invalid argument",
            "        " + QUOTED,
            "      expected 0, got -38 (Function not implemented)",
        ):
            self.assertHasLine(line, self.table.stdout)

    def test_table_shows_20_lines_of_a_long_message_and_where_the_rest_is(self) -> None:
        self.assertHasLine("        output line 19", self.table.stdout)
        self.assertHasLine("        ... (13 more lines: see logs/lab3/steps.jsonl)", self.table.stdout)
        self.assertNotIn("output line 20", self.table.stdout)

    def test_table_counts_the_points(self) -> None:
        self.assertRegex(self.table.stdout, r"(?m)^   2  passes  *pass  *1/1  *0\.0 s$")
        self.assertRegex(self.table.stdout, r"(?m)^total: 1/5 points; 1 passed, 3 failed, 0 skipped")

    def test_the_grader_keeps_a_record_a_test_and_the_lines_of_a_message(self) -> None:
        self.assertEqual(self.records.returncode, 0, self.records.stderr)
        lines = self.records.stdout.splitlines()
        self.assertEqual(len(lines), 5, "the build's record and 4 tests'")
        kept = next(json.loads(line) for line in lines if json.loads(line)["test"] == "prints_its_key")
        self.assertEqual(kept["message"], FIRST_MESSAGE)

    def test_report_shows_a_messages_lines_and_what_it_is(self) -> None:
        self.assertEqual(self.submission.returncode, 0, self.submission.stderr)
        report = (self.work / "out" / "report.txt").read_text()
        for line in (
            "made:   2030-01-02T03:04:05Z",
            "graded: Lab 3",
            "from:   commit 1234567",
            "          expected exit 0, got 1; stderr:",
            "            send_file: ibv_post_send: Invalid argument",
            "            a\\path and a\ttab",
            "            ... (13 more lines: see logs/lab3/steps.jsonl)",
        ):
            self.assertHasLine(line, report)

    def test_results_json_keeps_a_messages_lines(self) -> None:
        doc = json.loads((self.work / "out" / "results.json").read_text())
        self.assertEqual(doc["tests"][1]["output"], FIRST_MESSAGE)
        self.assertEqual(doc["extra_data"]["made"], "2030-01-02T03:04:05Z")

    def test_junit_xml_keeps_a_messages_line_ends(self) -> None:
        junit = (self.work / "out" / "junit.xml").read_text()
        self.assertIn('message="expected exit 0, got 1; stderr:&#10;send_file:', junit)

    def test_a_record_the_program_did_not_write_is_refused(self) -> None:
        forged = self.work / "forged"
        forged.mkdir(exist_ok=True)
        (forged / "steps.jsonl").write_text(QUOTED + "\n")
        done = self.run_cmd([LAB_CHECK, "report", "--lab", "3", "--from", "labs", self.work / "rubric", forged], status=2)
        self.assertTrue(
            done.stdout.startswith(f"results: {forged}/steps.jsonl:1: expected a test's record"), done.stdout
        )


if __name__ == "__main__":
    unittest.main()
