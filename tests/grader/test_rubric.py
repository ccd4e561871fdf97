"""Each graded test's step and points are written once, where its body is
(RL_GRADED), and the grader takes them from a program of the kit's, never a
submission's: the rubric-only program of mk/labs.mk (the lab's test objects
and the graded runner, no lab code).

For every lab, it prints the same --rubric and --receivers as the lab's
test program, and each test's name is in one file of tests/. In a copy of
the kit, a made-up Lab 9 whose tests call a lab function and read a lab
table: its rubric-only program links without them and agrees with its test
program; a declaration the C compiler rejects, or one the runner refuses,
stops make with the file and line and leaves no rubric. No RDMA, no guest;
the labs' test programs must be built (make build).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from tests.kitbase import KitCase, labs, run

LAB9_HEADER = """/* lab9.h: a made-up lab for tests/grader/test_rubric.py. */
#define RL_LAB 9
int lab9_step(int x);
extern const int lab9_table[];
"""

LAB9_STEP = """#include "lab9.h"
const int lab9_table[] = { 1 };
int lab9_step(int x)
{
	return x + 1;
}
"""

# Lab 9's test file: two tests, and a tail that each refusal case adds.
LAB9_TESTS = """#include "../harness.h"
#include "lab9.h"

static int (*const step)(int) = lab9_step; /* the lab function's address, too */

static void calls_it(struct rl_case *c)
{
	(void)c;
	rl_say_int("got", step(1) + lab9_table[0]);
}

static void wants_3(struct rl_case *c)
{
	rl_expect(c, rl_said_int(c, "got") == 3, "expected 3, got %lld", rl_said_int(c, "got"));
}

RL_GRADED(calls_a_lab_function, .step = 1, .points = 2, .act = calls_it, .check = wants_3);

RL_GRADED(talks_to_a_receiver, .step = 2, .points = 3, .needs = 1, .limit = 30,
	  .receiver = "--fault-delay 5:1500 --fault-window 4K", .act = calls_it, .check = wants_3);
"""

LAB9_RUBRIC = [
    {"lab": 9, "step": 1, "test": "calls_a_lab_function", "max": 2, "needs": None, "receiver": None},
    {"lab": 9, "step": 2, "test": "talks_to_a_receiver", "max": 3, "needs": 1,
     "receiver": "--fault-delay 5:1500 --fault-window 4K"},
]


class EveryLab(KitCase):
    """The kit's own labs: their rubric-only program and their test program agree."""

    def rubric_only_agrees(self, lab: int) -> None:
        self.run_cmd(["make", "--no-print-directory", "-s", f"build/rubric/lab{lab}.jsonl",
                      f"build/rubric/lab{lab}.receivers"])
        prog = self.kit / f"build/labs/lab{lab}/tests/steps"
        self.assertTrue(prog.exists(), f"{prog} is not built (make labs)")
        for what, file in (("--rubric", "jsonl"), ("--receivers", "receivers")):
            built = (self.kit / f"build/rubric/lab{lab}.{file}").read_text()
            self.assertEqual(built, self.run_cmd([prog, what], merge=False).stdout,
                             f"Lab {lab}: the rubric-only program and {prog} {what} differ")

    def test_each_test_is_named_in_one_c_file_of_tests(self) -> None:
        sources = {p: p.read_text(errors="replace") for p in (self.kit / "tests").rglob("*")
                   if p.is_file() and p.suffix in (".c", ".h")}
        for lab in labs():
            for line in (self.kit / f"build/rubric/lab{lab}.jsonl").read_text().splitlines():
                name = json.loads(line)["test"]
                word = re.compile(rf"\b{re.escape(name)}\b")
                files = [str(p.relative_to(self.kit)) for p, text in sources.items() if word.search(text)]
                with self.subTest(name):
                    self.assertEqual(1, len(files), f"Lab {lab}: test {name} is named in {files}")


def _lab_cases() -> None:
    for lab in labs():
        setattr(EveryLab, f"test_lab{lab}_rubric_only_program_agrees_with_its_test_program",
                lambda self, lab=lab: self.rubric_only_agrees(lab))


