"""The docs: every path, anchor, make target and figure they name holds,
and the two checkers that say so can fail (each on a made-up kit)."""

from __future__ import annotations


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
