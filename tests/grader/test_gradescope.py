"""The Gradescope bundle works end to end on a fake /autograder (see
docs/instructor.md).

Upload: the bundle, unzipped and without setup.sh, routes each layout of
submission to its labs and lists what it ignores (run_autograder --dry-run;
no root, seconds). Bundle: it builds the bundle from the committed kit,
unzips it, runs setup.sh as root (installs nothing when the kit's packages are there; uses the VM
kernels already in RDMALAB_CACHE and the guest's Debian root vm/guest-root
made, or makes it), checks how run_autograder maps several submission
layouts (--dry-run, no VM), then grades Lab 0's reference solution
submitted as loose .c files in one VM boot, on that root, within
Gradescope's default limits where this machine can make them
(tests/grader/gradescope-limits: 768 MB, half a CPU), and checks
results.json: valid JSON in Gradescope's format, full marks.
tests/grader/gradescope-chroot does the same in a Debian 13 chroot. Root
only, as on Gradescope (setup.sh installs packages and debootstraps).
"""

from __future__ import annotations

import json
import os
import shutil
import tarfile
import unittest
import zipfile
from pathlib import Path

from tests.kitbase import KIT, KitCase, full_points, run

LAB = 0
LAYOUTS = ("kit", "labdir", "loose", "tarball")


def unpacked_bundle(top: Path, *options: str) -> tuple[Path, list[str], str]:
    """The bundle made with OPTIONS, unzipped in TOP/autograder/source: that
    root, the zip's names and what making it printed."""
    root = top / "autograder"
    bundle = top / "gradescope.zip"
    made = run(["grader/gradescope/bundle", "-o", bundle, *options], timeout=900).stdout
    (root / "source").mkdir(parents=True)
    (root / "results").mkdir()
    with zipfile.ZipFile(bundle) as z:
        names = z.namelist()
    run(["unzip", "-q", bundle, "-d", root / "source"])
    return root, names, made


def lab_files(lab: Path) -> list[str]:
    """The files LAB's FILES lists (its lines but comments)."""
    return [ln for ln in (lab / "FILES").read_text().splitlines() if ln and not ln.startswith("#")]


def fresh_submission(root: Path) -> Path:
    sub = root / "submission"
    shutil.rmtree(sub, ignore_errors=True)
    sub.mkdir()
    return sub


def submit_lab0(root: Path, layout: str, files: list[str], scratch: Path) -> None:
    """Lab 0's reference FILES in LAYOUT, and a file no student edits."""
    sub = fresh_submission(root)
    where = {"kit": sub / f"rdmalab/labs/lab{LAB}", "labdir": sub / f"lab{LAB}", "loose": sub,
             "tarball": scratch / f"labs/lab{LAB}"}[layout]
    where.mkdir(parents=True, exist_ok=True)
    for f in files:
        shutil.copy(KIT / f"solutions/lab{LAB}/{f}", where / f)
    if layout == "tarball":
        with tarfile.open(sub / "labs.tar.gz", "w:gz") as tar:
            tar.add(where.parent, arcname="labs")
    (sub / "notes.c").write_text("int x;\n")