_lab_cases()


class MadeUpLab9(KitCase):
    """A Lab 9 in a copy of the kit: only Lab 9 compiles there."""

    top: Path
    copy: Path
    rubric: Path

    @classmethod
    def setUpClass(cls) -> None:
        cls.top = cls.class_tmp("rdmalab-test-rubric.")
        cls.copy = cls.top / "kit"
        (cls.copy / "build").mkdir(parents=True)
        for f in ("Makefile", "mk", "framework", "tests", "labs", "receiver", "scripts"):
            run(["cp", "-a", cls.kit / f, cls.copy / f])
        for f in ("framework", "lib", "tests"):  # the kit's objects
            if (cls.kit / "build" / f).is_dir():
                run(["cp", "-a", cls.kit / "build" / f, cls.copy / "build/"])
        if not (cls.copy / "build/tests/graded.o").exists():
            raise AssertionError("no build/tests/graded.o: build the graded runner first (make build)")
        (cls.copy / "labs/lab9").mkdir()
        (cls.copy / "tests/lab9").mkdir()
        (cls.copy / "labs/lab9/lab9.h").write_text(LAB9_HEADER)
        (cls.copy / "labs/lab9/step.c").write_text(LAB9_STEP)
        cls.rubric = cls.copy / "build/rubric/lab9.jsonl"


    def make_lab9(self, tail: str, *targets: str) -> subprocess.CompletedProcess[str]:
        (self.copy / "tests/lab9/test_x.c").write_text(LAB9_TESTS + tail + ("\n" if tail else ""))
        return run(["make", "-C", self.copy, "--no-print-directory", *targets], status=None, timeout=300)

    def test_lab9s_rubric_only_program_has_no_lab_code_and_agrees(self) -> None:
        done = self.make_lab9("", "build/rubric/lab9.jsonl", "build/rubric/lab9.receivers",
                              "build/labs/lab9/tests/steps")
        self.assertEqual(0, done.returncode, f"make could not build Lab 9's rubric and test program:\n{done.stdout[-2000:]}")
        self.assertEqual(LAB9_RUBRIC, [json.loads(x) for x in self.rubric.read_text().splitlines()])
        self.assertEqual("talks_to_a_receiver\t--fault-delay 5:1500 --fault-window 4K\n",
                         (self.copy / "build/rubric/lab9.receivers").read_text())
        self.assertEqual(self.rubric.read_text(),
                         run([self.copy / "build/labs/lab9/tests/steps", "--rubric"], merge=False).stdout)
        symbols = run(["nm", self.copy / "build/rubric/steps-lab9"]).stdout
        self.assertNotRegex(symbols, r"(?m) T lab9_step$", "the rubric-only program has the lab's code (lab9_step)")

    def refused(self, tail: str, pattern: str) -> None:
        self.rubric.unlink(missing_ok=True)
        done = self.make_lab9(tail, "build/rubric/lab9.jsonl")
        self.assertNotEqual(0, done.returncode, "make built a rubric")
        self.assertRegex(done.stdout, pattern)
        self.assertFalse(self.rubric.exists(), "a rubric was left")
        self.assertFalse(Path(f"{self.rubric}.tmp").exists(), "a half-written rubric was left")

    def test_a_declaration_the_compiler_rejects_stops_make_at_its_line(self) -> None:
        self.refused("RL_GRADED(misspelt, .step = 3, .pionts = 1, .check = wants_3);",
                     r"tests/lab9/test_x\.c:2[0-9]:.*pionts")

    def test_a_declaration_without_a_step_stops_make_at_its_line(self) -> None:
        self.refused("RL_GRADED(no_step, .points = 1, .check = wants_3);",
                     r"tests/lab9/test_x\.c:2[0-9]: test no_step needs \.step")

    def test_a_declaration_without_a_check_stops_make_at_its_line(self) -> None:
        self.refused("RL_GRADED(no_check, .step = 3, .points = 1, .act = calls_it);",
                     r"tests/lab9/test_x\.c:2[0-9]: test no_check needs a \.check")
