"""What the grader takes from a submission, and what it leaves.

One class of Lab 0 tarballs, each with one thing a careless or hostile
student could put in: a link to a file of the machine, a device node, an
absolute path, a path through "..", a file written through a link, a file
over 1 MiB, a name with spaces and quotes, and a name the grader uses for
its own files. The class is graded once (setUpClass; a guest boots per
submission); each submission's fate is a case: it says what it took, in
one line, and writes nothing outside its folder.
"""

from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path

from tests.kitbase import KIT, KitCase, run

ROOT = os.getuid() == 0


class Intake(KitCase):
    top: Path
    src: Path
    klass: Path
    out: Path
    grade_log: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.top = cls.class_tmp("rdmalab-test-intake.")
        cls.top.chmod(0o755)
        cls.src, cls.klass, cls.out = cls.top / "src", cls.top / "class", cls.top / "results"
        cls.klass.mkdir()
        cls.make_tarballs()
        done = run(["grader/rdmalab-grade", "--mode", os.environ.get("RDMALAB_MODE", "auto"), "-j", "2", "--lab", "0",
                    "--class", "-o", cls.out, cls.klass], status=None, timeout=1800)
        cls.grade_log = done.stdout

    @classmethod
    def fresh(cls) -> None:
        """A submission of Lab 0: the stubs, for a case to change."""
        shutil.rmtree(cls.src, ignore_errors=True)
        (cls.src / "labs").mkdir(parents=True)
        shutil.copytree(KIT / "labs/lab0", cls.src / "labs/lab0", symlinks=True)

    @classmethod
    def pack(cls, name: str, *options: str) -> None:
        run(["tar", "-czf", cls.klass / f"{name}.tgz", "-C", cls.src, *options, "labs"])

    @classmethod
    def make_tarballs(cls) -> None:
        lab0 = cls.src / "labs/lab0"
        cls.fresh()
        (lab0 / "devices.c").unlink()
        (lab0 / "devices.c").symlink_to("/etc/passwd")
        cls.pack("links")
        if ROOT:
            cls.fresh()
            (lab0 / "gids.c").unlink()
            os.mknod(lab0 / "gids.c", 0o644 | 0o020000, os.makedev(1, 3))
            cls.pack("device")
        cls.fresh()
        (cls.top / "abs").mkdir()
        (cls.top / "abs/file").write_text("absolute\n")
        run(["tar", "-czf", cls.klass / "absolute.tgz", "-P", "-C", cls.src, "labs", cls.top / "abs/file"])
        cls.fresh()
        (cls.src / "evil").write_text("dot dot\n")
        run(["tar", "-czf", cls.klass / "dotdot.tgz", "-C", cls.src, "labs",
             "--transform", "s,^evil$,labs/lab0/../../../../escaped,", "evil"])
        # A link out of the folder, then a file written through it: tar must not follow.
        cls.fresh()
        (cls.top / "outside").mkdir()
        (cls.top / "outside").chmod(0o777)
        (lab0 / "out").symlink_to(cls.top / "outside")
        (cls.src / "through").write_text("through a link\n")
        tar = cls.top / "through.tar"
        run(["tar", "-cf", tar, "-C", cls.src, "labs"])
        run(["tar", "-rf", tar, "-C", cls.src, "--transform", "s,^through$,labs/lab0/out/file,", "through"])
        (cls.klass / "through-link.tgz").write_bytes(gzip.compress(tar.read_bytes()))
        cls.fresh()
        (lab0 / "attributes.c").write_text("x" * 1100000)
        cls.pack("huge")
        cls.fresh()
        cls.pack("o'brien \"the\" student")
        cls.fresh()
        cls.pack("labs")
        shutil.rmtree(cls.top / "abs")

    def taken(self, name: str) -> list[str]:
        f = self.out / name / "logs/files-taken.txt"
        self.assertTrue(f.exists(), f"{name}: no files-taken.txt; the grader said:\n{self.grade_log[-1200:]}")
        return f.read_text().splitlines()

    def report(self, name: str) -> str:
        f = self.out / name / "report.txt"
        return f.read_text() if f.exists() else ""

    def class_line(self, name: str) -> str:
        # class.csv quotes its text fields.
        lines = (self.out / "class.csv").read_text().splitlines() if (self.out / "class.csv").exists() else []
        return next((ln for ln in lines if ln.startswith(f'"{name}",')), "")

    def test_the_class_is_graded(self) -> None:
        self.assertTrue((self.out / "class.csv").exists(), f"no class.csv: {self.grade_log[-600:]}")

    def test_a_link_to_a_file_of_the_machine_is_not_taken(self) -> None:
        self.assertIn("lab0/devices.c: not a regular file, the stub is used", self.taken("links"))
        self.assertIn("lab0/gids.c: taken", self.taken("links"))
        self.assertRegex(self.class_line("links"), r'^"links","",0,')

    def test_a_device_node_stops_the_unpacking(self) -> None:
        if not ROOT:
            self.skipTest("only root makes a device node")
        self.assertIn("could not unpack device.tgz: tar: labs/lab0/gids.c: Cannot mknod: Operation not permitted",
                      self.report("device"))

    def test_an_absolute_path_writes_nothing_outside(self) -> None:
        self.assertFalse((self.top / "abs/file").exists(), "the tarball wrote abs/file outside its folder")
        self.assertIn("lab0/gids.c: taken", self.taken("absolute"))
        self.assertRegex(self.class_line("absolute"), r'^"absolute","",0,')

    def test_a_path_through_dotdot_is_refused_saying_how_to_pack(self) -> None:
        self.assertFalse((self.top / "escaped").exists(), "the tarball wrote escaped outside its folder")
        self.assertIn("could not unpack dotdot.tgz: tar: labs/lab0/../../../../escaped: Member name contains '..' "
                      "(make it with: tar -czf NAME.tgz labs)", self.report("dotdot"))

    def test_a_file_written_through_a_link_does_not_leave_the_folder(self) -> None:
        self.assertFalse((self.top / "outside/file").exists(), "the tarball wrote outside/file through a link")

    def test_a_file_over_1_mib_is_not_taken(self) -> None:
        self.assertIn("lab0/attributes.c: 1100000 bytes (over 1 MiB), the stub is used", self.taken("huge"))
        self.assertRegex(self.class_line("huge"), r'^"huge","",0,')

    def test_a_name_with_spaces_and_quotes_is_made_safe(self) -> None:
        self.assertIn("lab0/gids.c: taken", self.taken("o_brien__the__student"))
        self.assertRegex(self.class_line("o_brien__the__student"), r'^"o_brien__the__student","",0,')

    def test_a_name_the_grader_uses_for_its_own_files_is_a_student(self) -> None:
        self.assertIn("lab0/gids.c: taken", self.taken("labs"))
        self.assertRegex(self.class_line("labs"), r'^"labs","",0,')
