"""The sample submissions get exactly their expected scores.

The samples: "solutions" (the kit's solutions/) and "stubs" (the untouched
labs/), graded on every lab, each earning the lab's whole rubric and 0; and
the deliberately broken labs, each samples/NAME.patch applied to a copy of
the lab of solutions/ it names (mostly Lab 3's sender), graded on that lab
only, plus "empty" (a tarball with nothing to grade), graded on Lab 3; their
scores are in tests/grader/expected, with the score without the rules
(--no-rules: what the sandbox alone stops) where it has a fourth column.
The classes are graded once (setUpModule); each sample's score is a case,
and so are what writes-outside left and an infrastructure failure's result.

Settings come from the environment, as tests/run.py and tests/grader/run-samples
set them: RDMALAB_MODE (where RDMA runs), RDMALAB_SAMPLES_JOBS (at once,
default 2: one User-Mode Linux guest per core; four on our 2-core machines,
beside make test's Docker guest, read the calibration at 4.7 to 6.2 times),
RDMALAB_SAMPLES_OUT (default build/grader-samples, which later tests read)
and RDMALAB_SAMPLES_QUICK=1 (Lab 3 only: the solutions, the stubs, three
broken samples and the empty one; the Docker test's grading flow).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tarfile
import unittest
from dataclasses import dataclass
from pathlib import Path

from tests.kitbase import KIT, full_points, labs, run

HERE = KIT / "tests/grader"
QUICK_SAMPLES = ("does-not-compile", "lkey-for-rkey", "wrong-hash")


@dataclass(frozen=True)
class Expected:
    """A sample's expected score on a lab, with and without the rules."""

    sample: str
    lab: int
    points: int
    without_rules: int | None = None


def expected_scores() -> list[Expected]:
    """The solutions' and the stubs' on every lab (from the rubric), then
    tests/grader/expected's lines."""
    scores = [e for lab in labs() for e in (Expected("solutions", lab, full_points(lab)), Expected("stubs", lab, 0))]
    for line in (HERE / "expected").read_text().splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        scores.append(Expected(words[0], int(words[1]), int(words[2]), int(words[3]) if len(words) > 3 else None))
    return scores


def settings() -> tuple[str, int, Path, bool]:
    env = os.environ
    return (env.get("RDMALAB_MODE", "auto"), int(env.get("RDMALAB_SAMPLES_JOBS", "2")),
            Path(env.get("RDMALAB_SAMPLES_OUT", str(KIT / "build/grader-samples"))),
            env.get("RDMALAB_SAMPLES_QUICK") == "1")


def patch_lab(patch: Path) -> int:
    """The lab a sample's patch changes (its first "+++ b/labN/")."""
    m = re.search(r"(?m)^\+\+\+ b/lab(\d+)/", patch.read_text())
    if not m:
        raise AssertionError(f"{patch} changes no labN/: fix the sample")
    return int(m.group(1))


def lay_out(out: Path, quick: bool) -> list[int]:
    """The class folders: all-labs/ (solutions, stubs) and labN/ (the broken
    samples of lab N, and the empty tarball in lab3/). Returns the labs of
    the broken samples."""
    shutil.rmtree(out, ignore_errors=True)
    (out / "all-labs/stubs").mkdir(parents=True)
    shutil.copytree(KIT / "solutions", out / "all-labs/solutions", symlinks=True)
    shutil.copytree(KIT / "labs", out / "all-labs/stubs/labs", symlinks=True)
    for patch in sorted((HERE / "samples").glob("*.patch")):
        if quick and patch.stem not in QUICK_SAMPLES:
            continue
        lab = patch_lab(patch)
        dest = out / f"lab{lab}/{patch.stem}"
        shutil.copytree(KIT / f"solutions/lab{lab}", dest / f"lab{lab}", symlinks=True)
        applied = run(["patch", "-s", "-p1", "-d", dest], stdin=patch.read_text(), status=None)
        if applied.returncode != 0:
            raise AssertionError(f"{patch} no longer applies to solutions/lab{lab}: update it\n{applied.stdout}")
    (out / "empty").mkdir()
    (out / "empty/README").write_text("I forgot to add my files.\n")
    (out / "lab3").mkdir(exist_ok=True)
    with tarfile.open(out / "lab3/empty.tar.gz", "w:gz") as tar:
        tar.add(out / "empty/README", arcname="README")
    return sorted(int(p.name[3:]) for p in out.glob("lab[0-9]*"))


def grade(mode: str, jobs: int, results: Path, *args: str | Path) -> None:
    """rdmalab-grade on a class; its output is shown as it comes (a batch
    takes minutes)."""
    subprocess.run([KIT / "grader/rdmalab-grade", "--mode", mode, "-j", str(jobs), "-o", results, *args], cwd=KIT)


def setUpModule() -> None:
    mode, jobs, out, quick = settings()
    sample_labs = lay_out(out, quick)
    grade(mode, jobs, out / "results-all-labs", *(["--lab", "3"] if quick else []), "--class", out / "all-labs")
    for lab in sample_labs:
        grade(mode, jobs, out / f"results-lab{lab}", "--lab", str(lab), "--class", out / f"lab{lab}")
    if quick:
        return
    # The samples with a score without the rules, graded again with --no-rules.
    for e in expected_scores():
        if e.without_rules is not None and (out / f"lab{e.lab}/{e.sample}").is_dir():
            shutil.copytree(out / f"lab{e.lab}/{e.sample}", out / f"sandbox-lab{e.lab}/{e.sample}", symlinks=True)
    for lab in sample_labs:
        if (out / f"sandbox-lab{lab}").is_dir():
            grade(mode, jobs, out / f"results-lab{lab}-sandbox", "--lab", str(lab), "--no-rules",
                  "--class", out / f"sandbox-lab{lab}")


