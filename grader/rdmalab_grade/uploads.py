"""uploads: an upload's files routed to their labs (Gradescope, PrairieLearn).

A platform's upload may be a kit tree, a labs/ tree, labN/ folders or
loose files. Each file's lab comes from its path: the last labN folder in
it. A file in no labN folder goes to the only lab that has a file of its
name (labs/labN), or, for a name several labs have (msg.c, teardown.c), to
the only one of them graded, else to the only one whose header it
includes; otherwise it is refused. Only the files labs/labN/FILES lists
are graded; every other file is listed, with why, in the notes students
see. Gradescope's run_autograder and
PrairieLearn's entrypoint ask for this with rdmalab-grade --route.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple

# Folders whose files are never lab work (a tool's, or the kit's own parts
# in an upload of a whole kit): listed as one line each.
NOISE = (".git", "__MACOSX", "build", "node_modules", "__pycache__", ".github", ".ci", "solutions", "framework",
         "tests", "receiver", "grader", "docs", "scripts", "vm", "docker", "mk")
ARCHIVES = (".zip", ".tar", ".tar.gz", ".tgz")
# A folder's ignored files are named one by one up to this many.
NAMED = 8
_LAB_FOLDER = re.compile(r"lab([0-9]+)")


@dataclass
class Lab:
    """One lab of the kit: the names its folder has, and those graded."""

    number: int
    names: FrozenSet[str]  # every file of labs/labN
    graded: Tuple[str, ...]  # labs/labN/FILES


@dataclass
class Routing:
    """Which file is graded as labN/NAME, and why each other one is not."""

    chosen: Dict[str, Tuple[str, int]] = field(default_factory=dict)  # target: (shown, rank)
    sources: Dict[str, str] = field(default_factory=dict)  # target: the file's path
    ignored: List[Tuple[str, str]] = field(default_factory=list)  # (shown, why)

    def labs(self) -> List[int]:
        return sorted({int(t.split("/")[0][3:]) for t in self.chosen})


def kit_labs(kit: str) -> Dict[int, Lab]:
    """The kit's labs that have a labs/labN/FILES, by number."""
    found = {}
    for d in sorted(os.listdir(os.path.join(kit, "labs"))):
        m = _LAB_FOLDER.fullmatch(d)
        files = os.path.join(kit, "labs", d, "FILES")
        if m and os.path.isfile(files):
            with open(files) as f:
                graded = tuple(w for line in f if not line.startswith("#") for w in line.split())
            n = int(m.group(1))
            found[n] = Lab(n, frozenset(os.listdir(os.path.join(kit, "labs", d))), graded)
    return found


def named(numbers: Sequence[int]) -> str:
    """'Lab 3' or 'Labs 2, 3'."""
    return ("Labs " if len(numbers) > 1 else "Lab ") + ", ".join(str(n) for n in numbers)


def lab_of(shown: str, path: str, labs: Dict[int, Lab], graded: Sequence[int]) -> Tuple[Optional[int], int, str]:
    """The lab of the file SHOWN (at PATH) among every lab of the kit, LABS,
    and how sure (2 or 3: its folder, under labs/ or not; 0: its name), or
    None and why not. A name several labs have goes to the only one of
    them GRADED, else to the only one whose header it includes."""
    parts = shown.split("/")
    folders = [int(m.group(1)) for p in parts[:-1] for m in [_LAB_FOLDER.fullmatch(p)] if m]
    if folders:
        return folders[-1], 2 + ("labs" in parts[:-1]), ""
    base = parts[-1]
    have = sorted(n for n, lab in labs.items() if base in lab.names)
    if not have:
        return None, 0, "not a file of any lab"
    asked = [n for n in have if n in graded]
    for among in (have, asked):
        if len(among) == 1:
            return among[0], 0, ""
    including = [n for n in (asked or have) if includes(path, f"lab{n}.h")]
    if len(including) == 1:
        return including[0], 0, ""
    where = " or ".join(f"lab{n}/" for n in (asked or have))
    return None, 0, f"{named(have)} each have a {base}: put it in its {where} folder"


def includes(path: str, header: str) -> bool:
    """Whether the file at PATH includes HEADER ("#include \"HEADER\"")."""
    try:
        with open(path, errors="replace") as f:
            return f'#include "{header}"' in f.read(1048576)
    except OSError:
        return False


