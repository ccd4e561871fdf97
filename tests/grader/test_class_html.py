"""test_class_html: the grader's class page (scripts/results class), drawn
by headless Chromium, shows the figures of class.csv and summary.txt: every
student's scores, the distribution of the totals, and per lab and step how
many graded students passed it (counted here again from their
results.jsonl). The page stands alone: no script, nothing fetched.

MadeUpClass checks a class laid out here (four students, one ungradable, a
step where the class is stuck); SampleClasses each class folder named by
RDMALAB_CLASS_DIRS (separated by ":"), by default those of the sample
classes that exist (tests/grader/run-samples: build/grader-samples/
results-lab3 and results-all-labs). A screenshot of each page is left in
build/grader/class-NAME.png.

  python3 -m unittest -v tests.grader.test_class_html
  RDMALAB_CLASS_DIRS=DIR:DIR python3 -m unittest -v tests.grader.test_class_html
"""

from __future__ import annotations

import csv
import difflib
import json
import os
import re
import shutil
import unittest
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from tests.kitbase import KIT, CommandFailed, KitCase, run, tail

SHOTS = KIT / "build" / "grader"
SAMPLE_CLASSES = [KIT / "build" / "grader-samples" / name for name in ("results-lab3", "results-all-labs")]
NO_CHROMIUM = "no chromium: run make deps (or apt-get install chromium)"
HEADLESS = ["--headless", "--no-sandbox", "--disable-gpu"]
# What a page that stands alone never has: a script, a source to load, an
# address to fetch, an imported style.
LOADS = re.compile(r"<script|src=|https?://|@import", re.IGNORECASE)
# A line of summary.txt's distribution: " 60- 69%    8  ########".
DISTRIBUTION_LINE = re.compile(r" *([0-9]+)- *[0-9]+% +([0-9]+)")


@dataclass(frozen=True)
class Page:
    """A class folder's class.html, as Chromium drew it: its DOM, or None
    and why not."""

    name: str
    folder: Path
    dom: str | None
    why_not: str = ""