class Upload(KitCase):
    """run_autograder --dry-run on the unzipped bundle, before setup.sh."""

    root: Path
    files: list[str]
    made: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.root, _, cls.made = unpacked_bundle(cls.class_tmp("rdmalab-gradescope-upload."))
        cls.files = lab_files(KIT / f"labs/lab{LAB}")

    def submit(self, layout: str) -> None:
        submit_lab0(self.root, layout, self.files, self.tmp())

    def dry_run(self, status: int | None = 0, root: Path | None = None) -> str:
        root = root or self.root
        env = {"AUTOGRADER_ROOT": str(root)}
        return self.run_cmd([root / "source/run_autograder", "--dry-run"], env=env, status=status).stdout

    def test_each_submission_layout_maps_to_the_labs_files_and_says_what_it_ignores(self) -> None:
        for layout in LAYOUTS:
            with self.subTest(layout):
                self.submit(layout)
                out = self.dry_run()
                for f in self.files:
                    self.assertIn(f"graded: labs/lab{LAB}/{f}", out.splitlines())
                self.assertIn("ignored notes.c", out)

    def test_an_upload_of_labs_lab3_is_graded_as_lab_3_only_and_lists_what_it_ignores(self) -> None:
        # Lab 3 gives msg.c, which Lab 2's students edit: its folder decides.
        lab3 = fresh_submission(self.root) / "labs/lab3"
        shutil.copytree(KIT / "labs/lab3", lab3)
        (self.root / "submission/notes.txt").write_text("my notes\n")
        out = self.dry_run().splitlines()
        graded = [ln for ln in out if ln.startswith("graded: ")]
        files = lab_files(KIT / "labs/lab3")
        self.assertEqual([f"graded: labs/lab3/{f}" for f in files], graded)
        self.assertIn("grading lab(s) 3", out)
        ignored = "\n".join(ln for ln in out if ln.startswith("ignored "))
        for f in ("notes.txt", "labs/lab3/FILES", "labs/lab3/msg.c"):
            self.assertIn(f, ignored, f"{f} is not listed as ignored, with why")

    def test_an_upload_of_a_whole_kit_grades_its_labs_files_and_lists_its_other_folders_in_a_line_each(self) -> None:
        kit = fresh_submission(self.root) / "rdmalab"
        kit.mkdir()
        run(["bash", "-c", 'git archive HEAD | tar -x -C "$1"', "-", kit])
        out = self.dry_run().splitlines()
        graded = [ln for ln in out if ln.startswith("graded: ")]
        every = [f"graded: labs/{d.name}/{f}" for d in sorted((KIT / "labs").glob("lab[0-9]*"))
                 for f in lab_files(d)]
        self.assertEqual(sorted(every), sorted(graded))
        self.assertIn("ignored rdmalab/framework/ (", "\n".join(out))
        ignored = [ln for ln in out if ln.startswith("ignored ")]
        self.assertLess(len(ignored), 30, "\n".join(ignored))

    def test_making_the_bundle_prints_the_settings_to_make_with_the_docs_figures(self) -> None:
        figures = (KIT / "docs/figures.tsv").read_text()
        self.assertIn("\ttook 12 to 16 minutes\t12-16\tmin\t", figures)
        self.assertIn("  timeout: 40 minutes, not the default 10: a submission of every lab's solution took 12-16 min",
                      self.made)
        self.assertIn("  memory: the default 768 MB", self.made)

    def test_a_dry_run_before_setup_says_what_setup_would_do(self) -> None:
        self.submit("loose")
        self.assertIn("run_autograder: setup.sh has not run; it would", self.dry_run())

    def test_a_loose_file_two_labs_share_goes_to_the_lab_whose_header_it_includes(self) -> None:
        shutil.copy(KIT / "solutions/lab2/teardown.c", fresh_submission(self.root))
        self.assertIn("graded: labs/lab2/teardown.c", self.dry_run().splitlines())

    def test_a_loose_file_two_labs_share_and_no_header_says_is_refused_with_why(self) -> None:
        (fresh_submission(self.root) / "msg.c").write_text("int x;\n")
        out = self.dry_run(status=None)
        self.assertIn("ignored msg.c: Labs 2, 3 each have a msg.c: put it in its lab2/ or lab3/ folder", out)

    def test_the_bundle_of_one_lab_takes_only_that_labs_files(self) -> None:
        root, _, made = unpacked_bundle(self.tmp(), "--lab", "2")
        self.assertIn("  timeout: 20 minutes, not the default 10: a submission that hangs took 670 s", made)
        sub = fresh_submission(root)
        shutil.copytree(KIT / "labs/lab3", sub / "labs/lab3")
        shutil.copy(KIT / "solutions/lab2/msg.c", sub)
        out = self.dry_run(root=root).splitlines()
        self.assertEqual(["graded: labs/lab2/msg.c"], [ln for ln in out if ln.startswith("graded: ")])
        self.assertIn("grading lab(s) 2", out)

    def test_an_empty_submission_is_refused(self) -> None:
        fresh_submission(self.root)
        out = self.dry_run(status=None)
        self.assertIn("no lab files found", out)


