"""test_model: the grader's data model (grader/rdmalab_grade/model.py) reads
the records, rubric and submissions line by line and refuses a bad line with
one line that names its file and line, what was expected and what it got;
the texts and numbers it shows are as the views have always shown them.

  python3 -m unittest -v tests.grader.test_model
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

from tests.kitbase import KIT, KitCase

sys.path.insert(0, str(KIT / "grader"))

from rdmalab_grade import model  # noqa: E402
from rdmalab_grade.jsontext import dumps, number  # noqa: E402
from rdmalab_grade.texts import bounded, bounded_message, from_c_bytes, seconds  # noqa: E402

GOOD = {
    "lab": 3, "step": 1, "test": "hash_of_nothing", "result": "pass", "points": 2, "max": 2,
    "message": "", "skipped_because": None, "said": "", "ms": 7,
}  # fmt: skip
RUBRIC = [
    model.RubricLine(3, 1, "hash_of_nothing", 2, None, None),
    model.RubricLine(3, 2, "never_ran", 1, None, None),
]
EXPECTED = "expected a test's record (scripts/results lab), got: "


class ModelCase(KitCase):
    def write(self, text: str, name: str = "results.jsonl") -> str:
        path = self.tmp() / name
        path.write_text(text)
        return str(path)

    def refused(self, read: Callable[..., object], *args: Any) -> str:
        """The one line READ(*ARGS) refuses its input with."""
        with self.assertRaises(model.BadInput) as caught:
            read(*args)
        said = str(caught.exception)
        self.assertNotIn("\n", said, "one line")
        return said


class RecordLines(ModelCase):
    """A record line that is not a record stops the reading, naming it."""

    def assertRefused(self, line: str) -> None:
        path = self.write(json.dumps(GOOD) + "\n\n" + line + "\n")
        self.assertEqual(self.refused(model.read_records, path), f"{path}:3: {EXPECTED}{line[:160]}")

    def test_a_good_record_is_read(self) -> None:
        (r,) = model.read_records(self.write(json.dumps(GOOD) + "\n"))
        self.assertEqual((r.test, r.points, r.passed), ("hash_of_nothing", 2, True))

    def test_blank_lines_are_skipped_but_counted(self) -> None:
        path = self.write("\n  \t\n" + json.dumps(GOOD) + "\r\n")
        self.assertEqual(len(model.read_records(path)), 1)

    def test_a_line_cut_short(self) -> None:
        self.assertRefused('{"lab":3,"step":1,"test":"x","result":"pa')

    def test_null_and_an_array(self) -> None:
        self.assertRefused("null")
        self.assertRefused("[1, 2]")

    def test_a_field_missing(self) -> None:
        self.assertRefused(json.dumps({k: v for k, v in GOOD.items() if k != "said"}))

    def test_a_field_of_the_wrong_type(self) -> None:
        self.assertRefused(json.dumps({**GOOD, "ms": "7"}))
        self.assertRefused(json.dumps({**GOOD, "lab": True}))
        self.assertRefused(json.dumps({**GOOD, "skipped_because": 1}))

    def test_a_result_not_of_the_three(self) -> None:
        self.assertRefused(json.dumps({**GOOD, "result": "ok"}))

    def test_points_past_the_tests(self) -> None:
        self.assertRefused(json.dumps({**GOOD, "points": 3}))

    def test_points_below_zero(self) -> None:
        self.assertRefused(json.dumps({**GOOD, "result": "FAIL", "points": -1}))

    def test_points_for_a_failure(self) -> None:
        self.assertRefused(json.dumps({**GOOD, "result": "FAIL"}))

    def test_nan_and_a_lone_surrogate(self) -> None:
        self.assertRefused(json.dumps(GOOD).replace('"points": 2', '"points": NaN'))
        self.assertRefused(json.dumps(GOOD).replace('"message": ""', '"message": "\\ud800"'))

    def test_two_values_on_a_line(self) -> None:
        self.assertRefused(json.dumps(GOOD) + " " + json.dumps(GOOD))

    def test_a_long_line_is_shown_cut(self) -> None:
        self.assertRefused(json.dumps({**GOOD, "result": "bogus", "message": "x" * 500}))

    def test_a_missing_file(self) -> None:
        path = str(self.tmp() / "none.jsonl")
        self.assertEqual(self.refused(model.read_records, path), f"cannot read {path}: No such file or directory")


class AgainstTheRubric(ModelCase):
    """A record must be of a test of the rubric, once, with its points."""

    def agreeing(self, *records: dict[str, object]) -> list[model.Record]:
        found = [(f"f:{i}", model.record_of(r)) for i, r in enumerate(records, 1)]
        return model.agreeing(found, RUBRIC, "lab3.jsonl")

    def test_a_test_the_rubric_does_not_have(self) -> None:
        said = self.refused(self.agreeing, {**GOOD, "test": "forged"})
        self.assertEqual(said, "f:1: test forged ran but is not in lab3.jsonl: make it again (make labs)")

    def test_points_the_rubric_does_not_give(self) -> None:
        said = self.refused(self.agreeing, {**GOOD, "points": 5, "max": 5})
        self.assertEqual(
            said,
            "f:1: test hash_of_nothing is lab 3 step 1, 5 points; lab3.jsonl says lab 3 step 1, 2 points: "
            "make it again (make labs)",
        )

    def test_a_second_record_of_a_test(self) -> None:
        said = self.refused(self.agreeing, GOOD, GOOD)
        self.assertEqual(said, "f:2: test hash_of_nothing has a record already")

    def test_a_rubric_of_another_lab(self) -> None:
        said = self.refused(model.check_lab, RUBRIC, 4, "lab3.jsonl")
        self.assertEqual(said, "lab3.jsonl: expected the rubric of lab 4, got a test of lab 3")

    def test_an_empty_rubric(self) -> None:
        path = self.write("\n", "lab3.jsonl")
        self.assertEqual(self.refused(model.read_lab_inputs, path, None), f"{path}: no test in it: make it again (make labs)")

    def test_a_bad_rubric_line(self) -> None:
        path = self.write('{"lab":3,"step":1,"test":"x","max":"1"}\n', "lab3.jsonl")
        self.assertEqual(
            self.refused(model.read_lab_inputs, path, None),
            f'{path}:1: expected a rubric line (the test program\'s --rubric), got: {{"lab":3,"step":1,"test":"x","max":"1"}}',
        )

    def test_a_test_with_no_record_did_not_run(self) -> None:
        run = model.lab_run(3, RUBRIC, self.agreeing(GOOD), "logs/lab3")
        self.assertEqual([r.result for r in run.records()], ["pass", "pass", "FAIL"])
        self.assertEqual(run.tests[1].message, "did not run: see logs/lab3/steps.out")

    def test_a_lab_that_did_not_build_fails_every_test(self) -> None:
        run = model.lab_not_built(3, RUBRIC, "error: x\n")
        self.assertEqual((run.build.test, run.build.message), ("lab3_builds", "error: x"))
        self.assertEqual({r.message for r in run.tests}, {"not graded: see lab3_builds"})


class Submissions(ModelCase):
    def folder(self, about: str, records: str = "") -> str:
        top = self.tmp()
        (top / "submission.json").write_text(about)
        (top / "results.jsonl").write_text(records)
        return str(top)

    def test_a_submission_and_its_records(self) -> None:
        about = {"name": "a", "made": "t", "graded": "g", "source": "", "intake": "",
                 "unsafe": None, "ungradable": None, "seconds": 3}  # fmt: skip
        sub = model.read_submission(self.folder(json.dumps(about) + "\n", json.dumps(GOOD) + "\n"))
        self.assertEqual((sub.name, sub.points(), sub.most(), sub.labs()), ("a", 2, 2, [3]))

    def test_a_submission_without_a_name(self) -> None:
        top = self.folder('{"made":"t"}\n')
        said = self.refused(model.read_submission, top)
        self.assertEqual(said, f'{top}/submission.json:1: expected a submission (grader/rdmalab_grade/publish.py), got: {{"made":"t"}}')

    def test_a_blank_submission(self) -> None:
        top = self.folder("\n")
        self.assertEqual(self.refused(model.read_submission, top), f"{top}/submission.json: no submission in it")


class TextsAndNumbers(KitCase):
    """What the views show of a record's texts and numbers."""

    def test_bytes_escaped_by_the_c_writer_read_as_utf8(self) -> None:
        self.assertEqual(from_c_bytes("caf\u00c3\u00a9 \u00e9 \u00f0\u009f\u0098\u0080"), "caf\u00e9 \u00e9 \U0001f600")

    def test_a_text_with_wider_characters_stays_as_it_is(self) -> None:
        self.assertEqual(from_c_bytes("\u00c3\u00a9 \u2028"), "\u00c3\u00a9 \u2028")

    def test_a_long_text_is_bounded_with_where_the_rest_is(self) -> None:
        text = "\n".join(f"line {i}" for i in range(25)) + "\n\n"
        self.assertEqual(bounded(text, 20, "X").split("\n")[-1], "... (5 more lines: see X)")
        self.assertEqual(bounded("x" * 401, 20, "X"), "x" * 400 + "...")

    def test_a_stubs_note_is_kept_after_a_long_message(self) -> None:
        text = "\n".join(f"line {i}" for i in range(25)) + "\nstep 3 not implemented: see docs"
        self.assertEqual(bounded_message(text, "X").split("\n")[-1], "step 3 not implemented: see docs")

    def test_numbers_as_json_writes_them(self) -> None:
        got = [number(x) for x in (3, 3.0, 0.012, 1e17, 1e-5, 123456789012345678, -0.0)]
        self.assertEqual(got, ["3", "3", "0.012", "1e+17", "1e-05", "123456789012345680", "-0"])

    def test_a_time_in_tenths_of_a_second_halves_up(self) -> None:
        self.assertEqual([seconds(ms) for ms in (0, 49, 50, 1234, 12345)], ["0.0 s", "0.0 s", "0.1 s", "1.2 s", "12.3 s"])

    def test_json_text_escapes_only_what_it_must(self) -> None:
        self.assertEqual(dumps({"a": "\u00e9\x7f\x01\n", "b": [], "c": {}}), '{"a":"\u00e9\\u007f\\u0001\\n","b":[],"c":{}}')
