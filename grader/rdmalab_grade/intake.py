"""intake: a submission's files taken, and the clean tree it is built in.

Runs on the grader's machine and none of the submission's code: a tarball
is unpacked by tar, as the submission's uid, with its limits. Only the
files the kit's labs/labN/FILES lists are taken, and only regular files of
at most 1 MiB; a missing one means the stub is used.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from typing import List, Optional, Tuple

from . import sandbox
from .batch import Submission
from .settings import Limits, Settings

MAX_FILE_BYTES = 1048576
# The kit's parts a tree links to, read-only for the student's code.
KIT_LINKS = ("Makefile", "mk", "framework", "tests", "scripts", "vm", "receiver")
# The kit's built parts every tree takes (hard links when they can be).
KIT_BUILT = ("bin", "framework", "lib", "receiver", "tests", "kits", "rubric")


def safe_name(path: str) -> str:
    """The student's name a submission gets: its file or folder name, less
    .tar.gz, .tgz or .tar, in characters safe for a file name, never
    starting with a dot (grader/kubernetes/ names them the same)."""
    name = os.path.basename(path.rstrip("/")) or path
    name = re.sub(r"\.(tar\.gz|tgz|tar)$", "", name)
    name = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    return re.sub(r"^\.+", "_", name)


def manifest_files(kit: str, lab: int) -> List[str]:
    """The files a student edits in lab LAB (labs/labN/FILES, from make stubs)."""
    with open(os.path.join(kit, "labs", f"lab{lab}", "FILES")) as f:
        return [w for line in f if not line.startswith("#") for w in line.split()]


def find_labs(top: str) -> Optional[str]:
    """The folder holding the submission's labN/ folders: TOP/labs, TOP, or
    the same one folder down (a tarball usually holds one top folder), at
    most twice."""
    d = top
    for _ in range(3):
        labs = os.path.join(d, "labs")
        if os.path.isdir(labs) and not os.path.islink(labs):
            return labs
        if any(os.path.isdir(p) for p in glob.glob(os.path.join(glob.escape(d), "lab[0-9]*"))):
            return d
        subs = [p for p in glob.glob(os.path.join(glob.escape(d), "*"))
                if os.path.isdir(p) and not os.path.islink(p)]
        if len(subs) != 1:
            return None
        d = subs[0]
    return None


def is_tarball(path: str) -> bool:
    """Whether tar can list PATH (tar's own test, compressed or not)."""
    return subprocess.run(["tar", "-tf", path], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def unpack(settings: Settings, box: sandbox.Sandbox, tarball: str, dest: str, uid: int,
           log: str) -> bool:
    """TARBALL's files into DEST, unpacked as UID with its limits: a device
    node, a file past the size limit or a name with ".." stops it, and
    nothing lands outside DEST. Root opens TARBALL, which need not be
    readable by UID. tar's messages go to LOG."""
    with open(tarball, "rb", buffering=0) as f:  # unbuffered: tar reads it from its start
        gzip = f.read(2) == b"\x1f\x8b"
        f.seek(0)
        sandbox.give_student(uid, dest)
        cmd = ["tar"] + (["-z"] if gzip else []) + ["-xf", "-", "-C", dest, "--no-same-owner",
                                                      "--no-same-permissions"]
        with open(log, "wb") as out:
            rc = sandbox.as_student(settings, box, uid, Limits(settings).unpack, cmd, stdin=f, out=out)
    sandbox.end_student(uid)
    return rc == 0


def unpack_error(tarball: str, log: str) -> str:
    """Why TARBALL could not be unpacked, in the line the report shows."""
    with open(log, errors="replace") as f:
        lines = [l.rstrip("\n") for l in f
                 if "Removing leading" not in l and "Exiting with failure" not in l]
    first = lines[0] if lines else ""
    return f"could not unpack {os.path.basename(tarball)}: {first} (make it with: tar -czf NAME.tgz labs)"


def take(settings: Settings, box: sandbox.Sandbox, sub: Submission) -> None:
    """Lay out SUB's tree in WORK/NAME/tree, ready to build: the kit's
    parts, its stubs with the submission's manifest files over them, the
    kit's own objects. Records what was taken and the intake's note in
    SUB."""
    w = sub.work(settings)
    sandbox.remove(w)
    for d in ("src", "results", "tree/build"):
        os.makedirs(os.path.join(w, d))
    sandbox.own_folder(sub.uid, w)
    labroot, sub.intake = _labs_of(settings, box, sub, w)
    _kit_tree(settings.kit, os.path.join(w, "tree"))
    sub.taken = _take_files(settings, labroot, os.path.join(w, "tree"))
    _kit_objects(settings, os.path.join(w, "tree"))
    sandbox.clean_student(sub.uid)


def _labs_of(settings: Settings, box: sandbox.Sandbox, sub: Submission,
             w: str) -> Tuple[Optional[str], str]:
    """The folder of SUB's labN/ folders (None: none), and the intake's note."""
    src, base = sub.source, os.path.basename(sub.source)
    if os.path.isdir(src):
        labroot = find_labs(src)
    elif is_tarball(src):
        log = os.path.join(w, "unpack.log")
        if not unpack(settings, box, src, os.path.join(w, "src"), sub.uid, log):
            return None, unpack_error(src, log)
        labroot = find_labs(os.path.join(w, "src"))
    else:
        return None, f"{base} is neither a folder nor a tarball (.tar, .tar.gz, .tgz)"
    if labroot is None:
        return None, f"no labs/ folder and no labN/ folders in {base}: nothing of the student's to grade"
    return labroot, ""


def _kit_tree(kit: str, tree: str) -> None:
    """The kit's parts in TREE: links to the read-only ones, a copy of
    labs/ (the stubs), its built parts (hard links when they can be)."""
    for f in KIT_LINKS:
        os.symlink(os.path.join(kit, f), os.path.join(tree, f))
    shutil.copytree(os.path.join(kit, "labs"), os.path.join(tree, "labs"), symlinks=True)
    for f in KIT_BUILT:
        src = os.path.join(kit, "build", f)
        if os.path.isdir(src):  # kits: not in a handout, which ships them built
            shutil.copytree(src, os.path.join(tree, "build", f), symlinks=True, copy_function=link_or_copy)
    sandbox.remove(os.path.join(tree, "build/tests/unit"))
    for p in glob.glob(os.path.join(glob.escape(tree), "build/tests/rdma/test_*")):
        sandbox.remove(p)
    # Stamps the kit's make fragments keep in build/ (mk/lab4.mk's mode).
    for p in glob.glob(os.path.join(glob.escape(kit), "build/*.mode")):
        shutil.copy2(p, os.path.join(tree, "build"))


def link_or_copy(src: str, dst: str) -> None:
    """A hard link to SRC at DST, or a copy where links cannot be made."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _take_files(settings: Settings, labroot: Optional[str], tree: str) -> List[str]:
    """The manifest's files from LABROOT into TREE's labs/: one line each
    of what was taken, or why the stub is used."""
    taken = []
    for lab in settings.labs:
        for f in manifest_files(settings.kit, lab):
            s = os.path.join(labroot, f"lab{lab}", f) if labroot else ""
            what = f"lab{lab}/{f}"
            if not labroot or not os.path.exists(s):
                taken.append(f"{what}: not in the submission, the stub is used")
            elif os.path.islink(s) or not os.path.isfile(s):
                taken.append(f"{what}: not a regular file, the stub is used")
            elif os.path.getsize(s) > MAX_FILE_BYTES:
                taken.append(f"{what}: {os.path.getsize(s)} bytes (over 1 MiB), the stub is used")
            else:
                shutil.copyfile(s, os.path.join(tree, "labs", f"lab{lab}", f))
                taken.append(f"{what}: taken")
    return taken


def _kit_objects(settings: Settings, tree: str) -> None:
    """The kit's objects of each lab in TREE's build/labs: the student's
    builds write only there, and compile only the student's files (the
    objects of the kit's own lab files and of the step tests stay root's,
    read-only)."""
    kit = settings.kit
    for lab in settings.labs:
        os.makedirs(os.path.join(tree, f"build/labs/lab{lab}/tests"), exist_ok=True)
        students = set(manifest_files(kit, lab))
        for folder in (f"build/labs/lab{lab}", f"build/labs/lab{lab}/tests"):
            for f in sorted(glob.glob(os.path.join(glob.escape(kit), folder, "*.[od]"))):
                if not os.path.isfile(f):
                    continue
                if not folder.endswith("/tests") and os.path.basename(f)[:-2] + ".c" in students:
                    continue
                dst = os.path.join(tree, folder, os.path.basename(f))
                try:
                    os.link(f, dst)
                except OSError:
                    shutil.copy2(f, dst)
    for top in ("labs", "build/labs"):
        for folder, _, _ in os.walk(os.path.join(tree, top)):
            os.chmod(folder, 0o755)
