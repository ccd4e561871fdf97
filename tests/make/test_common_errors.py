"""Each lab's handout explains each step's decision and lists common errors
in a table keyed on the line a student sees. Every plausible wrong choice a
lab lists in tests/make/wrong-choices/labN.json is planted into a copy of that
lab's solution, make check runs the step that catches it, and the failing
row of the table, not only the logs, must show the line the handout keys
on. One copy of the kit for every lab; a case a wrong choice.

tests/make/wrong-choices/labN.json (not in a handout: it quotes the
solution, scripts/handout drops it): a list of {"name": a slug, "step": K,
"file": F, "old": TEXT, "new": TEXT, "key": the handout's words, verbatim
in docs/labN.md, "pattern": a regular expression the failing row must
match, and "slow": true for one that waits out a lab's own timeout (8 s
or more of make check): make test runs those with TEST_HEAVY=1 only, and
counts them skipped otherwise}: in F of the lab's solution, OLD replaced
by NEW (once).
"""

from __future__ import annotations

import json
import os
import re
import unittest
from dataclasses import dataclass
from pathlib import Path

from tests.kitbase import KIT, KitCase, run


@dataclass(frozen=True)
class Plant:
    """A wrong choice: in FILE of lab LAB's solution, OLD replaced by NEW;
    the step that catches it; KEY, the handout's words (verbatim in
    docs/labN.md); PATTERN, what the table's failing row must show."""

    lab: int
    name: str
    step: int
    file: str
    old: str
    new: str
    key: str
    pattern: str
    slow: bool = False


def plants() -> list[Plant]:
    """Every lab's wrong choices (tests/make/wrong-choices/labN.json), by lab."""
    found = []
    for path in sorted(KIT.glob("tests/make/wrong-choices/lab*.json"), key=lambda p: int(p.stem[3:])):
        lab = int(path.stem[3:])
        for v in json.loads(path.read_text()):
            found.append(Plant(lab, v["name"], v["step"], v["file"], v["old"], v["new"], v["key"], v["pattern"],
                               v.get("slow", False)))
    return found


# What the copy takes of the kit: its files, and its built framework and
# receiver, so that only the planted lab compiles.
KIT_FILES = ["Makefile", "mk", "framework", "tests", "receiver", "grader", "scripts", "vm", "labs", "solutions", "docs"]
KIT_BUILT = ["framework", "receiver", "lib", "bin", "tests", "rubric"]


def table_rows(out: str) -> str:
    """make check's table (from its "Lab N from" line on), without what the
    programs printed before it."""
    m = re.search(r"(?m)^Lab [0-9]+ from ", out)
    return out[m.start():] if m else ""


class CommonErrors(KitCase):
    top: Path
    copy: Path

    @classmethod
    def setUpClass(cls) -> None:
        # make check needs RDMA, which make test promises: no device and no
        # guest fails it.
        run(["vm/run-rdma", "--mode", "auto", "--", "true"])
        cls.top = cls.class_tmp("rdmalab-test-common-errors.")
        cls.copy = cls.top / "kit"
        (cls.copy / "build").mkdir(parents=True)
        for f in KIT_FILES:
            run(["cp", "-a", cls.kit / f, cls.copy / f])
        for f in KIT_BUILT:
            if (cls.kit / "build" / f).is_dir():
                run(["cp", "-a", cls.kit / "build" / f, cls.copy / "build/"])


    def planted_row_shows(self, p: Plant) -> None:
        doc = (self.kit / f"docs/lab{p.lab}.md").read_text()
        self.assertIn(p.key, doc, f"docs/lab{p.lab}.md no longer says {p.key}: update tests/make/wrong-choices/lab{p.lab}.json")
        lab = self.copy / f"labs/lab{p.lab}"
        # Copied with fresh times (not -a): a file restored with the
        # solution's older time would leave the last case's planted object
        # in place, and make would not rebuild it.
        run(["cp", "-r", f"{self.kit}/solutions/lab{p.lab}/.", lab])
        source = (lab / p.file).read_text()
        self.assertIn(p.old, source, f"solutions/lab{p.lab}/{p.file} no longer has '{p.old}': "
                      f"update tests/make/wrong-choices/lab{p.lab}.json")
        (lab / p.file).write_text(source.replace(p.old, p.new, 1))
        done = run(["make", "-C", self.copy, "--no-print-directory", "check", f"LAB={p.lab}", f"STEP={p.step}"],
                   status=None, timeout=900)
        run(["cp", "-r", f"{self.kit}/solutions/lab{p.lab}/.", lab])
        self.assertNotEqual(0, done.returncode, "make check passed with the planted mistake")
        rows = table_rows(done.stdout)
        m = re.search(p.pattern, rows)
        self.assertIsNotNone(m, f"expected the table to show /{p.pattern}/ (the handout's {p.key}), got:\n{rows[:3000]}")
        line = next(ln for ln in rows.splitlines() if re.search(p.pattern, ln))
        print(f"lab {p.lab} step {p.step}, {p.name} planted in {p.file}: the row shows: {line.strip()}")


def _cases() -> None:
    """A case a wrong choice, named for its lab, step and name."""
    heavy = os.environ.get("TEST_HEAVY") == "1"
    for p in plants():
        name = f"test_lab{p.lab}_step{p.step}_{p.name}_shows_in_its_row"
        case = lambda self, p=p: self.planted_row_shows(p)  # noqa: E731
        if p.slow and not heavy:
            case = unittest.skip("waits out the lab's own timeout: TEST_HEAVY=1 runs it")(case)
        setattr(CommonErrors, name, case)


if not (KitCase.kit / "solutions").is_dir():
    raise unittest.SkipTest("no solutions/ in a student handout: nothing to plant into")
_cases()