class SampleScores(unittest.TestCase):
    """Each sample's score on each lab: a case each (added below)."""

    maxDiff = None

    def score(self, e: Expected, results: Path, want: int) -> None:
        sub = results / e.sample
        self.assertTrue((sub / "results.jsonl").exists(), f"{e.sample}: no results (see {results}/grade.log)")
        submission = json.loads((sub / "submission.json").read_text())
        if submission.get("ungradable") is not None:
            report = (sub / "report.txt").read_text().splitlines()
            self.fail(f"{e.sample} lab {e.lab}: expected {want} points, got UNGRADABLE: {report[0] if report else ''}")
        got = sum(json.loads(ln)["points"] for ln in (sub / "results.jsonl").read_text().splitlines()
                  if ln and json.loads(ln)["lab"] == e.lab)
        self.assertEqual(want, got, f"{e.sample} lab {e.lab}: expected {want} points, got {got} (see {sub}/report.txt)")

    def with_rules(self, e: Expected) -> None:
        _, _, out, _ = settings()
        results = out / ("results-all-labs" if e.sample in ("solutions", "stubs") else f"results-lab{e.lab}")
        self.score(e, results, e.points)

    def without_rules(self, e: Expected) -> None:
        _, _, out, _ = settings()
        assert e.without_rules is not None
        self.score(e, out / f"results-lab{e.lab}-sandbox", e.without_rules)


def _score_cases() -> None:
    _, _, _, quick = settings()
    for e in expected_scores():
        if quick and (e.lab != 3 or e.sample not in ("solutions", "stubs", "empty", *QUICK_SAMPLES)):
            continue
        name = f"{e.sample.replace('-', '_')}_lab{e.lab}"
        setattr(SampleScores, f"test_{name}_earns_{e.points}", lambda self, e=e: self.with_rules(e))
        if e.without_rules is not None and not quick:
            setattr(SampleScores, f"test_{name}_earns_{e.without_rules}_without_the_rules",
                    lambda self, e=e: self.without_rules(e))


_score_cases()


class WhatTheGradingLeft(unittest.TestCase):
    def test_writes_outside_left_nothing_outside_its_folder_on_this_machine(self) -> None:
        # It tried to leave a file in every folder its code could see
        # (samples/writes-outside.patch).
        _, _, out, quick = settings()
        if quick or not (out / "lab3/writes-outside").is_dir():
            self.skipTest("writes-outside was not graded (--quick)")
        found = run(["sh", "-c", f'find "{KIT}" /tmp /var/tmp /dev/shm -xdev -maxdepth 4 -name "rdmalab-escaped-*"; '
                     f'find / "${{HOME:-/root}}" /home -xdev -maxdepth 2 -name "rdmalab-escaped-*"'],
                    status=None, merge=False).stdout.split()
        escaped = sorted({f for f in found if "/writes-outside/" not in f})
        self.assertEqual([], escaped[:5], "writes-outside wrote outside its folder")


class AnInfrastructureFailure(unittest.TestCase):
    """RDMA natively, where the grader finds no device (it is shown an empty
    sysfs): an earlier good result stays as it was, a new one is ungradable.
    On a copy of the solutions' results, whatever order the cases run in."""

    def setUp(self) -> None:
        _, _, self.out, quick = settings()
        graded = self.out / "results-all-labs/solutions"
        if quick or not (graded / "results.json").exists():
            self.skipTest("no graded solutions to grade again")
        self.earlier = self.out / "infra-earlier"
        shutil.rmtree(self.earlier, ignore_errors=True)
        shutil.copytree(graded, self.earlier / "solutions", symlinks=True)
        (self.out / "no-rdma").mkdir(exist_ok=True)
        self.env = {**os.environ, "RDMALAB_SYSFS": str(self.out / "no-rdma")}

    def no_rdma(self, *args: str | Path) -> int:
        return subprocess.run([KIT / "grader/rdmalab-grade", "--mode", "native", "--lab", "0", *args], cwd=KIT,
                              env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode

    def test_keeps_the_earlier_result_and_notes_it(self) -> None:
        before = (self.earlier / "solutions/results.json").read_bytes()
        status = self.no_rdma("-o", self.earlier, "--name", "solutions", self.out / "all-labs/solutions")
        self.assertEqual(1, status)
        self.assertEqual(before, (self.earlier / "solutions/results.json").read_bytes(), "the earlier result changed")
        self.assertIn("UNGRADABLE", (self.earlier / "solutions/ungradable.txt").read_text())

    def test_with_no_earlier_result_writes_an_ungradable_one(self) -> None:
        self.no_rdma("-o", self.out / "results-infra", self.out / "all-labs/solutions")
        r = json.loads((self.out / "results-infra/solutions/results.json").read_text())
        self.assertEqual((True, 0), (r["extra_data"]["ungradable"], r["score"]))
