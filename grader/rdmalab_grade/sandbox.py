"""sandbox: running the student's code isolated, and the uids it runs as.

As root (natively, and always in the guests), everything of the student's
runs as a uid of its submission's own, with no groups and no_new_privs,
under per-process limits (prlimit), in a PID namespace of its own (when the
run ends the kernel kills whatever it left) and a mount namespace whose
/proc lists only its own processes and where the kit's answers are hidden
under empty read-only mounts. What of this cannot be had here is probed
once (probe) and said: the grader stops on it unless --unsafe.
"""

from __future__ import annotations

import fcntl
import os
import resource
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import IO, Callable, Dict, Optional, Sequence, Tuple, Union

from .settings import Limits, Settings

# The kit's folders the student's code must not read (an #include through
# the tree's links to the kit would otherwise reach them).
HIDDEN = ("solutions", "build/solutions", ".git", "tests/grader/samples")

# The first process of the namespaces, a shell (each process costs 0.1 s in
# User-Mode Linux): the limits, with its ulimit (pairs of an option and a
# value, up to --), where prlimit would be one more program; a /proc of its
# own; the kit's answers hidden (folders, up to --); then the command, as
# its child, so that it keeps the usual signals (the first process of a
# PID namespace ignores those it has no handler for).
OWN_PROC_SCRIPT = "\n".join([
    'while [ "$1" != -- ]; do',
    '\tulimit "$1" "$2" || exit 125',
    "\tshift 2",
    "done",
    "shift",
    "mount -t proc -o hidepid=invisible proc /proc || exit 125",
    'while [ "$1" != -- ]; do',
    '\tmount -t tmpfs -o ro,size=4k,mode=755 hidden "$1" || exit 125',
    "\tshift",
    "done",
    "shift",
    '"$@"',
])

File = Union[int, IO[bytes], None]


def isolated() -> bool:
    """Whether the grader runs as root, and can so make the sandbox."""
    return os.geteuid() == 0


@dataclass(frozen=True)
class Sandbox:
    """What of the sandbox this environment makes. missing: a few words
    (empty when nothing is missing); cost: what that costs and how to mend
    it. own_proc: the command that makes the namespaces (empty: none), and
    hidden the folders it hides there. memlock: locked memory may be
    unlimited (verbs need it; root in a container without CAP_SYS_RESOURCE
    may not raise it)."""

    missing: str
    cost: str
    own_proc: Tuple[str, ...]
    memlock: bool
    hidden: Tuple[str, ...] = ()

    def refusal(self, where: str, unsafe: bool) -> Optional[str]:
        """None when the sandbox is whole here or the batch grades --unsafe;
        else the one line that says what is missing WHERE."""
        if not self.missing or unsafe:
            return None
        return (f"cannot isolate the students' code {where}: it lacks {self.missing}, so "
                f"{self.cost}; or pass --unsafe to grade anyway (every report then says what was missing)")


def probe(kit: str) -> Sandbox:
    """What of the sandbox can be made here (root, the namespaces, the
    mounts), each tried once."""
    memlock = _succeeds(["prlimit", "--memlock=unlimited", "--", "true"])
    if not isolated():
        return Sandbox(f"root (it runs as uid {os.geteuid()})",
                       "the students' code would run as you, not as a uid of its own per submission: grade as root",
                       (), memlock)
    namespaces = ("unshare", "--mount", "--propagation", "private", "--pid", "--fork", "--kill-child", "--")
    err = _error(list(namespaces) + ["mount", "-t", "proc", "-o", "hidepid=invisible", "proc", "/proc"])
    if err is not None:
        return Sandbox(f"mount and PID namespaces ({err or 'unshare failed'})",
                       "the students' code would see every process and could read the kit's answers: in a "
                       "container, give the grader CAP_SYS_ADMIN and no AppArmor profile that forbids mount",
                       (), memlock)
    hidden = [os.path.join(kit, f) for f in HIDDEN if os.path.isdir(os.path.join(kit, f))]
    own_proc = namespaces + ("sh", "-c", OWN_PROC_SCRIPT, "own-proc")
    if not _succeeds(list(own_proc) + ["--", *hidden, "--", "true"]):
        return Sandbox(f"a mount over {' '.join(hidden)} (mount -t tmpfs in a mount namespace failed)",
                       "the students' code could read the kit's answers", (), memlock)
    return Sandbox("", "", own_proc, memlock, tuple(hidden))


def _succeeds(cmd: Sequence[str]) -> bool:
    return _error(cmd) is None


def _error(cmd: Sequence[str]) -> Optional[str]:
    """None when CMD succeeds; else the first line it printed ('' if none)."""
    try:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, check=False)
    except OSError as e:
        return str(e)
    if p.returncode == 0:
        return None
    return p.stdout.decode(errors="replace").split("\n")[0]


RESOURCES = {"cpu": resource.RLIMIT_CPU, "as": resource.RLIMIT_AS,
             "fsize": resource.RLIMIT_FSIZE, "nproc": resource.RLIMIT_NPROC}


