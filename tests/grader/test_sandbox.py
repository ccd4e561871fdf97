"""The grader never grades with less than its whole sandbox unless told to.

The students' code builds and runs where RDMA does: in a guest, whose root
makes a uid of each submission's own and mount and PID namespaces, whoever
runs the grader; natively, on this machine, which must make them. Where they
cannot be had, the grader stops with one line that names what is missing
and --unsafe: natively before it writes anything; in a guest, each
submission's report says it and it scores nothing. With --unsafe it grades,
and every view of the result (report.txt, results.json, junit.xml,
class.csv, summary.txt) says what was missing. Missing namespaces are made
as a container without CAP_SYS_ADMIN makes them: an unshare that fails,
first on the PATH (the grader's, and the guest's, which takes the host's
environment). Each way of grading is a case; root only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import unittest
from dataclasses import dataclass
from pathlib import Path

from tests.kitbase import KIT, KitCase, run

FAILING_UNSHARE = '#!/bin/sh\necho "unshare: unshare failed: Operation not permitted" >&2\nexit 1\n'
NO_NAMESPACES = "mount and PID namespaces (unshare: unshare failed: Operation not permitted)"


def setUpModule() -> None:
    if os.getuid() != 0:
        raise unittest.SkipTest("needs root (to run the grader as root and as another user)")


@dataclass
class Graded:
    status: int
    stdout: str
    stderr: str
    results: Path


class Sandbox(KitCase):
    top: Path
    where: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.top = cls.class_tmp("rdmalab-test-sandbox.")
        # The grader's unprivileged users read the submission here.
        cls.top.chmod(0o755)
        (cls.top / "sub/labs").mkdir(parents=True)
        shutil.copytree(KIT / "solutions/lab0", cls.top / "sub/labs/lab0")
        (cls.top / "shim").mkdir()
        (cls.top / "shim/unshare").write_text(FAILING_UNSHARE)
        (cls.top / "shim/unshare").chmod(0o755)
        (cls.top / "home").mkdir()
        os.chown(cls.top / "home", 65534, 65534)
        cls.where = run(["vm/run-rdma", "--mode", os.environ.get("RDMALAB_MODE", "auto"), "--print-mode"],
                        merge=False).stdout.strip().splitlines()[-1]

    @classmethod
    def shim(cls) -> list[str]:
        """An unshare that fails as Docker's default profile makes it fail."""
        return ["env", f"PATH={cls.top}/shim:{os.environ['PATH']}"]

    @classmethod
    def nobody(cls) -> list[str]:
        """Nobody, with its own home and cache, not the caller's (a CI that
        sets XDG_CACHE_HOME)."""
        return ["env", "-u", "XDG_CACHE_HOME", "-u", "RDMALAB_CACHE", f"HOME={cls.top}/home",
                "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]

    def grade(self, name: str, *grader: str | Path) -> Graded:
        """GRADER (a command) grades the submission as alice, Lab 0, into a
        folder open to all."""
        d = self.top / name
        d.mkdir(mode=0o777)
        d.chmod(0o777)
        done = subprocess.run([*grader, "--lab", "0", "--name", "alice", "-o", d / "results", self.top / "sub"],
                              cwd=KIT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
        return Graded(done.returncode, done.stdout, done.stderr, d / "results")

    def refused_here(self, g: Graded, what: str) -> None:
        """Exit 2, one line on stderr that names WHAT is missing and
        --unsafe, nothing on stdout, no results written."""
        self.assertEqual(2, g.status, g.stderr[:300])
        self.assertEqual((1, ""), (len(g.stderr.splitlines()), g.stdout), f"{g.stdout}{g.stderr}")
        self.assertRegex(g.stderr, rf"^rdmalab-grade: cannot isolate the students' code on this machine: it lacks {what}.*--unsafe")
        self.assertFalse(g.results.exists(), "a refused grade left its results folder behind")
        print(f"refused: {g.stderr[:150]}...")

    def in_a_guest(self) -> None:
        if self.where == "native":
            self.skipTest("RDMA runs natively here: the guest's part needs a guest")

    def test_natively_not_root_is_refused_in_one_line(self) -> None:
        g = self.grade("native-not-root", *self.nobody(), KIT / "grader/rdmalab-grade", "--mode", "native")
        self.refused_here(g, "root \\(it runs as uid 65534\\), so the students. code would run as you")

    def test_natively_root_without_namespaces_is_refused_in_one_line(self) -> None:
        g = self.grade("native-no-namespaces", *self.shim(), KIT / "grader/rdmalab-grade", "--mode", "native")
        self.refused_here(g, re.escape(NO_NAMESPACES) + ", so .*CAP_SYS_ADMIN")

    def test_in_the_guest_without_namespaces_the_report_says_ungradable(self) -> None:
        self.in_a_guest()
        g = self.grade("guest-no-namespaces", *self.shim(), KIT / "grader/rdmalab-grade", "--mode", self.where)
        sub = g.results / "alice"
        self.assertTrue((sub / "submission.json").exists(), f"no result (exit {g.status}): {g.stderr[-400:]}")
        why = json.loads((sub / "submission.json").read_text()).get("ungradable") or ""
        self.assertEqual(1, g.status, g.stderr[-400:])
        self.assertRegex(why, rf"^cannot isolate the students' code in the RDMA environment \({self.where}\): it lacks "
                              rf"{re.escape(NO_NAMESPACES)}.*--unsafe")
        self.assertRegex((sub / "report.txt").read_text().splitlines()[0], r"^alice: UNGRADABLE: cannot isolate")

    def test_unsafe_grades_and_every_view_says_what_was_missing(self) -> None:
        self.in_a_guest()
        g = self.grade("unsafe", *self.shim(), KIT / "grader/rdmalab-grade", "--mode", self.where, "--unsafe")
        sub = g.results / "alice"
        self.assertTrue((sub / "submission.json").exists(), f"no result (exit {g.status}): {g.stderr[-400:]}")
        submission = json.loads((sub / "submission.json").read_text())
        self.assertEqual((0, None), (g.status, submission.get("ungradable")))
        lacked = f"where its code ran ({self.where}): {NO_NAMESPACES}"
        self.assertEqual(lacked, submission.get("unsafe"))
        note = f"UNSAFE: graded without the grader's whole sandbox (--unsafe): it lacked {lacked}"
        self.assertIn(note, (sub / "report.txt").read_text().splitlines())
        self.assertIn(note, json.loads((sub / "results.json").read_text())["output"].splitlines())
        self.assertIn('name="alice.sandbox"', (sub / "junit.xml").read_text())
        self.assertRegex((g.results / "class.csv").read_text(), r'(?m)^"alice",.*,"unsafe",')
        self.assertRegex((g.results / "summary.txt").read_text(), r"(?m)^unsafe: alice: ")
        self.assertRegex(g.stdout, r"(?m)^rdmalab-grade: --unsafe: building and testing without mount and PID namespaces")

    def test_not_root_here_the_guests_root_makes_the_whole_sandbox(self) -> None:
        # The grader builds its kit's parts in its own copy, and boots the
        # kernel built here (root's cache is not the user's).
        self.in_a_guest()
        copy, uml = self.top / "kit", self.top / "uml"
        copy.mkdir()
        for f in ("Makefile", "mk", "framework", "tests", "receiver", "grader", "scripts", "vm", "labs", "build"):
            run(["cp", "-a", KIT / f, copy / f])
        run(["rm", "-rf", copy / "build/solutions", copy / "build/tests/unit", copy / "build/tests/rdma"])
        uml.mkdir()
        shutil.copy(run(["vm/uml-kernel", "--cached"], merge=False).stdout.strip(), uml / "linux")
        run(["chown", "-R", "65534:65534", copy, uml])
        g = self.grade("not-root", *self.nobody(), "env", f"RDMALAB_UML_KERNEL={uml}/linux", copy / "grader/rdmalab-grade",
                       "--mode", self.where)
        sub = g.results / "alice"
        self.assertTrue((sub / "submission.json").exists(), f"no result (exit {g.status}): {g.stderr[-400:]}{g.stdout[-400:]}")
        submission = json.loads((sub / "submission.json").read_text())
        self.assertEqual((0, None, None), (g.status, submission.get("ungradable"), submission.get("unsafe")),
                         f"the grader's output ended: {g.stderr[-600:]}{g.stdout[-600:]}")
        results = json.loads((sub / "results.json").read_text())
        self.assertEqual(results["extra_data"]["max_score"], results["score"], "Lab 0's solution did not score in full")
        print(f"not root here: graded in the guest's whole sandbox, {results['score']}/{results['extra_data']['max_score']}")
