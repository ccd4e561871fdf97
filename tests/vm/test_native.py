"""The native path (RDMA_MODE=native: a device of the running kernel, no
guest), where a student with rdma_rxe loaded takes it.

Here, inside the kit's QEMU guest: a real Linux kernel (Debian's) that
enforces no-execute as every student's machine does (User-Mode Linux does
not: there Lab 2's tests passed while they crashed on every real kernel).
rxe0 is a real device to every process there, so the kit runs natively,
with no nested guest. One boot runs everything (setUpClass); each fact is a
case: each lab's solution passes make check and its stub fails it, make
demo earns a key that checks out, make grade LAB=0 grades the stub with the
whole sandbox (root there), and with the device deleted native mode refuses
in one line that gives the exact rdma link add command (make doctor gives
it too, from the same function, vm/rdma-env.sh's rl_rxe_commands).
"""

from __future__ import annotations

import json
import re
import shutil

from tests.kitbase import KitCase, full_points, labs, run

# The guest runs this: data in (the kit's path, the labs), no code from here
# but the kit's. Its results go to build/test-native, not where make test's
# own run of the step tests keeps them (this test runs beside it).
GUEST_SCRIPT = r"""
cd "$1" && shift
for lab in "$@"; do
	echo "== lab $lab"
	make -s --no-print-directory check LAB="$lab" SOL=1 RDMA_MODE=native CHECK_DIR=build/test-native/lab$lab
	echo "== lab $lab: status $?"
	echo "== stub $lab"
	make -s --no-print-directory check LAB="$lab" RDMA_MODE=native CHECK_DIR=build/test-native/stub$lab
	echo "== stub $lab: status $?"
done
echo "== demo"
make -s --no-print-directory demo RDMA_MODE=native DEMO_SIZE=1M
echo "== demo: status $?"
echo "== grade"
make -s --no-print-directory grade LAB=0 RDMA_MODE=native GRADE_OUT=build/test-native GRADE_NAME=native
echo "== grade: status $?"
rdma link delete "$RDMALAB_DEVICE"
echo "== no device"
vm/run-rdma --mode native -- true
echo "== native without a device: status $?"
"""


def section(text: str, name: str) -> str:
    """The lines from "== NAME" to "== NAME: status ..." (or the end)."""
    m = re.search(rf"^== {re.escape(name)}\n(.*?^== {re.escape(name)}: status \d+$|.*)", text, re.M | re.S)
    return m.group(1) if m else ""


class NativeInQemu(KitCase):
    """Each lab and each native flow, from one boot of the QEMU guest."""

    out: str = ""
    status: int = 0
    labs: list[int]
    report: str
    submission: dict

    @classmethod
    def setUpClass(cls) -> None:
        cls.labs = labs()
        # Every lab twice, make demo and make grade in one software-emulated
        # guest beside the rest of make test: 7 min idle, past rxe-run's
        # default 20 min when the machine is loaded three times over.
        done = run(
            ["vm/run-rdma", "--mode", "vm", "--timeout", "2400", "--", "bash", "-c", GUEST_SCRIPT, "test-native", str(cls.kit),
             *[str(n) for n in cls.labs]],
            status=None, timeout=3600)
        cls.out, cls.status = done.stdout, done.returncode
        grade = cls.kit / "build/test-native/native/latest"
        cls.report = (grade / "report.txt").read_text() if (grade / "report.txt").exists() else ""
        sub = grade / "submission.json"
        cls.submission = json.loads(sub.read_text()) if sub.exists() else {}
        shutil.rmtree(cls.kit / "build/test-native", ignore_errors=True)

    def test_the_guest_ran_to_the_end(self) -> None:
        self.assertIn("== native without a device: status", self.out,
                      f"the guest's run ended early (status {self.status})")

    def lab_solution_passes(self, lab: int) -> None:
        s = section(self.out, f"lab {lab}")
        self.assertRegex(s, rf"(?m)^== lab {lab}: status 0$",
                         f"lab {lab}: expected its solution to pass make check natively, got:\n{s[-1500:]}")
        self.assertRegex(s, r"running on rxe0 \(GID index \d+, native\)",
                         f"lab {lab}: expected the check to say it ran natively on rxe0")

    def lab_stub_fails(self, lab: int) -> None:
        s = section(self.out, f"stub {lab}")
        self.assertRegex(s, r"(?m)^total: 0/\d+ points", f"lab {lab}: expected its stub to earn 0 natively, got:\n{s[-800:]}")
        self.assertRegex(s, rf"(?m)^== stub {lab}: status [1-9]", f"lab {lab}: expected its stub to fail make check")

    def test_make_demo_runs_natively_and_its_key_checks_out(self) -> None:
        s = section(self.out, "demo")
        self.assertIn("demo: using this machine's RDMA device", s)
        self.assertIn("demo: done: the key checks out", s)
        self.assertRegex(s, r"(?m)^== demo: status 0$")

    def test_make_grade_grades_lab0s_stub_natively_in_the_whole_sandbox(self) -> None:
        s = section(self.out, "grade")
        self.assertRegex(s, r"(?m)^grade: graded now .*: Lab 0[ ;]", s[-1500:])
        self.assertRegex(s, r"(?m)^== grade: status 0$")
        self.assertIn(f"Lab 0: 0/{full_points(0)} points", self.report)
        self.assertIsNone(self.submission.get("unsafe", "missing"), "expected the whole sandbox (unsafe: null)")

    def test_native_mode_without_a_device_gives_the_rdma_link_add_command(self) -> None:
        s = section(self.out, "no device")
        self.assertRegex(s, r"(?m)^run-rdma: no active RDMA device on this machine, but its kernel has Soft-RoCE: "
                            r"make one with 'rdma link add rxe0 type rxe netdev [a-z0-9]+'")
        self.assertRegex(s, r"(?m)^== native without a device: status [1-9]")


def _lab_cases() -> None:
    """A case for each lab's solution and each lab's stub: the lab list is the
    rubric's."""
    for lab in labs():
        setattr(NativeInQemu, f"test_lab{lab}_solution_passes_natively",
                lambda self, lab=lab: self.lab_solution_passes(lab))
        setattr(NativeInQemu, f"test_lab{lab}_stub_fails_natively",
                lambda self, lab=lab: self.lab_stub_fails(lab))


_lab_cases()
