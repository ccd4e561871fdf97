"""The docs: every path, anchor, make target and figure they name holds,
and the two checkers that say so can fail (each on a made-up kit); a
handout's docs leave out what only the kit has (scripts/handout-docs)."""

from __future__ import annotations

from pathlib import Path

from tests.kitbase import KitCase

DOC_WITH_REFERENCES = """# A

Good: `labs/lab1/cm.c`, [the part](b.md#the-part), `make check LAB=1`.

```
make check LAB=1        # in labs/labN/cm.c
```

Broken: `labs/lab1/gone.c`, [no part](b.md#no-such-part), `make no-such-target`.
"""

BROKEN_REFERENCES = """\
docs/a.md:9: names labs/lab1/gone.c, which does not exist: fix the name or the file
docs/a.md:9: names make target 'no-such-target', which the Makefile does not have: fix the name or add the target
docs/a.md:9: links b.md#no-such-part, but docs/b.md has no anchor 'no-such-part': add <a id="no-such-part"> or fix the link
docs check: 2 files, 5 paths, 3 make targets, 2 anchors checked; 3 broken"""

DOC_WITH_FIGURES = """# A

A nap takes 10 s
(`sleep 0.1`). This page has 4 lines.
"""

# doc, text, value, unit, command, cheap, extract: one gone from its doc, one
# off by 50x, one that holds, one not cheap (never rerun).
FIGURES = [
    ("docs/a.md", "the nap took 2 s", "2", "s", "sleep 0.1", "yes", "time"),
    ("docs/a.md", "A nap takes 10 s (", "10", "s", "sleep 0.1", "yes", "time"),
    ("docs/a.md", "has 4 lines", "4", "lines", 'cat "docs/a.md"', "yes", "count:.*"),
    ("docs/a.md", "This page", "1", "s", "false", "no", "time"),
]


class DocsHold(KitCase):
    def test_every_path_anchor_and_make_target_the_docs_name_exists(self) -> None:
        out = self.run_cmd(["tests/docs/check-paths"]).stdout
        self.assertRegex(out, r"docs check: \d+ files, .*; 0 broken")

    def test_every_figure_has_its_command_and_the_cheap_ones_hold_within_2x(self) -> None:
        out = self.run_cmd(["scripts/doc-figures", "--untimed"]).stdout
        print(out[-600:])
        self.assertRegex(out, r"doc-figures: \d+ figures: 0 gone from their docs")


KIT_ONLY_DOC = """# A

Run `make check LAB=1`<!-- kit --> (or `make check LAB=1 SOL=1`)<!-- /kit -->.
<!-- kit -->
`solutions/` is the source; `make stubs` makes labs/ from it.
<!-- /kit -->
See [b](b.md#the-part) and `make stubs`, and `make check LAB=1 SOL=1`.
"""


class HandoutDocs(KitCase):
    """scripts/handout-docs: what only the kit has is left out of a
    handout's docs, and what is left naming it is found, by the line as
    committed (scripts/handout --check runs it on the handout)."""

    def tree(self) -> Path:
        root = self.tmp()
        (root / "docs").mkdir()
        (root / "docs/a.md").write_text(KIT_ONLY_DOC)
        return root

    def test_check_names_each_line_that_names_what_a_handout_lacks(self) -> None:
        done = self.run_cmd(["scripts/handout-docs", "check", self.tree(), "docs/a.md"], status=1)
        self.assertEqual(["docs/a.md:7: names SOL=1, which a student handout has not: mark it kit-only "
                          "(<!-- kit --> ... <!-- /kit -->) or say it for both",
                          "docs/a.md:7: names make stubs, which a student handout has not: mark it kit-only "
                          "(<!-- kit --> ... <!-- /kit -->) or say it for both"],
                         done.stdout.splitlines())

    def test_strip_leaves_the_kit_only_parts_out_and_lines_maps_back(self) -> None:
        root = self.tree()
        self.run_cmd(["scripts/handout-docs", "strip", root, "docs/a.md"])
        self.assertEqual("# A\n\nRun `make check LAB=1`.\nSee [b](b.md#the-part) and `make stubs`, and "
                         "`make check LAB=1 SOL=1`.\n", (root / "docs/a.md").read_text())
        done = self.run_cmd(["scripts/handout-docs", "lines", self.tree()],
                            stdin="docs/a.md:4: links b.md#the-part\nsummary\n")
        self.assertEqual("docs/a.md:7: links b.md#the-part\nsummary\n", done.stdout)

    def test_check_refuses_a_marker_left_open(self) -> None:
        root = self.tmp()
        (root / "a.md").write_text("x\n<!-- kit -->\ny\n")
        done = self.run_cmd(["scripts/handout-docs", "check", root, "a.md"], status=1)
        self.assertEqual("a.md:2: a kit-only marker without its pair (<!-- kit --> ... <!-- /kit -->)\n", done.stdout)


class CheckersFail(KitCase):
    def test_check_paths_reports_a_broken_path_anchor_and_make_target(self) -> None:
        root = self.tmp()
        (root / "labs/lab1").mkdir(parents=True)
        (root / "docs").mkdir()
        (root / "labs/lab1/cm.c").write_text("")
        (root / "Makefile").write_text("check:\n\t@true\n")
        (root / "docs/b.md").write_text("# B\n\n## The part\n")
        (root / "docs/a.md").write_text(DOC_WITH_REFERENCES)
        done = self.run_cmd(["tests/docs/check-paths", "--root", root, "docs/a.md", "docs/b.md"], status=1)
        self.assertEqual(BROKEN_REFERENCES, done.stdout.rstrip("\n"))

    def test_doc_figures_flags_a_gone_text_and_a_figure_off_by_more_than_2x(self) -> None:
        root = self.tmp()
        (root / "docs").mkdir()
        (root / "docs/a.md").write_text(DOC_WITH_FIGURES)
        registry = root / "figures.tsv"
        rows = ["# doc\ttext\tvalue\tunit\tcommand\tcheap\textract"] + ["\t".join(f) for f in FIGURES]
        registry.write_text("\n".join(rows) + "\n")
        out = self.run_cmd(["scripts/doc-figures", "--registry", registry, "--root", root], status=1).stdout
        self.assertIn("docs/a.md: no 'the nap took 2 s' in it: the doc changed; update docs/figures.tsv "
                      "(the figure, or the text at it)\n", out)
        self.assertRegex(out, r"(?m)^docs/a\.md +A nap takes 10 s \( +10 s +0\.[0-9]+ s +0\.0[0-9] "
                              r"+OFF: more than 2x from the doc$")
        self.assertRegex(out, r"(?m)^docs/a\.md +has 4 lines +4 lines +4 lines +1\.00 +ok$")
        self.assertNotIn("This page", out, "the figure that is not cheap was rerun")
        self.assertRegex(out, r"(?m)^doc-figures: load average ")
        self.assertRegex(out, r"(?m)^doc-figures: 4 figures: 1 gone from their docs; 2 rerun "
                              r"\(1 off by more than 2x, 0 failed\), 0 skipped; 1 not rerun")
