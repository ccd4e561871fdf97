"""test_control: the grader's control (grader/rdmalab_grade) without a guest.

The settings travel whole, the time limits follow the multiplier, and the
command line refuses bad input with one line; the small functions whose
text a student or an instructor reads say it as the bash grader did.
Run: python3 -m unittest tests/grader/test_control.py (no root, no RDMA).
"""

from __future__ import annotations

import json
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "grader"))

from tests.kitbase import KIT, KitCase  # noqa: E402
from rdmalab_grade import build, cli, intake, publish, run  # noqa: E402
from rdmalab_grade.settings import (BadSetting, Limits, Settings, StudentLimits, from_environment,  # noqa: E402
                                    number_text)

GRADER = KIT / "grader" / "rdmalab-grade"


def settings(**changes: object) -> Settings:
    fields: dict[str, object] = dict(kit=str(KIT), out="/tmp/out", labs=(0, 3), all_labs=(0, 1, 2, 3, 4))
    fields.update(changes)
    return Settings(**fields)  # type: ignore[arg-type]


class SettingsTest(KitCase):
    def test_settings_come_back_whole_from_the_batch_file(self) -> None:
        s = settings(limits=StudentLimits(cpu=7), multiplier=1.5, unsafe=True)
        self.assertEqual(Settings.from_json(json.loads(json.dumps(s.to_json()))), s)

    def test_each_submission_has_a_uid_of_its_own_above_the_base(self) -> None:
        s = settings(uid_base=1000)
        self.assertEqual([s.student_uid(k) for k in range(3)], [1001, 1002, 1003])
        self.assertEqual(s.guest_uid, 999)

    def test_every_limit_but_the_tests_own_follows_the_multiplier(self) -> None:
        slow = Limits(settings(multiplier=1.5))
        self.assertEqual((slow.build, slow.rules, slow.lab_tests), (900, 180, 1800))
        self.assertEqual(slow.guest, 3150)  # (900 + 600 for each of 2 labs) * 1.5
        self.assertEqual(slow.test, 30)  # the harness scales it itself

    def test_the_environment_gives_numbers_or_one_line_that_says_which(self) -> None:
        self.assertEqual(from_environment({"GRADE_UID_BASE": "5000"})["uid_base"], 5000)
        self.assertEqual(from_environment({})["limits"], StudentLimits())
        with self.assertRaisesRegex(BadSetting, "^GRADE_PROCESSES=many: give a whole number$"):
            from_environment({"GRADE_PROCESSES": "many"})

    def test_the_calibration_stretches_the_multiplier_it_was_given(self) -> None:
        self.assertEqual(settings(multiplier=2).scaled_by(1.5).multiplier, 3)
        self.assertEqual(number_text(3.0), "3")
        self.assertEqual(number_text(1.4), "1.4")


class CommandLineTest(KitCase):
    def test_names_are_safe_for_files_and_never_hidden(self) -> None:
        self.assertEqual(intake.safe_name("/x/o'brien (the) student.tgz"), "o_brien__the__student")
        self.assertEqual(intake.safe_name("..secret.tar.gz"), "_secret")
        self.assertEqual(intake.safe_name("labs/"), "labs")

    def test_reports_say_which_labs_were_not_asked_for(self) -> None:
        self.assertEqual(cli.graded_text((0,), (0, 1, 2)), "Lab 0 (Labs 1, 2 not asked for)")
        self.assertEqual(cli.graded_text((0, 1), (0, 1)), "Labs 0, 1")

    def test_options_stop_at_the_first_submission(self) -> None:
        o = cli.parse(["-j2", "--lab", "0,3", "--no-rules", "sub", "--unsafe"], "", str(KIT))
        self.assertEqual((o.jobs, o.labs, o.rules, o.unsafe), ("2", "0 3", False, False))
        self.assertEqual(o.submissions, ["sub", "--unsafe"])

    def test_bad_input_is_one_line_and_exit_2(self) -> None:
        for args, says in ((["-j", "0", "x"], "-j 0: give a number"), (["--mode", "cloud", "x"], "--mode cloud"),
                           (["--lab", "9", "x"], "--lab 9: the kit has labs"), (["--bogus"], "unknown option --bogus")):
            done = self.run_cmd([GRADER, *args], status=2)
            self.assertEqual(len(done.stdout.splitlines()), 1, done.stdout)
            self.assertIn(f"rdmalab-grade: {says}", done.stdout)

    def test_name_of_gives_the_graders_names(self) -> None:
        done = self.run_cmd([GRADER, "--name-of", "a b.tgz", "c/labs"])
        self.assertEqual(done.stdout.splitlines(), ["a_b", "labs"])


class MessagesTest(KitCase):
    def test_files_taken_are_one_line_a_lab_then_the_stubs_used(self) -> None:
        taken = ["lab0/a.c: taken", "lab0/b.c: taken", "lab0/c.c: not in the submission, the stub is used"]
        self.assertEqual(publish.files_taken(taken),
                         "lab0: a.c b.c\nlab0/c.c: not in the submission, the stub is used")

    def test_a_note_of_a_run_that_could_not_grade_is_replaced_not_stacked(self) -> None:
        report = "NOT GRADED at T: why\n(the report below ...)\n\nalice: 3/4 points\n"
        self.assertEqual(publish.without_note(report), "alice: 3/4 points\n")

    def test_a_broken_rule_scores_0_and_an_unchecked_one_is_ungradable(self) -> None:
        log = self.tmp() / "build-lab3.log"
        log.write_text("make: checking\nlab3/hash.c: calls open\n")
        self.assertIn("refused: Lab 3 breaks the rules", build.refusal(str(log), 3))
        log.write_text("make: checking\nlab-rules: nm not found\n")
        self.assertEqual(build.refusal(str(log), 3), "could not check Lab 3's rules: lab-rules: nm not found")

    def test_progress_counts_each_result_and_the_points(self) -> None:
        records = self.tmp() / "steps.jsonl"
        records.write_text('{"result":"pass","points":2,"max":2}\n{"result":"FAIL","points":0,"max":3}\nnot json\n')
        self.assertEqual(run.progress("bob", 3, str(records), 12.34),
                         "rdmalab-grade: bob: lab 3: 1 passed, 1 failed, 0 skipped, 2/5 points, tests in 12.3 s")

    def test_a_failed_guest_is_explained_by_its_runners_last_line(self) -> None:
        log = self.tmp() / "rdma.log"
        log.write_text("uml-probe: booting a probe\numl-run: the guest hung\nrdmalab-grade: --- a second boot ---\n")
        self.assertEqual(run.why_guest_failed(str(log)), "uml-run: the guest hung")


if __name__ == "__main__":
    unittest.main()
