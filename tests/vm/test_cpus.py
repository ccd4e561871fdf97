"""The User-Mode Linux guest boots, and a lab's solution passes in it, on
CPUs whose FP/XSTATE areas differ in size.

A UML kernel sets its processes' registers through the host's ptrace in the
host's size; 6.12 fixed that size when it was built and panicked on a CPU
with AMX. Here QEMU (software emulation, a real kernel) emulates other
CPUs, and the kit's UML kernel runs inside it: Haswell (neither PKU nor
AVX-512: 832 bytes) and QEMU's max (PKU: 2696 bytes); the host's own CPU is
every other UML test. In each: ptrace mode, the grader's, runs Lab 0's
solution tests, and the seccomp mode boots (make check's, vm/uml-run
--seccomp). One QEMU CPU each: it runs beside the rest of make test.
"""

from __future__ import annotations

import re
import shutil

from tests.kitbase import KitCase, run

# In the QEMU guest: this CPU's size, then the nested guests. Data in (the
# kit's path, the model), no code from here but the kit's.
GUEST_SCRIPT = r"""
cd "$1"
echo "== xstate $(build/xstate-size)"
vm/uml-run --mem 512 -- make -s --no-print-directory check LAB=0 SOL=1 RDMA_MODE=native CHECK_DIR=build/test-cpus/$2
echo "== lab 0: status $?"
vm/uml-run --mem 512 --seccomp -- echo seccomp mode ran
echo "== seccomp: status $?"
"""


class UmlOnOtherCpus(KitCase):
    """One QEMU boot per CPU model, each its case."""

    kernel: str = ""

    @classmethod
    def setUpClass(cls) -> None:
        cls.kernel = run(["vm/uml-kernel"], merge=False).stdout.strip()
        run(["cc", "-O2", "-o", "build/xstate-size", "vm/xstate-size.c"])

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.kit / "build/test-cpus", ignore_errors=True)

    def uml_boots_and_lab0_passes(self, model: str) -> None:
        out = self.run_cmd(
            ["vm/rxe-run", "--cpu", model, "--cpus", "1", "--", "env", f"RDMALAB_UML_KERNEL={self.kernel}",
             "RDMALAB_CACHE=/tmp/rdmalab-cache", "bash", "-c", GUEST_SCRIPT, "test-cpus", str(self.kit), model],
            status=None, timeout=1800).stdout
        size = re.search(r"(?m)^== xstate (\d+)", out)
        where = f"-cpu {model} (FP/XSTATE {size.group(1) if size else '?'} bytes)"
        self.assertRegex(out, r"(?m)^== lab 0: status 0$", f"{where}: Lab 0's solution did not pass in UML:\n{out[-2000:]}")
        self.assertRegex(out, r"(?m)^total: [1-9]\d*/\d+ points", f"{where}: no points for Lab 0's solution")
        self.assertRegex(out, r"(?m)^seccomp mode ran$", f"{where}: UML's seccomp mode did not boot")
        self.assertRegex(out, r"(?m)^== seccomp: status 0$")
        print(f"ok    {where}: UML boots, Lab 0's solution passes in it, seccomp mode boots")

    def test_haswell_832_bytes_neither_pku_nor_avx512(self) -> None:
        self.uml_boots_and_lab0_passes("Haswell")

    def test_qemu_max_2696_bytes_with_pku(self) -> None:
        self.uml_boots_and_lab0_passes("max")