def route(folders: Sequence[str], labs: Dict[int, Lab], graded: Sequence[int]) -> Routing:
    """Each file of FOLDERS (shown by its path below its folder) routed to
    labN/NAME of LABS (every lab of the kit) when lab N is one of GRADED, or
    ignored with why. Of two files for one target, the surer (a labN
    folder, under labs/) wins, then the first by name."""
    r = Routing()
    for top in folders:
        for path in files_of(top):
            shown = os.path.relpath(path, top)
            noise = [p for p in shown.split("/")[:-1] if p in NOISE]
            if noise or shown.endswith(ARCHIVES):
                if noise:
                    r.ignored.append((shown, "not lab work (a folder of the kit's own, or of a tool)"))
                continue
            lab, rank, why = lab_of(shown, path, labs, graded)
            base = os.path.basename(shown)
            if lab is None:
                r.ignored.append((shown, why))
            elif lab not in labs:
                r.ignored.append((shown, f"the kit has {named(sorted(labs))}, no Lab {lab}"))
            elif lab not in graded:
                r.ignored.append((shown, f"a file of Lab {lab}, and this assignment grades {named(graded)}"))
            elif base not in labs[lab].graded:
                r.ignored.append((shown, f"Lab {lab} grades only {', '.join(labs[lab].graded)} (labs/lab{lab}/FILES)"))
            else:
                take(r, f"lab{lab}/{base}", shown, path, rank)
    return r


def take(r: Routing, target: str, shown: str, path: str, rank: int) -> None:
    """SHOWN (at PATH) as TARGET, unless a surer file has it."""
    if target in r.chosen:
        other, other_rank = r.chosen[target]
        if rank <= other_rank:
            r.ignored.append((shown, f"labs/{target} is taken from {other}"))
            return
        r.ignored.append((other, f"labs/{target} is taken from {shown}"))
    r.chosen[target] = (shown, rank)
    r.sources[target] = path


def files_of(top: str) -> List[str]:
    """The regular files below TOP, in order, links not followed."""
    found = []
    for d, subs, names in os.walk(top):
        subs.sort()
        found += [os.path.join(d, n) for n in sorted(names) if os.path.isfile(os.path.join(d, n))
                  and not os.path.islink(os.path.join(d, n))]
    return found


def ignored_lines(ignored: List[Tuple[str, str]]) -> List[str]:
    """One line per folder and reason: its files named, up to NAMED of them."""
    groups: Dict[Tuple[str, str], List[str]] = {}
    for shown, why in ignored:
        noise = next((i for i, p in enumerate(shown.split("/")[:-1]) if p in NOISE), None)
        folder = "/".join(shown.split("/")[:noise + 1]) + "/" if noise is not None else os.path.dirname(shown)
        groups.setdefault((folder, why), []).append(shown)
    out = []
    for (folder, why), names in groups.items():
        if len(names) > NAMED or folder.endswith("/"):
            what = f"{folder.rstrip('/') or '.'}/ ({len(names)} files)" if len(names) > 1 else names[0]
        else:
            what = ", ".join(names)
        out.append(f"ignored {what}: {why}")
    return out


def lay_out(kit: str, r: Routing, dest: str) -> None:
    """A fresh copy of the kit's labs/ in DEST, the routed files over the stubs."""
    shutil.copytree(os.path.join(kit, "labs"), dest, symlinks=True)
    for target, path in sorted(r.sources.items()):
        shutil.copyfile(path, os.path.join(dest, target))


def nothing_graded(labs: Dict[int, Lab], graded: Sequence[int]) -> str:
    """Why nothing of a submission can be graded, and what to submit."""
    if len(graded) == 1:
        n = graded[0]
        return f"no file of Lab {n} in the submission: upload your labs/lab{n}/ files ({' '.join(labs[n].graded)})"
    lines = [f"labs/lab{n}/: {' '.join(labs[n].graded)}" for n in graded]
    return ("no lab files found in the submission. Submit your labs/ folder (or labN/ folders) with the files "
            "you edit: " + "; ".join(lines))


def main(kit: str, argv: List[str]) -> int:
    """rdmalab-grade --route N[,N]|all DEST FOLDER...: print what is graded
    and what ignored (the notes), lay DEST out, and the last line
    "grading lab(s) N,N". Exit 1, the reason on standard error, when no
    file is a lab's."""
    if len(argv) < 3 or not re.fullmatch(r"all|[0-9]+(,[0-9]+)*", argv[0]):
        print("rdmalab-grade: usage: --route N[,N]|all DEST FOLDER...", file=sys.stderr)
        return 2
    every = kit_labs(kit)
    wanted = sorted(every) if argv[0] == "all" else [int(n) for n in argv[0].split(",")]
    if not set(wanted) <= set(every):
        print(f"rdmalab-grade: --route {argv[0]}: the kit has {named(sorted(every))}", file=sys.stderr)
        return 2
    r = route(argv[2:], every, wanted)
    for target in sorted(r.chosen):
        print(f"graded: labs/{target}")
    for line in ignored_lines(r.ignored):
        print(line)
    if not r.chosen:
        print(nothing_graded(every, wanted), file=sys.stderr)
        return 1
    lay_out(kit, r, argv[1])
    graded = wanted if argv[0] != "all" else r.labs()
    print(f"grading lab(s) {','.join(str(n) for n in graded)}")
    return 0