def within_own(limit: int, name: str) -> int:
    """LIMIT, or this process's own hard limit of NAME (prlimit's name) when
    that is lower: a limit is never asked past it, as a grader that may not
    raise it (not root, as under Tango's autodriver, whose files are at most
    100 MB) would have every run of the student's code refused by prlimit."""
    hard = resource.getrlimit(RESOURCES[name])[1]
    return limit if hard == resource.RLIM_INFINITY else min(limit, hard)


def student_command(settings: Settings, box: Sandbox, uid: int, cmd: Sequence[str]) -> list:
    """CMD as the student's code runs: limited, and (as root) as UID in the
    namespaces, which set the limits themselves."""
    lim = settings.limits
    if isolated() and box.own_proc:
        limits = ["-t", lim.cpu, "-v", lim.memory // 1024, "-f", lim.fsize // 512, "-p", lim.nproc, "-c", 0]
        limits += ["-l", "unlimited"] if box.memlock else []
        become = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs", "--"]
        return [*box.own_proc, *map(str, limits), "--", *box.hidden, "--", *become, *cmd]
    prlimit = ["prlimit", f"--cpu={lim.cpu}", f"--as={lim.memory}", f"--fsize={lim.fsize}"]
    if not isolated():
        return prlimit + ["--core=0", "--"] + list(cmd)
    # Root without the namespaces (--unsafe): its own uid, limits by prlimit.
    prlimit += [f"--nproc={lim.nproc}", "--core=0"] + (["--memlock=unlimited"] if box.memlock else [])
    become = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs", "--"]
    return prlimit + ["--"] + become + list(cmd)


def as_student(settings: Settings, box: Sandbox, uid: int, seconds: int, cmd: Sequence[str], *,
               stdin: File = subprocess.DEVNULL, out: File = None, cwd: Optional[str] = None,
               env: Optional[Dict[str, str]] = None, pass_fds: Tuple[int, ...] = ()) -> int:
    """Run CMD as the student's code runs, for at most SECONDS of wall clock
    (then SIGTERM to its process group, SIGKILL after the grace): its exit
    status, 124 when it timed out (as timeout(1) says). OUT takes its
    output and errors both."""
    p = subprocess.Popen(student_command(settings, box, uid, cmd), stdin=stdin, stdout=out,
                         stderr=subprocess.STDOUT if out is not None else None, cwd=cwd, env=env,
                         pass_fds=pass_fds, start_new_session=True)
    try:
        return p.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        _signal_group(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=Limits(settings).grace)
        except subprocess.TimeoutExpired:
            _signal_group(p.pid, signal.SIGKILL)
            p.wait()
        return 124


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def processes_of(uid: int) -> list:
    """The pids of UID's processes, read from /proc (no process started:
    each costs 0.1 s in User-Mode Linux)."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    pids.append(int(entry))
            except OSError:
                continue
    return pids


def end_student(uid: int) -> None:
    """Kill whatever UID left running: a backstop, as each run has its PID
    namespace. Tries for the grace, a tenth of a second apart."""
    if not isolated():
        return
    for _ in range(50):
        pids = processes_of(uid)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)


def clean_student(uid: int) -> None:
    """Once a submission is done, remove the files UID left in the shared
    temporary folders, where a submission of a later batch, which gets the
    same uid, would find them. find(1), on each folder's own filesystem:
    in the QEMU VM /tmp shows the host's, over 9p, where a walk in Python
    took four times as long."""
    if isolated():
        subprocess.run(["find", "/tmp", "/var/tmp", "/dev/shm", "-xdev", "-user", str(uid), "-delete"],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def give_student(uid: int, *paths: str) -> None:
    """Let UID own PATHS, all below them (when root)."""
    if isolated():
        for path in paths:
            chown_tree(path, uid, uid)


def chown_tree(top: str, uid: int, gid: int, folders_only: bool = False) -> None:
    """chown -R (or of its folders alone): symbolic links themselves, never
    what they point at."""
    os.lchown(top, uid, gid)
    for folder, dirs, files in os.walk(top):
        for name in dirs if folders_only else dirs + files:
            os.lchown(os.path.join(folder, name), uid, gid)


def own_folder(uid: int, path: str) -> None:
    """PATH open to UID's group alone (when root), so that no other
    submission's uid can reach what is below it."""
    os.chmod(path, 0o750)
    if isolated():
        os.chown(path, -1, uid)


def hold_uids(uid_base: int, waiting: Callable[[], None]) -> Optional[IO[bytes]]:
    """As root, the uids from UID_BASE + 1 this grader's alone on this
    machine, for as long as the file returned stays open: two graders that
    shared them would kill and remove each other's students' processes and
    files (end_student, clean_student). A second one waits for the first,
    after WAITING says so. None when not root (the student's code then runs
    as the grader's own user)."""
    if not isolated():
        return None
    try:
        lock = open(f"/run/rdmalab-grade-{uid_base}.lock", "ab")
    except OSError:  # no /run to write (a read-only container): as before, unheld
        return None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        waiting()
        fcntl.flock(lock, fcntl.LOCK_EX)
    return lock


def can(uid: int, test: Sequence[str]) -> bool:
    """Whether an unprivileged UID (no groups) passes TEST (a command)."""
    return _succeeds(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"] + list(test))


def remove(path: str) -> None:
    """rm -rf PATH."""
    if os.path.islink(path) or os.path.isfile(path):
        os.unlink(path)
    elif os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)
