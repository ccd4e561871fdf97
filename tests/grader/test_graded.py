"""A lab's test program decides every result in its parent (tests/graded.c,
case.c), checked on build/tests/unit/graded_victim, whose tests each end in
one way: a pass, a failed expectation, exit(0) before the end, a pass that
leaves a daemon, a test that needs a failed step, a message that quotes a
results line, a crash, a hang (after which the step's other tests get a
quarter of the time limit), an act whose own set-up fails, one that writes
records of its own, an executable mapping, an execve, a descriptor it was
not given, a hold, a check without an act, the kit's own step and a check
called from an act (not in its memory) and the roads that would put them
back. No RDMA, no guest: the victim runs once (setUpClass), and each way a
test ends is a case.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from tests.kitbase import KitCase, run

VICTIM = KitCase.kit / "build/tests/unit/graded_victim"
LOCKED_DOWN = ("the test's process was killed for a system call graded code may not make (an executable "
               "mapping or one at a fixed address, execve, ptrace, memfd_create, a way into a process's "
               "memory, io_uring or userfaultfd; see docs/rules.md)")
# The hanging tests' limit, in seconds (times CK_TIMEOUT_MULTIPLIER).
ENV = {"RDMALAB_TEST_TIMEOUT": "2"}


def records(path: Path) -> dict[str, dict]:
    """A results file's records by test name (each line must be JSON)."""
    return {r["test"]: r for r in (json.loads(line) for line in path.read_text().splitlines() if line)}


