"""scripts/lab-rules refuses each thing a lab's files may not hold, with one
line naming the file, the symbol and the rule, and passes the solution. Each
case is Lab 3's solution with one addition to hash.c, compiled as make does
(-MMD) in a scratch tree. No RDMA, no guest.
"""

from __future__ import annotations

import subprocess
import unittest

from tests.kitbase import KitCase, run

if not (KitCase.kit / "solutions/lab3").is_dir():
    raise unittest.SkipTest("no solutions/ in a student handout: nothing to check")

CPPFLAGS = ["-Iframework", *run(["pkg-config", "--cflags", "libibverbs", "librdmacm", "libcrypto"]).stdout.split()]
NOT_ALLOWED = "which Lab 3 does not allow (tests/lab3/allowed lists what it does)"


class LabRules(KitCase):
    def rules_on(self, addition: str, cppflags: str = " ".join(CPPFLAGS)) -> subprocess.CompletedProcess[str]:
        """scripts/lab-rules on Lab 3's solution with ADDITION at the end of
        hash.c, run with CPPFLAGS (make's by default)."""
        self.scratch = self.tmp()
        tree, obj = self.scratch / "tree", self.scratch / "obj"
        obj.mkdir()
        (self.scratch / "tests/lab3").mkdir(parents=True)
        (self.scratch / "tests/lab3/inside.h").write_text("#define SECRET 1\n")
        tree.mkdir()
        run(["cp", "-r", "solutions/lab3", "solutions/common", tree])
        with open(tree / "lab3/hash.c", "a") as f:
            f.write(addition + "\n")
        for name in ("hash", "exchange", "transfer"):
            run(["cc", *CPPFLAGS, f"-I{tree}/lab3", "-O2", "-std=gnu11", "-Wall", "-Wno-unused-parameter",
                 "-MMD", "-MP", "-c", "-o", obj / f"{name}.o", tree / f"lab3/{name}.c"])
        # lab-rules preprocesses the lab's files with make's CPPFLAGS.
        return self.run_cmd(["scripts/lab-rules", "3", tree, obj], status=None, env={"CPPFLAGS": cppflags})

    def refused(self, addition: str, line: str) -> None:
        done = self.rules_on(addition)
        self.assertEqual(1, done.returncode, done.stdout)
        self.assertIn(line.replace("TREE", str(self.scratch / "tree")), done.stdout.splitlines())

    def test_the_solution_keeps_the_rules(self) -> None:
        done = self.rules_on("")
        self.assertEqual((0, ""), (done.returncode, done.stdout))

    def test_a_call_of_a_function_not_allowed(self) -> None:
        self.refused("#include <stdlib.h>\nint lab3_give_up(void) { exit(0); }",
                     f"lab3/hash.c calls exit(), {NOT_ALLOWED}")

    def test_an_include_from_outside_the_lab(self) -> None:
        self.refused('#include "../../tests/lab3/inside.h"',
                     "lab3/hash.c includes TREE/lab3/../../tests/lab3/inside.h, which Lab 3 does not allow: "
                     "only system headers, lab3's own and framework/*.h")

    def test_a_global_function_the_header_does_not_declare(self) -> None:
        self.refused("int tcase_name_shadow(void) { return 0; }",
                     "lab3/hash.c defines tcase_name_shadow, which lab3.h does not declare: make it static")

    def test_a_constructor(self) -> None:
        self.refused('__attribute__((constructor)) static void early(void) { puts("before main"); }',
                     "lab3/hash.c has a constructor or destructor (.init_array), which no lab allows: "
                     "code runs only when called")

    def test_inline_assembly(self) -> None:
        self.refused('__attribute__((used)) static int spin(void) { __asm__ volatile("" ::: "memory"); return 0; }',
                     "lab3/hash.c has inline assembly, which no lab allows")

    def test_inline_assembly_made_by_the_preprocessor(self) -> None:
        self.refused('#define HIDE(x) __as##x\n__attribute__((used)) static void hidden(void) { HIDE(m__)(""); }',
                     "lab3/hash.c has inline assembly, which no lab allows")

    def test_a_file_it_cannot_preprocess_is_refused_not_passed(self) -> None:
        done = self.rules_on("", cppflags="")
        self.assertEqual(1, done.returncode, done.stdout)
        self.assertIn("lab3/hash.c could not be preprocessed to look for inline assembly (cc -E failed): "
                      "run lab-rules with make's CC and CPPFLAGS", done.stdout.splitlines())

    def test_a_weak_definition(self) -> None:
        self.refused("__attribute__((weak)) int lab3_hash_file_weak(void) { return 0; }",
                     "lab3/hash.c defines lab3_hash_file_weak as weak or indirect (W), which no lab allows: "
                     "define it plainly")

    def test_an_alias(self) -> None:
        self.refused('static int helper(void) { return 0; }\n'
                     'int lab3_hash_alias(void) __attribute__((alias("helper")));',
                     "lab3/hash.c defines lab3_hash_alias as another name of helper (an alias), which no lab "
                     "allows: define it plainly")

    # A weak reference reaches any function by name, allowed or not, and nm
    # shows it as "w", not "U": the tests' own version of a step, say.
    def test_a_weak_reference_by_pragma_weak(self) -> None:
        self.refused("#pragma weak ref_send_file_info\nint ref_send_file_info(void);\n"
                     "int lab3_borrow_weakly(void) { return ref_send_file_info ? ref_send_file_info() : 0; }",
                     "lab3/hash.c refers to ref_send_file_info weakly (w), which no lab allows: declare it plainly")

    def test_a_weak_reference_by_attribute_weak(self) -> None:
        self.refused("int ref_send_windows(void) __attribute__((weak));\n"
                     "int lab3_borrow_weakly(void) { return ref_send_windows ? ref_send_windows() : 0; }",
                     "lab3/hash.c refers to ref_send_windows weakly (w), which no lab allows: declare it plainly")

    def test_a_weak_reference_by_weakref(self) -> None:
        self.refused('static int borrowed(void) __attribute__((weakref("rl_post_write")));\n'
                     "int lab3_borrow_weakly(void) { return borrowed ? borrowed() : 0; }",
                     "lab3/hash.c refers to rl_post_write weakly (w), which no lab allows: declare it plainly")

    def test_a_section_of_its_own(self) -> None:
        self.refused('__attribute__((used, section("rl_graded"))) static const int extra = 1;',
                     "lab3/hash.c has a section of its own (rl_graded), which no lab allows")

    # The framework's functions that do a step whole: only those the
    # solution calls are allowed (rl_post_write would be Lab 3's step 4).
    def test_a_call_of_a_framework_function_the_solution_does_not_make(self) -> None:
        self.refused('#include "rdmalab.h"\nint lab3_write_for_me(struct ibv_qp *qp, struct ibv_mr *mr) '
                     "{ return rl_post_write(qp, mr, 0, 1, 0, 0, 1); }",
                     f"lab3/hash.c calls rl_post_write(), {NOT_ALLOWED}")

    # The tests' helpers, which the handout ships compiled (tests/lib/), link
    # into the test program: calling one of them is a call no lab allows.
    def test_a_call_of_the_tests_own_version_of_a_step(self) -> None:
        self.refused("struct lab3_conn;\nvoid ref_send_windows(struct lab3_conn *c, void *rfile);\n"
                     "int lab3_borrow(struct lab3_conn *c) { ref_send_windows(c, 0); return 0; }",
                     f"lab3/hash.c calls ref_send_windows(), {NOT_ALLOWED}")
