"""Each lab's handout lists common errors in a table keyed on the line a
student sees. Here one listed mistake per lab is planted into a copy of
that lab's solution, make check runs the step that catches it, and the
failing row of the table, not only the logs, must show the line the
handout's table keys on. One copy of the kit for every lab; a case a lab.
"""

from __future__ import annotations

import re
import unittest
from dataclasses import dataclass
from pathlib import Path

from tests.kitbase import KitCase, run


@dataclass(frozen=True)
class Plant:
    """A listed mistake: in FILE of the lab's solution, FROM replaced by TO;
    the step that catches it; KEY, the handout's row (verbatim in
    docs/labN.md); PATTERN, what the table's failing row must show."""

    lab: int
    step: int
    file: str
    old: str
    new: str
    key: str
    pattern: str


PLANTS = [
    Plant(0, 2, "devices.c", "be64toh(ibv_get_device_guid(dev))", "ibv_get_device_guid(dev)",
          "(sysfs node_guid) in the line, got",
          r'expected the GUID [0-9a-f]{4}(:[0-9a-f]{4}){3} \(sysfs node_guid\) in the line, got ".* guid '
          r"[0-9a-f]{4}(:[0-9a-f]{4}){3} "),
    Plant(1, 6, "qp_states.c", "IBV_QP_AV |", "0 |", "`ibv_modify_qp RTR ...: Invalid argument`",
          r"ibv_modify_qp RTR .*: Invalid argument"),
    Plant(2, 4, "rdma.c", "IBV_ACCESS_REMOTE_READ;", "0;", 'got "remote access error"`',
          r"RDMA READ.*remote access error"),
    Plant(3, 4, "transfer.c", ".wr.rdma.rkey = w->rkey,", ".wr.rdma.rkey = f->mr->lkey,",
          "`RDMA WRITE (wr_id 2): remote access error`", r"RDMA WRITE \(wr_id 2\): remote access error"),
    Plant(4, 2, "xverbs.c", "be32toh(ibv_wc_read_imm_data(r->cq));", "ibv_wc_read_imm_data(r->cq);",
          "`chunk 1 of ... arrived, expected chunk 0`",
          r"chunk [0-9]+ of [0-9]+ bytes arrived, expected chunk [0-9]+ of"),
]

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
        self.assertIn(p.key, doc, f"docs/lab{p.lab}.md's common errors no longer list {p.key}: update this plant")
        lab = self.copy / f"labs/lab{p.lab}"
        run(["cp", "-a", f"{self.kit}/solutions/lab{p.lab}/.", lab])
        source = (lab / p.file).read_text()
        self.assertIn(p.old, source, f"solutions/lab{p.lab}/{p.file} no longer has '{p.old}': update this plant")
        (lab / p.file).write_text(source.replace(p.old, p.new, 1))
        done = run(["make", "-C", self.copy, "--no-print-directory", "check", f"LAB={p.lab}", f"STEP={p.step}"],
                   status=None, timeout=900)
        run(["cp", "-a", f"{self.kit}/solutions/lab{p.lab}/.", lab])
        self.assertNotEqual(0, done.returncode, "make check passed with the planted mistake")
        rows = table_rows(done.stdout)
        m = re.search(p.pattern, rows)
        self.assertIsNotNone(m, f"expected the table to show /{p.pattern}/ (the handout's {p.key}), got:\n{rows[:3000]}")
        line = next(ln for ln in rows.splitlines() if re.search(p.pattern, ln))
        print(f"lab {p.lab} step {p.step}, planted in {p.file}: the row shows: {line.strip()}")


def _cases() -> None:
    """A case a lab, named for the file the mistake is planted in."""
    for p in PLANTS:
        name = f"test_lab{p.lab}_step{p.step}_{p.file.replace('.', '_')}_mistake_shows_in_its_row"
        setattr(CommonErrors, name, lambda self, p=p: self.planted_row_shows(p))


if not (KitCase.kit / "solutions").is_dir():
    raise unittest.SkipTest("no solutions/ in a student handout: nothing to plant into")
_cases()
