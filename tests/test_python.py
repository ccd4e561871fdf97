"""test_python: the kit's Python passes pyflakes (no unused import, no
undefined name) and mypy (every function typed, its body checked), for the
Python of Debian 12 (3.11) and for the oldest the kit keeps to (3.9).

The files are found when the test runs, so that a new one is checked from
its first commit: every file git has or would add (not ignored) whose name
ends in .py or whose first line runs python. The tools are Debian's
(scripts/deps' part check), run as commands: they bring their own Python.

  python3 -m unittest -v tests.test_python
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.kitbase import KIT, KitCase, run

# What the kit's Python must pass beyond mypy's defaults: every function
# typed (arguments and result) and its body checked, no type: ignore left
# that nothing needs, no cast to the type a value has, no == between types
# that can never be equal.
MYPY_OPTIONS = [
    "--disallow-untyped-defs",
    "--disallow-incomplete-defs",
    "--check-untyped-defs",
    "--warn-unused-ignores",
    "--warn-redundant-casts",
    "--strict-equality",
]
# How mypy names the files: tests.kitbase (from the kit's folder, no
# __init__.py needed), rdmalab_grade.model (from grader/, as the tests import
# it), and a script without .py by its file's name (scripts/results: results).
MYPY_LAYOUT = ["--explicit-package-bases", "--scripts-are-modules"]
INSTALL = "scripts/deps install check"


def git_files(kit: Path) -> list[str] | None:
    """The files git has or would add (not ignored) in KIT, relative to it;
    None where KIT is not the top of a git work tree (or there is no git)."""
    if shutil.which("git") is None:
        return None
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=kit, capture_output=True, text=True)
    if top.returncode != 0 or Path(top.stdout.strip()).resolve() != kit.resolve():
        return None
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=kit, capture_output=True, text=True, check=True)  # fmt: skip
    return [name for name in listed.stdout.split("\0") if name]


def walked_files(kit: Path) -> list[str]:
    """Every file in KIT outside hidden folders and build/, relative to it
    (a copy that is not a git work tree: a handout unpacked)."""
    found = []
    for folder, subfolders, files in os.walk(kit):
        subfolders[:] = [d for d in subfolders if not d.startswith((".", "build", "__pycache__"))]
        found += [str(Path(folder, f).relative_to(kit)) for f in files]
    return found


def runs_python(path: Path) -> bool:
    """PATH's name ends in .py, or its first line runs python."""
    if path.suffix == ".py":
        return True
    try:
        with path.open("rb") as f:
            first = f.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


def python_files(kit: Path = KIT) -> list[str]:
    """The kit's Python files, relative to KIT, sorted."""
    names = git_files(kit)
    if names is None:
        names = walked_files(kit)
    return sorted(name for name in names if (kit / name).is_file() and runs_python(kit / name))


class KitPython(KitCase):
    """pyflakes and mypy on every Python file of the kit."""

    files: list[str]

    @classmethod
    def setUpClass(cls) -> None:
        cls.files = python_files()

    def tool(self, name: str) -> str:
        """The command NAME, or fail saying how to install it."""
        path = shutil.which(name)
        if path is None:
            self.fail(f"no {name} on PATH: run {INSTALL} (make test installs it)")
        return path

    def mypy(self, version: str) -> None:
        """mypy, for Python VERSION, finds nothing in the kit's Python."""
        words = [self.tool("mypy"), "--python-version", version, *MYPY_LAYOUT, *MYPY_OPTIONS,
                 "--cache-dir", os.devnull, "--no-error-summary", *self.files]  # fmt: skip
        done = run(words, env={"MYPYPATH": str(self.kit / "grader")}, status=None, timeout=300)
        if done.returncode != 0:
            self.fail(f"mypy --python-version {version} found in the kit's Python:\n{done.stdout}")

    def test_the_kits_python_is_found_scripts_too(self) -> None:
        for name in ("tests/kitbase.py", "tests/run.py", "scripts/results"):
            self.assertIn(name, self.files, f"{name} is not among the kit's Python files found: {self.files}")

    def test_pyflakes_finds_nothing(self) -> None:
        done = run([self.tool("pyflakes3"), *self.files], status=None, timeout=300)
        if done.returncode != 0 or done.stdout.strip():
            self.fail(f"pyflakes3 found in the kit's Python:\n{done.stdout}")

    def test_mypy_finds_nothing_for_python_3_11(self) -> None:
        self.mypy("3.11")

    def test_mypy_finds_nothing_for_python_3_9(self) -> None:
        self.mypy("3.9")
