"""The kit on another Debian release (default trixie, Debian 13: gcc 14,
rdma-core 56, OpenSSL 3.5, Check 0.15, util-linux 2.41), in a fresh chroot
(tests/portability/debian-chroot), from a clean clone of the committed kit
(its HEAD, not the working tree).

In the chroot: apt-get install make (a minbase has none), the packages,
make, make unit-test, and make check LAB=3 SOL=1 in a User-Mode Linux guest
whose root is the chroot's, so its rdma-core and rxe provider are the
release's. Each step is a case, from two runs of the chroot (setUpClass).
Settings, as tests/portability/test-debian sets them from its options:
RDMALAB_DEBIAN_SUITE (trixie); RDMALAB_DEBIAN_DEPS, "needed" (apt resolves
every package make deps would install, and scripts/deps installs the parts
the steps use) or "all" (make deps itself, every part: 4 times the time);
RDMALAB_DEBIAN_UML_KERNEL, "host" (the guest boots this machine's UML
kernel: only the user space is the release's) or "build" (the chroot builds
its own from the release's kernel source, kept in this machine's cache).
Root only (debootstrap, chroot).
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import tempfile
import unittest
from pathlib import Path
from typing import IO

from tests.kitbase import KIT, KitCase, run

SUITE = os.environ.get("RDMALAB_DEBIAN_SUITE", "trixie")
DEPS = os.environ.get("RDMALAB_DEBIAN_DEPS", "needed")
KERNEL = os.environ.get("RDMALAB_DEBIAN_UML_KERNEL", "host")
PARTS = "build run" + ("" if KERNEL == "host" else " uml")

# In the chroot: each step under a heading, then its status and time.
# Arguments: the part, 1 (install the packages, build, unit tests) or 2
# (Lab 3's solution in UML; the release's versions of what the kit builds
# and runs on); how to install, all or needed; the parts it needs.
STEPS = r'''
step() {
	name=$1
	shift
	echo "== $name"
	t0=$(date +%s)
	"$@"
	rc=$?
	echo "== $name: status $rc in $(($(date +%s) - t0)) s"
	return $rc
}
export DEBIAN_FRONTEND=noninteractive
part=$1 how=$2 parts=$3
if [ "$part" = 2 ]; then
	step "make check LAB=3 SOL=1" make check LAB=3 SOL=1
	echo "== release: Debian $(cat /etc/debian_version), gcc $(gcc -dumpfullversion)," \
		"OpenSSL $(pkg-config --modversion libcrypto), util-linux $(dpkg-query -W -f "\${Version}" util-linux)," \
		"python3 $(python3 -c 'import platform; print(platform.python_version())')," \
		$(dpkg-query -W -f "\${Package} \${Version}, " rdma-core ibverbs-providers check mawk | sed "s/, \$//")
	exit
fi
if [ "$how" = all ]; then
	deps() { step "make deps" make deps; }
else
	deps() {
		step "apt-get install --simulate: every package of make deps" sh -c "apt-get install --simulate \$(scripts/deps list) >/dev/null" &&
			step "scripts/deps install $parts" scripts/deps install $parts
	}
fi
step "apt-get install make" sh -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends make >/dev/null" &&
	deps &&
	step make make &&
	step "make unit-test" make unit-test
'''


def setUpModule() -> None:
    if os.getuid() != 0:
        raise unittest.SkipTest("it needs root (debootstrap, chroot), as CI runs it")
    if os.environ.get("RDMALAB_CHROOT") == SUITE:
        raise unittest.SkipTest(f"this is already a {SUITE} chroot of tests/portability/debian-chroot")


def step_status(out: str, name: str) -> str | None:
    """The line "== NAME: status N in S s" of the chroot's output, or None."""
    m = re.search(rf"(?m)^== {re.escape(name)}: status .*$", out)
    return m.group(0) if m else None