class Victim(KitCase):
    """The victim's whole run, each result its case."""

    dir: Path
    status: int
    lines: list[str]
    r: dict[str, dict]

    @classmethod
    def setUpClass(cls) -> None:
        if not VICTIM.exists():
            raise AssertionError(f"{VICTIM} is not built (make build)")
        cls.dir = cls.class_tmp("rdmalab-test-graded.")
        results = cls.dir / "results"
        # A results file that is already there, forged, is replaced whole.
        results.write_text('{"lab":0,"step":1,"test":"fails_an_expectation","result":"pass","points":1}\n')
        done = run([VICTIM, "--results", results], env={**ENV, "VICTIM_DAEMON_PID": str(cls.dir / "daemon.pid")},
                   status=None, timeout=300)
        cls.status = done.returncode
        cls.lines = results.read_text().splitlines()
        cls.r = records(results)


    def expect(self, test: str, result: str, points: int, message: str) -> None:
        r = self.r.get(test)
        self.assertIsNotNone(r, f"no record of {test}")
        assert r is not None
        self.assertEqual((result, points, message), (r["result"], r["points"], r["message"]))

    def test_exits_1_when_a_test_did_not_pass(self) -> None:
        self.assertEqual(1, self.status)

    def test_writes_one_json_record_per_test(self) -> None:
        self.assertEqual(36, len(self.lines))

    def test_a_test_that_passes(self) -> None:
        self.expect("passes", "pass", 2, "")

    def test_a_failed_expectation_and_the_forged_line_gone(self) -> None:
        self.expect("fails_an_expectation", "FAIL", 0, "expected 43, got 42")

    def test_exit_0_before_the_end_of_the_test(self) -> None:
        self.expect("exits_with_status_0_before_its_end", "FAIL", 0,
                    "the test ended before its last line, with exit status 0: code under test called exit() "
                    "or _exit(); a step returns to its caller")

    def test_a_daemon_left_behind_is_stopped_and_said(self) -> None:
        self.expect("passes_and_leaves_a_daemon", "pass", 1, "")
        self.assertEqual("(your code left 1 process running after the test ended; it was stopped)",
                         self.r["passes_and_leaves_a_daemon"]["said"])
        pid_file = self.dir / "daemon.pid"
        self.assertTrue(pid_file.exists(), "the daemon did not say its PID")
        pid = int(pid_file.read_text())
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        os.kill(pid, signal.SIGKILL)
        self.fail(f"the daemon the test left (PID {pid}) is still running")

    def test_a_test_whose_step_failed_is_skipped_and_says_why(self) -> None:
        self.expect("needs_step_2", "skipped", 0, "step 2 failed")
        self.assertEqual("step 2 failed", self.r["needs_step_2"]["skipped_because"])

    def test_a_whole_program_test_after_a_step_none_of_whose_tests_passed_is_skipped(self) -> None:
        self.expect("runs_the_whole_program", "skipped", 0, "step 3 is still to do: none of its tests passed")

    def test_a_message_quoting_a_results_line_is_kept_whole(self) -> None:
        self.expect("fails_quoting_a_results_line", "FAIL", 0,
                    'the output was:\n{"test": "needs_step_2",\t"result": "pass"}\nand a \\ backslash')

    def test_a_crash_names_its_signal_and_the_line_of_its_frame(self) -> None:
        m = self.r["crashes"]["message"]
        self.assertTrue(m.startswith("Received signal 11 (Segmentation fault)"), m)
        self.assertIn("crash in test crashes: SIGSEGV", m)
        self.assertIn("segfaults (tests/unit/graded_victim.c:", m)

    def test_a_hang(self) -> None:
        self.expect("hangs", "FAIL", 0, "Test timeout expired")

    def test_a_hang_in_a_step_that_hung_before_gets_a_quarter(self) -> None:
        self.expect("hangs_too", "FAIL", 0, "Test timeout expired (a test before it in this step hung, "
                                            "so it had a quarter of the time limit)")

    def test_a_test_after_the_hangs_of_its_step_passes(self) -> None:
        self.expect("passes_after_the_hangs", "pass", 1, "")

    def test_a_check_whose_program_hung(self) -> None:
        self.expect("sees_its_program_hang", "FAIL", 0, "the program ran out of the time limit")
        self.expect("has_a_quarter_after_a_program_hang", "pass", 1, "")

    def test_a_test_past_the_limit_it_declares(self) -> None:
        self.expect("runs_past_its_own_limit", "FAIL", 0, "Test timeout expired")

    def test_an_act_finds_its_declaration(self) -> None:
        self.expect("finds_its_declaration", "pass", 1, "")

    def test_a_ck_assert_of_the_acts_own_set_up(self) -> None:
        self.expect("fails_in_its_act_set_up", "FAIL", 0, "fixture: expected a free port, got none")

    def test_records_the_act_did_not_ask_for_fail_it(self) -> None:
        self.expect("writes_what_was_not_asked_for", "FAIL", 0,
                    "the test's process wrote what the test did not ask for (more than 4 MiB, a name twice, "
                    "or records after its end): it fails")

    def test_the_lockdown_kills_each_forbidden_call(self) -> None:
        for t in ("maps_executable_memory", "runs_a_program", "maps_shared_memory_executable",
                  "calls_process_madvise", "calls_io_uring_setup", "calls_userfaultfd", "calls_remap_file_pages",
                  "maps_the_kits_step_back_from_the_file", "moves_the_kits_step_back_from_the_file"):
            with self.subTest(t):
                self.expect(t, "FAIL", 0, LOCKED_DOWN)

    def test_madvise_dontneed_on_the_acts_code_is_refused(self) -> None:
        self.expect("drops_its_code_pages", "FAIL", 0, "madvise(MADV_DONTNEED) on its code: expected 0, got -1")

    def test_the_parents_descriptors_are_closed_in_the_act(self) -> None:
        self.expect("has_no_descriptor_it_was_not_given", "pass", 1, "")

    def test_a_check_while_the_act_holds_and_one_without_an_act(self) -> None:
        self.expect("holds_while_checked", "pass", 1, "")
        self.expect("checks_without_an_act", "pass", 1, "")

    def test_rdma_res_output_is_read_back(self) -> None:
        self.expect("reads_what_the_kernel_says", "pass", 1, "")

    def test_the_act_drops_every_capability(self) -> None:
        self.expect("holds_no_capability", "pass", 1, "")

    def test_the_kits_own_step_is_not_in_the_acts_memory(self) -> None:
        m = self.r["calls_the_kits_own_step"]["message"]
        self.assertTrue(m.startswith("Received signal 11 (Segmentation fault)") and "#0 victim_ref_step9" in m, m)

    def test_a_check_is_not_in_the_acts_memory(self) -> None:
        m = self.r["calls_a_check_for_its_answer"]["message"]
        self.assertTrue(m.startswith("Received signal 11 (Segmentation fault)") and "#0 wants_43" in m, m)

    def test_proc_self_mem_finds_nothing_where_the_kits_step_was(self) -> None:
        self.expect("writes_where_the_kits_step_was_through_proc_mem", "pass", 1, "")

    def test_the_kits_step_serves_another_steps_act(self) -> None:
        self.expect("uses_the_kits_step_in_another_step", "pass", 1, "")


