"""The make fragments (mk/*.mk) stand alone: included in reverse order, they
define the same variables and rules as in the Makefile's own order.

Compares make's database (make -p, for a goal that runs nothing) of both,
each line's words as a set: only the order of lists (.PHONY, make test's
extras) may differ.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.kitbase import KitCase

INCLUDE = "-include mk/*.mk"


class Fragments(KitCase):
    def database(self, makefile: Path) -> list[str]:
        """make's variables and rules, each line's words sorted, without
        comments and the names of the makefiles themselves."""
        out = self.run_cmd(["make", "--no-print-directory", "-R", "-p", "-f", makefile,
                            "--eval=rl-nothing: ;", "rl-nothing"], status=None).stdout
        lines = []
        for line in out.splitlines():
            if not line.strip() or line.startswith("#") or line.startswith("MAKEFILE_LIST") or line == f"{makefile}:":
                continue
            lines.append(" ".join(sorted(line.split(" "))))
        return sorted(lines)

    def test_the_fragments_define_the_same_in_reverse_order(self) -> None:
        makefile = (self.kit / "Makefile").read_text()
        self.assertRegex(makefile, rf"(?m)^{re.escape(INCLUDE)}$", "the Makefile has no '-include mk/*.mk' line")
        fragments = sorted((str(p.relative_to(self.kit)) for p in (self.kit / "mk").glob("*.mk")), reverse=True)
        reversed_makefile = self.tmp() / "Makefile.reversed"
        reversed_makefile.write_text(re.sub(rf"(?m)^{re.escape(INCLUDE)}$", "-include " + " ".join(fragments), makefile))
        forward, backward = self.database(Path("Makefile")), self.database(reversed_makefile)
        self.assertGreater(len(forward), 100, "make's database is nearly empty: did make -p run?")
        only_forward = sorted(set(forward) - set(backward))[:20]
        only_backward = sorted(set(backward) - set(forward))[:20]
        if forward != backward:
            self.fail(f"mk/*.mk in reverse order define something else:\nonly in order: {only_forward}\n"
                      f"only reversed: {only_backward}")