class InADebianChroot(KitCase):
    out: str = ""
    release: str = ""
    lab3_skipped: str = ""
    dir: Path
    lock: IO[str]

    @classmethod
    def setUpClass(cls) -> None:
        # A run folder of debian-chroot's, beside its cached base and
        # downloads (the same file system), held by its lock while the
        # chroot is kept between the two runs: if this run is killed, the
        # next debian-chroot removes it.
        cache = Path(os.environ.get("RDMALAB_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or
                                                             Path.home() / ".cache") / "rdmalab") / "debian-chroot"
        cache.mkdir(parents=True, exist_ok=True)
        cls.dir = Path(tempfile.mkdtemp(prefix="run.", dir=cache))
        cls.lock = open(f"{cls.dir}.lock", "a")
        fcntl.flock(cls.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        # The kit's clone goes in with the first part; the UML kernel is asked
        # for after it (make test's other guests build it meanwhile).
        cls.out = cls.in_chroot(1, "--kit", str(KIT))
        if not re.search(r"(?m)^== make unit-test: status 0 in", cls.out):
            return
        probe = run(["vm/uml-probe"], status=None)
        if probe.returncode != 0:
            cls.lab3_skipped = f"User-Mode Linux does not run here ({probe.stdout.strip().splitlines()[-1:]})"
            return
        if KERNEL == "build":
            cls.out += cls.in_chroot(2, "--share-cache")
        else:
            uml = run(["vm/uml-kernel"], merge=False, timeout=3600).stdout.strip()
            cls.out += cls.in_chroot(2, "--uml-kernel", uml)
        m = re.search(r"(?m)^== release: (.*)$", cls.out)
        cls.release = m.group(1) if m else ""

    @classmethod
    def in_chroot(cls, part: int, *options: str) -> str:
        """Part PART of the steps in the chroot (the run folder), with
        debian-chroot's OPTIONS; its output."""
        done = subprocess.run(["tests/portability/debian-chroot", "--suite", SUITE, *options, "--keep", str(cls.dir),
                               "--", "sh", "-c", STEPS, "test-debian", str(part), DEPS, PARTS],
                              cwd=KIT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
        print("\n".join("  " + ln for ln in done.stdout.splitlines()))
        return done.stdout

    @classmethod
    def tearDownClass(cls) -> None:
        # Once debian-chroot, whose namespace held its mounts, has ended.
        run(["rm", "-rf", "--one-file-system", cls.dir], status=None)
        Path(f"{cls.dir}.lock").unlink(missing_ok=True)
        cls.lock.close()

    def passed(self, name: str) -> None:
        line = step_status(self.out, name)
        self.assertIsNotNone(line, f"'{name}' did not run in the {SUITE} chroot:\n{self.out[-1500:]}")
        self.assertRegex(line or "", r": status 0 in ", f"expected '{name}' to pass in the {SUITE} chroot, got: {line}")

    def test_apt_get_installs_make(self) -> None:
        self.passed("apt-get install make")

    def test_every_package_of_make_deps_resolves_and_installs(self) -> None:
        if DEPS == "all":
            self.passed("make deps")
        else:
            self.passed("apt-get install --simulate: every package of make deps")
            self.passed(f"scripts/deps install {PARTS}")

    def test_make_builds(self) -> None:
        self.passed("make")

    def test_make_unit_test_passes_every_test(self) -> None:
        self.passed("make unit-test")
        self.assertRegex(self.out, r"(?m)^test: [1-9][0-9]* passed, 0 failed, 0 skipped$")

    def test_lab3s_solution_passes_in_uml_on_the_releases_user_space(self) -> None:
        if self.lab3_skipped:
            self.skipTest(self.lab3_skipped)
        self.passed("make check LAB=3 SOL=1")
        self.assertRegex(self.out, r"running on rxe0 \(GID index [0-9]+, uml\)")

    def test_the_release_is_the_one_asked_for(self) -> None:
        # Independent of the kit: the release's own version file and compiler.
        if not self.release:
            self.skipTest(self.lab3_skipped or "the second part did not run")
        print(f"{SUITE}: {self.release}; UML kernel: {KERNEL}")
        if SUITE == "trixie":
            self.assertRegex(self.release, r"^Debian 13\.[0-9]+, gcc 14\.")

