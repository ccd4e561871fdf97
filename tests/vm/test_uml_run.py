"""vm/uml-run keeps vm/rxe-run's promises: the command's exit status, its
stdout and stderr apart and whole, the RDMALAB_* variables, the current
folder, --rw shares written back, a timeout that says so (124), a guest
that dies or is killed says so (2), --host-uid confines what guest root may
write on the host, a file size limit too small for the guest's memory file
is said at once, and --root runs the guest on a Debian root of its own
(vm/guest-root). Each case is one boot (1 to 3 s) or none.
"""

from __future__ import annotations

import os
import platform
import shutil
import signal
import subprocess
import time
import unittest
from pathlib import Path

from tests.kitbase import KitCase, run, scaled

UML_RUN = str(KitCase.kit / "vm/uml-run")


def setUpModule() -> None:
    """User-Mode Linux is promised on every x86-64 host (the kit's own
    kernel sizes the CPU's registers at run time): there it must boot.
    This module's guests die and are killed on purpose: not the events make
    test counts (the module runs in a process of its own)."""
    os.environ.pop("RDMALAB_GUEST_EVENTS", None)
    probe = run(["vm/uml-probe"], status=None)
    if probe.returncode != 0:
        if platform.machine() != "x86_64":
            raise unittest.SkipTest(f"User-Mode Linux does not run on {platform.machine()} ({probe.stdout.strip()})")
        raise AssertionError(f"User-Mode Linux should run on this x86-64 host: {probe.stdout.strip()}")


def guest_pids(bg: subprocess.Popen[str]) -> list[str]:
    """The host processes of the guest that uml-run BG booted."""
    return run(["pgrep", "-f", f"umid=rdmalab-{bg.pid} "], status=None).stdout.split()


