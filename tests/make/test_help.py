"""Every script a user may run answers -h and --help with its usage and
does nothing else, and refuses an unknown option in a short message with
exit status 2 (but for ANY_STATUS, with why).

The scripts are found in the tree, not listed: each executable script of
scripts/, vm/, grader/, docker/ and tests/, less EXCLUDED, each with why. Each runs with its own folder's kit and no guest:
seconds in all.
"""

from __future__ import annotations

import os
import subprocess
import unittest

from tests.kitbase import KIT, KitCase

FOLDERS = ("scripts", "vm", "grader", "docker", "tests")
# Run by the kit itself, never by a user: no help asked of them.
EXCLUDED = {
    "vm/uml-init": "the User-Mode Linux guest's init, run only inside the guest",
    "vm/guest-stage2": "the QEMU guest's second stage, run only inside the guest",
    "vm/initramfs-init": "the QEMU guest's initramfs init, run only inside the guest",
}
# Run by a platform, which reads what they write, not their status.
ANY_STATUS = {
    "grader/prairielearn/entrypoint": "PrairieLearn runs it: a wrong argument is the question's, told to the "
                                      "student in results.json, with exit 0 as PrairieLearn wants",
}
UNKNOWN = "--no-such-option"


def runnable() -> list[str]:
    """The executable scripts (a "#!" line) below FOLDERS, but for EXCLUDED
    (a handout has no git: the tree, not git's index, is read)."""
    found = []
    for top in FOLDERS:
        for d, subs, names in os.walk(KIT / top):
            subs[:] = [s for s in subs if not s.startswith((".", "__pycache__"))]
            for n in names:
                path = os.path.join(d, n)
                if os.path.isfile(path) and not os.path.islink(path) and os.access(path, os.X_OK) and is_script(path):
                    found.append(os.path.relpath(path, KIT))
    return sorted(f for f in found if f not in EXCLUDED)


def is_script(path: str) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == b"#!"


class Help(KitCase):
    def answer(self, script: str, arg: str) -> subprocess.CompletedProcess[str]:
        # No terminal, no stdin, a minute at most: a script that starts real
        # work instead of answering shows as a timeout or as its work's output.
        return subprocess.run([str(KIT / script), arg], cwd=KIT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=60)

    def test_the_scripts_are_found(self) -> None:
        scripts = runnable()
        for f in ("scripts/handout", "grader/gradescope/run_autograder", "vm/uml-run"):  # a handout has them too
            self.assertIn(f, scripts)
        self.assertEqual([], [f for f in EXCLUDED if not (KIT / f).exists()], "an exclusion names no file")

    def test_help_prints_the_usage_and_exits_0(self) -> None:
        for script in runnable():
            for arg in ("-h", "--help"):
                with self.subTest(script=script, arg=arg):
                    done = self.answer(script, arg)
                    self.assertEqual(0, done.returncode, f"{script} {arg}: exit {done.returncode}: "
                                                         f"{(done.stderr or done.stdout)[-300:]}")
                    self.assertTrue(done.stdout.strip(), f"{script} {arg} printed no usage on standard output")

    def test_an_unknown_option_is_refused_in_a_short_message_with_exit_2(self) -> None:
        # A line, or argparse's usage and error (its usage may wrap: 3 lines).
        for script in runnable():
            with self.subTest(script=script):
                done = self.answer(script, UNKNOWN)
                if script not in ANY_STATUS:
                    self.assertEqual(2, done.returncode, f"{script} {UNKNOWN}: exit {done.returncode}: "
                                                         f"{(done.stderr or done.stdout)[-300:]}")
                said = done.stderr.strip().splitlines()
                self.assertTrue(1 <= len(said) <= 3, f"{script} {UNKNOWN} said {len(said)} lines: {said[:4]}")


if __name__ == "__main__":
    unittest.main()