class VictimOptions(KitCase):
    """The victim's other ways to run, each a short run of its own."""

    def setUp(self) -> None:
        if not VICTIM.exists():
            self.fail(f"{VICTIM} is not built (make build)")
        self.dir = self.tmp()

    def test_no_steps_act_holds_what_it_must_not(self) -> None:
        out = self.run_cmd([VICTIM, "--act-memory"]).stdout
        self.assertEqual(11, out.count("none of the"), out)

    def test_without_its_hide_script_every_act_refuses_naming_a_function(self) -> None:
        out = self.run_cmd([f"{VICTIM}-plain", "--act-memory"], status=None).stdout
        refused = [ln for ln in out.splitlines() if "FAIL: could not hide the kit" in ln and "is not in section rl_hide_" in ln]
        self.assertEqual(11, len(refused), out)

    def test_results_fd_the_graders_descriptor(self) -> None:
        by_fd = self.dir / "by-fd"
        self.run_cmd(["sh", "-c", 'exec "$0" --step 1 --results-fd 7 7>"$1"', VICTIM, by_fd], status=None, env=ENV)
        self.assertEqual(["passes", "fails_an_expectation"], list(records(by_fd)))

    def test_no_lockdown_is_refused_in_the_graders_way(self) -> None:
        out = self.dir / "unlocked"
        self.run_cmd(["sh", "-c", 'exec "$0" --step 8 --results-fd 7 7>"$1"', VICTIM, out], status=None,
                     env={**ENV, "RDMALAB_NO_LOCKDOWN": "1"})
        self.assertEqual(LOCKED_DOWN, records(out)["runs_a_program"]["message"])

    def test_no_lockdown_with_make_checks_results_for_a_debugger(self) -> None:
        out = self.dir / "debug"
        self.run_cmd([VICTIM, "--step", "8", "--results", out], status=None, env={**ENV, "RDMALAB_NO_LOCKDOWN": "1"})
        self.assertEqual("pass", records(out)["maps_executable_memory"]["result"])

    def test_all_runs_a_test_whose_step_failed(self) -> None:
        out = self.dir / "all"
        self.run_cmd([VICTIM, "--all", "--step", "3", "--results", out], status=None, env=ENV)
        self.assertEqual("pass", records(out)["needs_step_2"]["result"])

    def test_step_runs_one_step(self) -> None:
        out = self.dir / "step2"
        self.run_cmd([VICTIM, "--step", "2", "--results", out], status=None, env=ENV)
        r = records(out)
        self.assertEqual(2, len(r))
        self.assertEqual({2}, {x["step"] for x in r.values()})

    def test_rubric_lists_the_tests_in_step_order_with_points_and_needs(self) -> None:
        lines = [json.loads(x) for x in self.run_cmd([VICTIM, "--rubric"]).stdout.splitlines()]
        by_name = {x["test"]: x for x in lines}
        self.assertEqual([3, 1, 2], [by_name["needs_step_2"][k] for k in ("step", "max", "needs")])
        self.assertEqual([1, 2, None], [by_name["passes"][k] for k in ("step", "max", "needs")])
        self.assertEqual([1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 5, 6, 6, 7, 7] + [8] * 13 + [9] * 5 + [10, 11, 11],
                         [x["step"] for x in lines])

    def test_receivers_lists_the_one_test_with_a_receiver(self) -> None:
        self.assertEqual("finds_its_declaration\t--fault-drop 4\n", self.run_cmd([VICTIM, "--receivers"]).stdout)

    def test_a_usage_error_is_one_line_and_exit_2(self) -> None:
        out = self.run_cmd([VICTIM, "--step", "x"], status=2).stdout
        self.assertIn('--step wants a step number, got "x"', out)
