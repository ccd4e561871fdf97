"""test_formats: what the grader writes, read back by parsers that know the
formats: each results.json against Gradescope's specification
(schemas/gradescope-results.json, with jsonschema), each junit.xml against
JUnit's (schemas/junit.xsd, with xmllint), and class.csv (a header of
id, name, labN..., total, max, status, seconds, ..., notes; every line as many fields;
the figures numbers that add up). On class folders the grader wrote: by
default the sample classes of tests/grader/run-samples
(build/grader-samples/results-*), or those named.

  python3 -m unittest -v tests.grader.test_formats
  python3 -m tests.grader.test_formats CLASS_DIR...
"""

from __future__ import annotations

import csv
import re
import sys
import unittest
from pathlib import Path

from tests.grader.test_views import schema_errors, xsd_errors
from tests.kitbase import KIT, KitCase


def class_csv_problem(path: Path) -> str:
    """What is wrong with the class table PATH's shape and sums, or ""."""
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return "empty"
    header = rows[0]
    fixed = ["total", "max", "status", "seconds"]
    if header[:2] != ["id", "name"] or not all(c in header for c in fixed) or header[-1] != "notes":
        return f"header {','.join(header)}"
    at = {c: header.index(c) for c in fixed}
    labs = [i for i, c in enumerate(header) if re.fullmatch(r"lab[0-9]+", c)]
    if not labs or labs[-1] > at["total"]:
        return f"header {','.join(header)}: no labN before total"
    key = header.index("key") if "key" in header else None
    for n, row in enumerate(rows[1:], 2):
        if len(row) != len(header):
            return f"line {n} has {len(row)} fields, the header {len(header)}"
        status, total, most = row[at["status"]], row[at["total"]], row[at["max"]]
        if status == "ungradable":
            continue
        if status not in ("graded", "no submission"):
            return f"line {n}: status {status}"
        # A lab the grader failed has no points (empty).
        scores = [row[i] for i in labs if row[i] != ""]
        if not all(re.fullmatch(r"[0-9]+", s) for s in scores):
            return f"line {n}: {scores} are not scores"
        # An OK key's points (--key-points) are in the total beside the labs'.
        keyed = key is not None and row[key] == "OK" and int(total) > sum(map(int, scores))
        if (sum(map(int, scores)) != int(total) and not keyed) or int(total) > int(most):
            return f"line {n}: the labs add up to {sum(map(int, scores))}, total {total} of {most}"
    return ""


class FormatsOfTheGradersFiles(KitCase):
    """The files of class folders, read back against their formats."""

    folders: list[Path] = []

    def setUp(self) -> None:
        if not self.folders:
            self.folders = sorted(p for p in (KIT / "build" / "grader-samples").glob("results-*") if p.is_dir())
        if not self.folders:
            self.skipTest("no class folder (run tests/grader/run-samples first, or give one)")

    def students(self) -> list[Path]:
        found = [s for top in self.folders for s in sorted(top.iterdir()) if (s / "results.json").is_file()]
        self.assertTrue(found, f"no results.json in {' '.join(map(str, self.folders))}")
        return found

    def test_class_csv_has_its_columns_and_its_sums(self) -> None:
        for top in self.folders:
            with self.subTest(str(top)):
                self.assertTrue((top / "class.csv").is_file(), f"{top}: no class.csv")
                self.assertEqual(class_csv_problem(top / "class.csv"), "")

    def test_results_json_is_gradescopes_format(self) -> None:
        for student in self.students():
            with self.subTest(str(student)):
                self.assertEqual(schema_errors(student / "results.json", "gradescope-results.json"), [])

    def test_junit_xml_is_junits_format(self) -> None:
        for student in self.students():
            with self.subTest(str(student)):
                self.assertEqual(xsd_errors(student / "junit.xml"), "")


def main(argv: list[str]) -> None:
    """Read back the class folders ARGV names (default: the samples')."""
    FormatsOfTheGradersFiles.folders = [Path(a) for a in argv]
    unittest.main(module=__name__, argv=[sys.argv[0], "-v"])


if __name__ == "__main__":
    main(sys.argv[1:])