def chromium() -> str | None:
    """The headless browser's command, if there is one."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def draw(name: str, folder: Path) -> Page:
    """FOLDER's class.html, drawn by Chromium (its DOM once its layout is
    done), as the page NAME."""
    html = folder / "class.html"
    if not html.is_file() or html.stat().st_size == 0:
        return Page(name, folder, None, f"no class.html in {folder}")
    browser = chromium()
    if browser is None:
        return Page(name, folder, None, NO_CHROMIUM)
    try:
        done = run([browser, *HEADLESS, "--dump-dom", html.as_uri()], status=None, merge=False, timeout=120)
    except CommandFailed as e:
        return Page(name, folder, None, str(e))
    if done.returncode != 0:
        return Page(name, folder, None, f"exit {done.returncode}\n{tail(done.stderr, 5)}")
    return Page(name, folder, done.stdout)


class DataCells(HTMLParser):
    """The elements of a page with data- attributes: each one's attributes
    and its text (the page's figures)."""

    def __init__(self, dom: str) -> None:
        super().__init__()
        self.cells: list[tuple[dict[str, str], str]] = []
        self._open: dict[str, str] | None = None
        self._text: list[str] = []
        self.feed(dom)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        data = {k: v or "" for k, v in attrs if k.startswith("data-")}
        if data:
            self._open, self._text = data, []

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._open is not None:
            self.cells.append((self._open, "".join(self._text)))
            self._open = None

    def figures(self, *names: str) -> list[str]:
        """The cells with the data- attributes NAMES: their values and the
        cell's text, "a,b,text" with a comma between, sorted."""
        keys = [f"data-{n}" for n in names]
        return sorted(",".join([*(a[k] for k in keys), text]) for a, text in self.cells if all(k in a for k in keys))


def class_rows(folder: Path) -> list[list[str]]:
    """FOLDER's class.csv: its header, then a row per student."""
    with (folder / "class.csv").open(newline="") as f:
        return list(csv.reader(f))


def csv_scores(folder: Path) -> list[str]:
    """Every student's points in each lab and in all, as class.csv has
    them: "student,labN,points" and "student,total,points", sorted."""
    header, *rows = class_rows(folder)
    columns = [(i, c) for i, c in enumerate(header) if re.fullmatch(r"lab[0-9]+|total", c)]
    return sorted(f"{row[0]},{col},{row[i]}" for row in rows for i, col in columns)


def summary_distribution(folder: Path) -> list[str]:
    """summary.txt's distribution of the totals: "tenth,students" a line
    (tenth 0 to 9: 0-9% to 90-100%), sorted."""
    lines = (folder / "summary.txt").read_text().splitlines()
    found = (DISTRIBUTION_LINE.match(line) for line in lines)
    return sorted(f"{int(m.group(1)) // 10},{m.group(2)}" for m in found if m)


def steps_of(records: Path, labs: set[str]) -> dict[tuple[str, str], bool]:
    """Per lab (of LABS) and step ("build" for step 0) of the records
    RECORDS, whether every test of it passed."""
    passed: dict[tuple[str, str], bool] = {}
    for line in records.read_text().splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        if str(r["lab"]) not in labs:
            continue
        key = (str(r["lab"]), "build" if r["step"] == 0 else str(r["step"]))
        passed[key] = passed.get(key, True) and r["result"] == "pass"
    return passed


def steps_passed(folder: Path) -> list[str]:
    """Per lab and step of the class's labs, how many graded students (an
    unsafe one was graded too) passed every test of it, counted from their
    results.jsonl: "lab,step,students", sorted."""
    header, *rows = class_rows(folder)
    labs = {col[3:] for col in header if re.fullmatch(r"lab[0-9]+", col)}
    status = header.index("status")
    count: dict[tuple[str, str], int] = {}
    for row in rows:
        if row[status] not in ("graded", "unsafe"):
            continue
        for key, passed in steps_of(folder / row[0] / "results.jsonl", labs).items():
            count[key] = count.get(key, 0) + int(passed)
    return sorted(f"{lab},{step},{n}" for (lab, step), n in count.items())


class DrawnPages(KitCase):
    """What every class page must show; the classes below give the pages
    (load_tests runs those, not this base)."""

    pages: list[Page] = []

    def dom(self, page: Page) -> DataCells:
        """PAGE's figures, or fail: it was not drawn."""
        if page.dom is None:
            self.fail(f"{page.name}: not drawn: {page.why_not}")
        return DataCells(page.dom)

    def assertSameFigures(self, want: list[str], got: list[str], source: str, what: str) -> None:
        """WANT (from the class's file SOURCE) and GOT (from the page) are
        the same, and there are some; else fail with WHAT and their
        difference."""
        if want and want == got:
            return
        diff = difflib.unified_diff(want, got, source, "the page", lineterm="", n=0)
        self.fail(f"{what}:\n" + ("\n".join(list(diff)[:12]) if want else f"{source} has none"))

    def html_of(self, page: Page) -> Path:
        """PAGE's class.html, or fail: there is none."""
        html = page.folder / "class.html"
        if not html.is_file() or html.stat().st_size == 0:
            self.fail(f"{page.name}: no class.html in {page.folder}")
        return html

    def test_each_class_has_its_page(self) -> None:
        for page in self.pages:
            with self.subTest(page.name):
                self.html_of(page)

    def test_the_page_loads_and_runs_nothing(self) -> None:
        for page in self.pages:
            with self.subTest(page.name):
                found = LOADS.search(self.html_of(page).read_text(errors="replace"))
                if found:
                    self.fail(f"{page.name}: the page loads or runs something: {found.group(0)}")

    def test_chromium_draws_the_page(self) -> None:
        for page in self.pages:
            with self.subTest(page.name):
                if page.dom is None:
                    self.fail(f"{page.name}: chromium could not draw the page: {page.why_not}")

    def test_chromium_takes_a_screenshot(self) -> None:
        browser = chromium()
        if browser is None:
            self.fail(NO_CHROMIUM)
        SHOTS.mkdir(parents=True, exist_ok=True)
        for page in self.pages:
            with self.subTest(page.name):
                shot = SHOTS / f"class-{page.name}.png"
                shot.unlink(missing_ok=True)
                run([browser, *HEADLESS, "--hide-scrollbars", "--window-size=1000,1600", f"--screenshot={shot}",
                     self.html_of(page).as_uri()], status=None, timeout=120)  # fmt: skip
                self.assertTrue(shot.is_file() and shot.stat().st_size > 0, f"{page.name}: no screenshot")

    def test_the_page_shows_class_csvs_scores(self) -> None:
        for page in self.pages:
            with self.subTest(page.name):
                got = self.dom(page).figures("student", "col")
                what = f"{page.name}: the students' scores on the page differ from class.csv"
                self.assertSameFigures(csv_scores(page.folder), got, "class.csv", what)

    def test_the_page_shows_summary_txts_distribution(self) -> None:
        for page in self.pages:
            with self.subTest(page.name):
                got = self.dom(page).figures("bucket")
                what = f"{page.name}: the distribution on the page differs from summary.txt"
                self.assertSameFigures(summary_distribution(page.folder), got, "summary.txt", what)

    def test_the_page_shows_the_steps_the_students_passed(self) -> None:
        for page in self.pages:
            with self.subTest(page.name):
                got = self.dom(page).figures("lab", "step")
                what = f"{page.name}: the steps passed on the page differ from the results"
                self.assertSameFigures(steps_passed(page.folder), got, "results.jsonl", what)


def student(top: Path, name: str, ungradable: bool, seconds: int, *rows: str) -> None:
    """A student NAME of the made-up class in TOP: each ROW is "lab step
    test result earned points" (step 0: the lab's build)."""
    folder = top / name
    folder.mkdir(parents=True)
    about = {"name": name, "made": "t", "graded": "Labs 0, 3", "source": "", "intake": "", "unsafe": None,
             "ungradable": "the RDMA environment failed" if ungradable else None, "seconds": seconds}  # fmt: skip
    (folder / "submission.json").write_text(json.dumps(about) + "\n")
    records = []
    for row in rows:
        lab, step, test, result, points, most = row.split(" ")
        records.append({"lab": int(lab), "step": int(step), "test": test, "result": result, "points": int(points),
                        "max": int(most), "message": "", "skipped_because": None, "said": "", "ms": 5})  # fmt: skip
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def made_up_class(top: Path) -> None:
    """Four students: alice passed all, bob and carol some, dave could not
    be graded. Of the three graded, one passed step 2 of lab 0 and step 8
    of lab 3 (stuck); two passed step 1 of lab 3, and built it."""
    student(top, "alice", False, 30, "0 0 lab0_builds pass 0 0", "0 1 lists pass 3 3", "0 1 ends pass 1 1",
            "0 2 names pass 2 2", "3 0 lab3_builds pass 0 0", "3 1 hash pass 2 2", "3 8 key pass 4 4")  # fmt: skip
    student(top, "bob", False, 41, "0 0 lab0_builds pass 0 0", "0 1 lists pass 3 3", "0 1 ends FAIL 0 1",
            "0 2 names FAIL 0 2", "3 0 lab3_builds pass 0 0", "3 1 hash pass 2 2", "3 8 key FAIL 0 4")  # fmt: skip
    student(top, "carol", False, 12, "0 0 lab0_builds pass 0 0", "0 1 lists FAIL 0 3", "0 1 ends FAIL 0 1",
            "0 2 names FAIL 0 2", "3 0 lab3_builds FAIL 0 0", "3 1 hash FAIL 0 2", "3 8 key FAIL 0 4")  # fmt: skip
    student(top, "dave", True, 5)


class MadeUpClass(DrawnPages):
    """The page of a class made up here, whose figures are known."""

    top: Path
    not_written: str  # why scripts/results class failed, or nothing
    html: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.top = cls.class_tmp("rdmalab-test-class-html.") / "class"
        made_up_class(cls.top)
        try:
            run([KIT / "scripts" / "results", "class", "--labs", "0 3", "--made", "test", cls.top], timeout=120)
            cls.not_written = ""
        except CommandFailed as e:
            cls.not_written = str(e)
        html = cls.top / "class.html"
        cls.html = html.read_text() if html.is_file() else ""
        cls.pages = [draw("made-up", cls.top)]

    def test_scripts_results_writes_the_class_pages(self) -> None:
        if self.not_written:
            self.fail(f"scripts/results class failed: {self.not_written}")

    def test_step_2_of_lab_0_passed_by_1_of_3_is_marked_stuck(self) -> None:
        self.assertIn('<tr class="stuck"><td>0</td><td>2</td>', self.html,
                      "made-up: step 2 of lab 0, passed by 1 of 3, is not marked stuck")  # fmt: skip

    def test_step_1_of_lab_3_passed_by_2_of_3_is_not_marked_stuck(self) -> None:
        self.assertIn("<td>3</td><td>1</td>", self.html, "made-up: no line for step 1 of lab 3")
        self.assertNotIn('<tr class="stuck"><td>3</td><td>1</td>', self.html,
                         "made-up: step 1 of lab 3, passed by 2 of 3, is marked stuck")  # fmt: skip

    def test_the_build_of_lab_3_shows_2_of_3_passed(self) -> None:
        self.assertIn('<tr><td>3</td><td>build</td><td class="n" data-lab="3" data-step="build">2<', self.html,
                      "made-up: the build of lab 3, passed by 2 of 3, is not shown so")  # fmt: skip

    def test_alices_line_links_to_her_report(self) -> None:
        self.assertIn('<a href="alice/report.txt">alice</a>', self.html,
                      "made-up: alice's line does not link to her report")  # fmt: skip


def sample_classes() -> list[Path]:
    """The class folders RDMALAB_CLASS_DIRS names, or the sample classes
    that exist."""
    named = os.environ.get("RDMALAB_CLASS_DIRS", "")
    if named:
        return [Path(d).resolve() for d in named.split(os.pathsep) if d]
    return [d for d in SAMPLE_CLASSES if d.is_dir()]


class SampleClasses(DrawnPages):
    """The pages of classes the grader graded: the samples'."""

    @classmethod
    def setUpClass(cls) -> None:
        folders = sample_classes()
        if not folders:
            names = " ".join(str(d.relative_to(KIT)) for d in SAMPLE_CLASSES)
            raise unittest.SkipTest(
                f"no sample class ({names}): run tests/grader/run-samples, or name some in RDMALAB_CLASS_DIRS"
            )
        cls.pages = [draw(d.name, d) for d in folders]


def load_tests(loader: unittest.TestLoader, tests: unittest.TestSuite, pattern: str | None) -> unittest.TestSuite:
    """The made-up class's cases and the samples', not their base's."""
    return unittest.TestSuite(loader.loadTestsFromTestCase(c) for c in (MadeUpClass, SampleClasses))