class UmlRun(KitCase):
    def setUp(self) -> None:
        self.dir = self.tmp("test-uml-run.")
        self.dir.chmod(0o755)
        self.share = self.dir / "share"
        self.share.mkdir()

    def uml(self, *args: str | os.PathLike[str], cwd: Path | None = None, merge: bool = True,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """vm/uml-run ARGS, whatever its status."""
        return self.run_cmd([UML_RUN, *args], status=None, timeout=300, cwd=cwd, merge=merge,
                            env=env)

    def start_sleeping_guest(self, *opts: str) -> subprocess.Popen[str]:
        """A guest that says it is up (a file in the share), then sleeps."""
        up = self.share / "up"
        bg = subprocess.Popen([UML_RUN, "--timeout", "120", "--rw", str(self.share), *opts, "--",
                               "sh", "-c", f"touch {up}; sleep 600"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: run(["pkill", "-KILL", "-f", f"umid=rdmalab-{bg.pid} "], status=None))
        end = time.monotonic() + scaled(60)
        while not up.exists() and time.monotonic() < end:
            time.sleep(0.1)
        return bg

    def test_the_commands_status_and_its_stdout_and_stderr_apart(self) -> None:
        done = self.uml("--", "sh", "-c", "echo out; echo err >&2; exit 7", merge=False)
        self.assertEqual((7, "out\n"), (done.returncode, done.stdout))
        self.assertIn("err", done.stderr.splitlines())

    def test_the_variables_the_current_folder_and_output_kept_whole(self) -> None:
        done = self.uml("--", "sh", "-c", 'printf "%s %s %s %s\\n" "$RDMALAB_ENV" "$RDMALAB_DEVICE" '
                        '"$RDMALAB_ADDR" "$PWD"; printf "a\\nb\\n\\nc\\n"', cwd=self.dir)
        lines = done.stdout.splitlines()
        self.assertEqual(f"uml rxe0 10.211.0.1 {self.dir}", lines[0], done.stdout)
        self.assertEqual(["a", "b", "", "c"], lines[-4:])

    def test_a_rw_folder_is_written_back_to_the_host(self) -> None:
        self.uml("--rw", self.share, "--", "sh", "-c", f"echo back >{self.share}/file")
        self.assertEqual("back\n", (self.share / "file").read_text())

    def test_outside_the_shares_writes_stay_in_the_guest(self) -> None:
        self.uml("--", "sh", "-c", f"echo lost >{self.dir}/lost")
        self.assertFalse((self.dir / "lost").exists(), "a write outside the shares reached the host")

    def test_a_command_past_its_timeout_is_stopped_with_124_and_a_message(self) -> None:
        t0 = time.monotonic()
        done = self.uml("--timeout", "5", "--", "sleep", "600", merge=False, env={"CK_TIMEOUT_MULTIPLIER": "1"})
        self.assertEqual(124, done.returncode, done.stderr)
        self.assertIn("timed out after 5 s", done.stderr)
        self.assertLess(time.monotonic() - t0, 60)

    def test_a_guest_that_dies_is_reported_2_not_waited_for(self) -> None:
        # The guest's kernel dies under the command (a sysrq crash): the run
        # ends at once with 2 and the guest's last words, not at the timeout.
        t0 = time.monotonic()
        done = self.uml("--timeout", "120", "--", "sh", "-c", "echo c >/proc/sysrq-trigger; sleep 600", merge=False)
        self.assertEqual(2, done.returncode, done.stderr[-600:])
        self.assertIn("stopped before the command finished", done.stderr)
        self.assertLess(time.monotonic() - t0, 60)

    def test_a_guest_kernel_killed_from_outside_is_reported_2_not_as_a_timeout(self) -> None:
        # As an out-of-memory killer would.
        bg = self.start_sleeping_guest()
        kernel = run(["pgrep", "-o", "-f", f"umid=rdmalab-{bg.pid} "], status=None).stdout.strip()
        self.assertTrue(kernel, "no guest kernel found")
        os.kill(int(kernel), signal.SIGKILL)
        _, err = bg.communicate(timeout=scaled(60))
        self.assertEqual(2, bg.returncode, err)
        self.assertRegex(err, r"killed \(SIGKILL\) after .* not by its timeout")

    def test_a_stopped_uml_run_leaves_no_guest_process_behind(self) -> None:
        # As by ^C, or a hung guest's watcher: UML calls setsid(), leaving
        # uml-run's process group. Seen running first, so that a changed
        # umid cannot make "none left" vacuous.
        bg = self.start_sleeping_guest()
        running = guest_pids(bg)
        bg.terminate()
        bg.communicate(timeout=scaled(60))
        time.sleep(1)
        self.assertTrue(running, "no process of the guest was seen running")
        self.assertEqual([], guest_pids(bg), f"{len(running)} processes of the guest ran")

    def test_a_hang_report_shows_the_kernel_the_stubs_it_traces_their_wait_channels(self) -> None:
        console = self.dir / "console"
        bg = self.start_sleeping_guest("--log", str(console))
        report = run(["vm/uml-watch", "--report", f"rdmalab-{bg.pid}", console], status=None).stdout
        bg.terminate()
        bg.communicate(timeout=scaled(60))
        kernel = next((ln.split()[-1] for ln in report.splitlines() if ln.startswith("the kernel: pid ")), None)
        self.assertIsNotNone(kernel, report[:600])
        self.assertRegex(report, r"(?m)^processes")
        self.assertIn(f"TracerPid: {kernel} ", report)
        self.assertRegex(report, r" wchan [a-z_]")
        self.assertIn("the guest's console", report)

    def test_a_file_size_limit_below_the_guests_memory_one_line_status_2_no_boot(self) -> None:
        # Tango's autodriver allows 100 MB; the guest's memory is a file.
        done = self.run_cmd(["prlimit", f"--fsize={100 << 20}", "--", UML_RUN, "--", "true"], status=None,
                            env={"RDMALAB_GUEST_MEM": "1024"})
        self.assertEqual(2, done.returncode)
        self.assertEqual(1, len(done.stdout.splitlines()), done.stdout)
        self.assertIn("past the 100 MB this process may write", done.stdout)

    def test_room_for_mem_alone_under_that_limit_boots_without_address_randomization(self) -> None:
        aslr = Path("/proc/sys/kernel/randomize_va_space").read_text().strip()
        if run(["setarch", platform.machine(), "-R", "true"], status=None).returncode != 0 or aslr != "2":
            self.skipTest("this machine cannot turn address randomization off for a process")
        done = self.run_cmd(["prlimit", f"--fsize={100 << 20}", "--", UML_RUN, "--", "echo", "booted"], status=None,
                            env={"RDMALAB_GUEST_MEM": "64"})
        self.assertEqual(0, done.returncode, done.stdout[-400:])
        self.assertIn("booted", done.stdout.splitlines())


FAKE_612 = """#!/bin/sh
[ "$1" = --version ] && { echo 6.12.117; exit 0; }
echo "userspace - ptrace set fp regs failed, errno = 14" >&3
echo "Kernel panic - not syncing: Attempted to kill init! exitcode=0x0000000b" >&3
exit 1
"""


class AKernelThatCannotSetFpRegisters(KitCase):
    """6.12 on an AMX host panicked so. The kernel is a stand-in that says
    what 6.12 said there."""

    def setUp(self) -> None:
        self.dir = self.tmp()
        kernel = self.dir / "linux"
        kernel.write_text(FAKE_612)
        kernel.chmod(0o755)
        self.env = {"RDMALAB_CACHE": str(self.dir / "cache"), "RDMALAB_UML_KERNEL": str(kernel)}

    def test_the_probe_says_why_with_this_cpus_size_and_the_kernels_version(self) -> None:
        self.run_cmd(["cc", "-o", self.dir / "xs", "vm/xstate-size.c"])
        size = self.run_cmd([self.dir / "xs"]).stdout.strip()
        answer = self.run_cmd(["vm/uml-probe"], status=None, env=self.env, merge=False).stdout
        self.assertIn(f"no: a probe boot failed (this CPU's FP/XSTATE registers ({size} bytes) do not fit "
                      "User-Mode Linux 6.12.117", answer)

    def test_run_rdmas_auto_mode_says_why_it_leaves_uml_the_path_and_its_cost(self) -> None:
        # The probe's answer cached first: its first boot says it boots.
        self.run_cmd(["vm/uml-probe"], status=None, env=self.env)
        out = self.run_cmd(["vm/run-rdma", "--mode", "auto", "--print-mode"], status=None, env=self.env).stdout
        lines = out.splitlines()
        self.assertEqual(["vm"], lines[-1:], out)
        self.assertEqual(2, len(lines), out)
        self.assertRegex(lines[0], r"^run-rdma: User-Mode Linux cannot run here \(a probe boot failed \(this CPU's "
                                   r"FP/XSTATE .*the QEMU VM instead.*20 to 40 times slower")


@unittest.skipUnless(os.getuid() == 0, "needs root (another host uid, chown)")
class AsAnotherHostUser(KitCase):
    def setUp(self) -> None:
        self.dir = self.tmp("test-uml-run.")
        self.dir.chmod(0o755)

    def test_host_uid_guest_root_writes_only_what_that_host_user_may(self) -> None:
        owned, root_only = self.dir / "owned", self.dir / "root-only"
        owned.mkdir()
        root_only.mkdir()
        os.chown(owned, 64099, 64099)
        done = self.run_cmd([UML_RUN, "--host-uid", "64099", "--rw", owned, "--rw", root_only, "--", "sh", "-c",
                             f"id -u; echo yes >{owned}/f; echo no >{root_only}/f; mkdir -p /mnt/h && "
                             f"mount -t hostfs -o {self.dir} hostfs /mnt/h && echo no >/mnt/h/g"],
                            status=None)
        self.assertEqual("0", done.stdout.splitlines()[0], done.stdout)
        self.assertTrue((owned / "f").stat().st_size > 0, "the share the user owns was not written")
        self.assertFalse((root_only / "f").exists(), "guest root wrote in a share that user may not")
        self.assertFalse((self.dir / "g").exists(), "guest root wrote on the host through its own hostfs mount")

    def test_host_uid_a_share_that_user_cannot_reach_one_line_status_2_no_boot(self) -> None:
        # A share below a folder that user cannot enter (a kit in /root).
        share = self.dir / "closed/share"
        share.mkdir(parents=True)
        (self.dir / "closed").chmod(0o700)
        done = self.run_cmd([UML_RUN, "--host-uid", "64099", "--rw", share, "--", "true"], status=None)
        self.assertEqual(2, done.returncode)
        self.assertEqual(1, len(done.stdout.splitlines()), done.stdout)
        self.assertIn(f"cannot reach {share}, which the guest shares", done.stdout)

    def as_nobody(self) -> list[str]:
        """A user who cannot write root's cache (inherited through
        XDG_CACHE_HOME)."""
        cache, home = self.dir / "roots-cache", self.dir / "k"
        cache.mkdir()
        home.mkdir()
        shutil.copy(run(["vm/uml-kernel", "--cached"], merge=False).stdout.strip(), home / "linux")
        (home / "linux").chmod(0o755)
        return ["env", "-u", "XDG_CACHE_HOME", f"RDMALAB_CACHE={cache}", f"RDMALAB_UML_KERNEL={home}/linux",
                f"HOME={home}", "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]

    def test_a_cache_folder_it_cannot_write_one_line_status_2_no_boot(self) -> None:
        done = self.run_cmd([*self.as_nobody(), UML_RUN, "--", "true"], status=None)
        self.assertEqual(2, done.returncode)
        self.assertEqual(1, len(done.stdout.splitlines()), done.stdout)
        self.assertIn(f"cannot write in the cache folder {self.dir}/roots-cache/logs as", done.stdout)

    def test_auto_mode_says_why_it_leaves_uml_the_cache_it_cannot_write(self) -> None:
        out = self.run_cmd([*self.as_nobody(), "vm/run-rdma", "--print-mode"], status=None).stdout
        self.assertIn(f"User-Mode Linux cannot run here (the kit's cache {self.dir}/roots-cache/uml cannot be "
                      "written as", out)


class OnItsOwnRoot(KitCase):
    def test_root_the_guest_runs_on_its_own_debian_root_rxe0_active_shares_written_back(self) -> None:
        # What the guest says is checked against the root's own files, read here.
        made = run(["vm/guest-root", "--cached"], status=None, merge=False)
        if made.returncode != 0 and os.getuid() == 0:
            made = run(["vm/guest-root"], status=None, merge=False, timeout=1800)
        if made.returncode != 0:
            self.skipTest("no guest root made (vm/guest-root makes one, as root)")
        groot = Path(made.stdout.strip())
        share = self.tmp()
        share.chmod(0o755)
        version = (groot / "etc/debian_version").read_text().strip()
        ibverbs = run(["dpkg-query", f"--admindir={groot}/var/lib/dpkg", "-W", "-f=${Version}", "libibverbs1"]).stdout
        done = self.run_cmd([UML_RUN, "--root", groot, "--rw", share, "--", "sh", "-c",
                             "echo $(cat /etc/debian_version) $(dpkg-query -W -f='${Version}' libibverbs1); "
                             f"ibv_devinfo -d rxe0 | grep -c PORT_ACTIVE; echo root >{share}/root"],
                            status=None)
        self.assertEqual([f"{version} {ibverbs}", "1"], done.stdout.splitlines()[:2], done.stdout)
        self.assertEqual("root\n", (share / "root").read_text())
        print(f"--root: the guest runs on its own root ({version} {ibverbs}), rxe0 active there, shares written back")