class Bundle(KitCase):
    top: Path
    root: Path
    files: list[str]
    zip_names: list[str]
    env: dict[str, str]

    @classmethod
    def setUpClass(cls) -> None:
        if os.getuid() != 0:
            raise unittest.SkipTest("setup.sh runs as root, as on Gradescope (it installs packages and "
                                    "debootstraps the guest's root)")
        # /autograder is open to all on Gradescope; the grader's
        # unprivileged uids read the kit there.
        cls.top = cls.class_tmp("rdmalab-gradescope-test.")
        cls.top.chmod(0o755)
        cls.root, cls.zip_names, _ = unpacked_bundle(cls.top)
        cache = os.environ.get("RDMALAB_CACHE") or str(Path(os.environ.get("XDG_CACHE_HOME") or
                                                            Path.home() / ".cache") / "rdmalab")
        cls.env = {"AUTOGRADER_ROOT": str(cls.root), "RDMALAB_CACHE": cache}
        print(f"setup.sh (builds the kit; RDMALAB_CACHE={cache})")
        run(["bash", "./setup.sh"], cwd=cls.root / "source", env=cls.env, timeout=3600)
        shutil.copy(cls.root / "source/run_autograder", cls.root / "run_autograder")
        cls.files = lab_files(cls.root / f"source/rdmalab/labs/lab{LAB}")

    def submit(self, layout: str) -> None:
        submit_lab0(self.root, layout, self.files, self.tmp())

    def test_the_bundle_has_setup_and_run_autograder_at_its_top_and_no_solutions(self) -> None:
        self.assertIn("setup.sh", self.zip_names)
        self.assertIn("run_autograder", self.zip_names)
        self.assertEqual([], [n for n in self.zip_names if "solutions/" in n])
        self.assertTrue(self.files, f"labs/lab{LAB}/FILES lists no files")

    def test_lab0s_solution_as_loose_files_scores_its_rubric_in_one_vm_boot(self) -> None:
        # Within Gradescope's limits when this machine can make a cgroup
        # (its line says what the run used).
        self.submit("loose")
        # Gradescope's metadata: when the student submitted, in their zone.
        (self.root / "submission_metadata.json").write_text('{"created_at": "2026-12-04T13:13:00.365935-08:00"}')
        limits = ["tests/grader/gradescope-limits", "--"]
        probe = run([*limits, "true"], status=None)
        if probe.returncode != 0:
            print(f"graded without Gradescope's limits: {probe.stdout.strip()}")
            limits = []
        done = self.run_cmd([*limits, self.root / "run_autograder"], env=self.env, status=None, timeout=1800)
        print("\n".join(ln for ln in done.stdout.splitlines() if ln.startswith("gradescope-limits: ")))
        # The guest ran on the root setup.sh made, not on this machine's /.
        groot = run(["vm/guest-root", "--cached"], cwd=self.root / "source/rdmalab", merge=False).stdout.strip()
        self.assertIn(f"run_autograder: the guest's root: {groot}", done.stdout.splitlines())
        results = self.root / "results/results.json"
        self.assertTrue(results.exists() and results.stat().st_size, f"no results.json: {done.stdout[-600:]}")
        r = json.loads(results.read_text())
        self.assertEqual(0, done.returncode, done.stdout[-600:])
        self.assertTrue(r.get("tests"), "results.json has no tests")
        keys = {"name", "score", "max_score", "status", "output", "visibility"}
        self.assertEqual([], [t.get("name") for t in r["tests"] if not keys <= set(t)],
                         "tests of results.json lacking one of name, score, max_score, status, output, visibility")
        self.assertEqual(full_points(LAB), r["score"], f"Lab {LAB}'s solution did not score its rubric")
        # The student sees which files were graded and which ignored, first.
        self.assertTrue(r.get("output", "").startswith("graded: "), r.get("output", "")[:300])
        self.assertIn("ignored notes.c: ", r["output"])
        # ... and the time Gradescope says it was submitted, in UTC.
        self.assertEqual({str(LAB): "2026-12-04T21:13:00Z"}, r["extra_data"].get("submitted"))
        print(f"ok: bundle, setup.sh, Lab {LAB} solution as loose files scored "
              f"{r['score']}/{full_points(LAB)}")
