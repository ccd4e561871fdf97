"""vm/hub, the course's switch, and the guests that join it: a student's
User-Mode Linux guest earns its Lab 3 key from the course's receiver in
another guest, through the hub alone; the hub drops a frame whose cookie
the course did not issue and never carries a student's frame to another
student. The guests' cases boot two guests at once (a few seconds); the
switch's own cases speak L2TPv3 from this process, no guest.
"""

from __future__ import annotations

import json
import os
import platform
import socket
import struct
import subprocess
import threading
import time
import unittest
from pathlib import Path

from tests.kitbase import KitCase, run, scaled

HUB = str(KitCase.kit / "vm/hub")
UML_RUN = str(KitCase.kit / "vm/uml-run")
RECEIVER = KitCase.kit / "build/bin/rdmalab-receiver"
SENDER = KitCase.kit / "build/solutions/lab3/lab3"
# The sessions the tests issue: the course's receiver and two students.
COURSE, ALICE, BOB = 1, 17, 18
RECEIVER_ADDR = "10.212.0.1"
RECEIVER_PORT = 7471
L2TP = struct.Struct("!IIQ")
BROADCAST = b"\xff" * 6


class Hub:
    """A hub serving a sessions file on 127.0.0.1, any free port."""

    def __init__(self, sessions: Path) -> None:
        self.proc = subprocess.Popen([HUB, "serve", "--sessions", str(sessions), "--listen", "127.0.0.1:0"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        first = self.proc.stdout.readline() if self.proc.stdout else ""
        if "listening on UDP 127.0.0.1:" not in first:
            self.proc.kill()
            raise AssertionError(f"vm/hub serve did not start: {first}{self.proc.communicate()[0]}")
        self.port = int(first.split("127.0.0.1:")[1].split()[0])
        self.said = [first]

    def stop(self) -> dict[str, int]:
        """Stop the hub; its counters (the JSON line it prints last)."""
        if self.proc.poll() is None:
            self.proc.terminate()
        out, _ = self.proc.communicate(timeout=scaled(10))
        self.said += out.splitlines()
        last = [line for line in self.said if line.startswith("{")]
        if not last:
            raise AssertionError("vm/hub printed no counters:\n" + "".join(self.said))
        counts: dict[str, int] = json.loads(last[-1])["counts"]
        return counts


def stop_if_running(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        proc.wait(timeout=scaled(30))


def issue_sessions(folder: Path) -> Path:
    """A sessions file: the course's receiver and the students alice and bob."""
    path = folder / "sessions"
    course = run([HUB, "issue", "--role", "receiver", "--first", str(COURSE), "course"]).stdout
    students = run([HUB, "issue", "--first", str(ALICE), "alice", "bob"]).stdout
    path.write_text(course + students)
    path.chmod(0o600)
    return path


def spec(sessions: Path, port: int, name: str) -> str:
    """NAME's RDMALAB_HUB, as the course hands it out."""
    return run([HUB, "spec", "--sessions", sessions, "--hub", f"127.0.0.1:{port}", name], merge=False).stdout.strip()


def cookie_of(sessions: Path, session: int) -> int:
    for line in sessions.read_text().splitlines():
        words = line.split()
        if words and words[0] == str(session):
            return int(words[1], 16)
    raise AssertionError(f"no session {session} in {sessions}")


class HubSwitch(KitCase):
    """The switch alone: three UDP peers of this process speak for the course
    and two students."""

    def setUp(self) -> None:
        self.sessions = issue_sessions(self.tmp("test-hub."))
        self.hub = Hub(self.sessions)
        self.addCleanup(stop_if_running, self.hub.proc)
        self.peers = {}
        for sid in (COURSE, ALICE, BOB):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 0))
            s.settimeout(0.3)
            self.addCleanup(s.close)
            self.peers[sid] = s

    def send(self, sid: int, dst: bytes, src_ip: str, cookie: int | None = None) -> None:
        """An ARP request from session SID's MAC to DST, its sender IP SRC_IP."""
        mac = bytes([2, 0x72, 0x6C, 0, sid >> 8, sid & 0xFF])
        arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, mac, socket.inet_aton(src_ip),
                          b"\0" * 6, socket.inet_aton(RECEIVER_ADDR))
        frame = dst + mac + struct.pack("!H", 0x0806) + arp
        cookie = cookie_of(self.sessions, sid) if cookie is None else cookie
        self.peers[sid].sendto(L2TP.pack(0x30000, sid, cookie) + frame, ("127.0.0.1", self.hub.port))

    def received(self, sid: int) -> list[bytes]:
        """The frames session SID's peer got, within 0.3 s."""
        got = []
        try:
            while True:
                got.append(self.peers[sid].recv(65535))
        except socket.timeout:
            return got

    def join_all(self) -> None:
        """Each peer says one thing, so that the hub learns where it is."""
        for sid in (COURSE, ALICE, BOB):
            self.send(sid, BROADCAST, f"10.212.0.{sid}")
        for sid in (COURSE, ALICE, BOB):
            self.received(sid)

    def test_a_students_broadcast_reaches_the_receiver_not_the_other_student(self) -> None:
        self.join_all()
        self.send(ALICE, BROADCAST, "10.212.0.17")
        to_course, to_bob = self.received(COURSE), self.received(BOB)
        self.assertEqual(1, len(to_course), "the course's receiver did not get alice's ARP once")
        session, cookie = L2TP.unpack_from(to_course[0])[1:]
        self.assertEqual((COURSE, cookie_of(self.sessions, COURSE)), (session, cookie),
                         "the frame was not re-sent in the course's session and cookie")
        self.assertEqual([], to_bob, "bob got alice's broadcast")

    def test_a_student_cannot_reach_another_student_by_its_mac(self) -> None:
        self.join_all()
        self.send(ALICE, bytes([2, 0x72, 0x6C, 0, 0, BOB]), "10.212.0.17")
        self.assertEqual([], self.received(BOB), "bob got alice's unicast")
        self.assertEqual(1, self.hub.stop().get("dropped_student_to_student"))

    def test_the_receiver_reaches_each_student(self) -> None:
        self.join_all()
        self.send(COURSE, BROADCAST, RECEIVER_ADDR)
        self.assertEqual((1, 1), (len(self.received(ALICE)), len(self.received(BOB))))

    def test_a_wrong_cookie_is_dropped_and_counted(self) -> None:
        self.join_all()
        self.send(ALICE, BROADCAST, "10.212.0.17", cookie=cookie_of(self.sessions, ALICE) ^ 1)
        self.assertEqual([], self.received(COURSE), "a frame with a wrong cookie was forwarded")
        self.assertEqual(1, self.hub.stop().get("dropped_bad_cookie"))

    def test_a_student_claiming_another_address_is_dropped(self) -> None:
        self.join_all()
        self.send(BOB, BROADCAST, "10.212.0.17")
        self.assertEqual([], self.received(COURSE), "bob's ARP as alice was forwarded")
        self.assertEqual(1, self.hub.stop().get("dropped_not_its_address"))


class HubGuestCase(KitCase):
    """A hub, the course's receiver in a User-Mode Linux guest on it, and a
    student's reference sender in a guest that RUNNER boots (no case of
    its own: tests.vm.test_hub_qemu's guest is QEMU's)."""

    @classmethod
    def setUpClass(cls) -> None:
        """User-Mode Linux is promised on every x86-64 host: there it must
        boot (as tests.vm.test_uml_run says)."""
        probe = run(["vm/uml-probe"], status=None)
        if probe.returncode != 0:
            if platform.machine() != "x86_64":
                raise unittest.SkipTest(f"User-Mode Linux does not run on {platform.machine()} ({probe.stdout.strip()})")
            raise AssertionError(f"User-Mode Linux should run on this x86-64 host: {probe.stdout.strip()}")
        for built in (RECEIVER, SENDER):
            if not os.access(built, os.X_OK):
                raise AssertionError(f"{built} is not built: run make build")

    def setUp(self) -> None:
        self.dir = self.tmp("test-hub-guests.")
        self.dir.chmod(0o755)
        self.sessions = issue_sessions(self.dir)
        self.hub = Hub(self.sessions)
        self.addCleanup(stop_if_running, self.hub.proc)
        self.secret = self.dir / "secret"
        self.secret.write_bytes(os.urandom(32))
        self.secret.chmod(0o600)

    def start_receiver(self) -> subprocess.Popen[str]:
        """The course's receiver in its guest, once it listens on its hub
        address."""
        guest = subprocess.Popen([UML_RUN, "--timeout", "300", "--hub", spec(self.sessions, self.hub.port, "course"),
                                  "--", str(RECEIVER), "--secret-file", str(self.secret), "--tokens",
                                  "--results", str(self.dir / "results.jsonl"), "-p", str(RECEIVER_PORT), RECEIVER_ADDR],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.addCleanup(stop_if_running, guest)
        said: list[str] = []
        up = threading.Event()

        def read() -> None:
            for line in guest.stderr or []:
                said.append(line)
                if "listening on" in line:
                    up.set()

        threading.Thread(target=read, daemon=True).start()
        self.assertTrue(up.wait(scaled(60)), "the receiver's guest did not listen:\n" + "".join(said))
        self.receiver_said = said
        return guest

    def token_of(self, student: str) -> str:
        """STUDENT's token under the class's secret (rdmalab-receiver --make-tokens)."""
        roster = self.dir / "roster.csv"
        roster.write_text(f"id,name\n{student},A Student\n")
        made = run([RECEIVER, "--secret-file", self.secret, "--make-tokens", roster], merge=False)
        return made.stdout.strip().splitlines()[1].split(",")[1]

    def verified(self, keys: str) -> str:
        """The class's keys (id,key lines) checked in one batch
        (rdmalab-receiver --verify-file, exit 1: one is not OK): its CSV."""
        handed_in = self.dir / "keys.csv"
        handed_in.write_text(keys)
        checked = run([RECEIVER, "--secret-file", self.secret, "--verify-file", handed_in], status=1, merge=False)
        return checked.stdout

    def earns_its_key(self, runner: str) -> None:
        """alice's guest, booted by RUNNER on the hub, sends a file to the
        class receiver's guest (class mode: ID:TOKEN) and earns the key of
        alice under its secret, verified in a batch with a classmate's
        wrong one."""
        self.start_receiver()
        token = self.token_of("alice")
        payload = self.dir / "file"
        payload.write_bytes(os.urandom(300_001))
        t0 = time.monotonic()
        sent = run([runner, "--timeout", "300", "--hub", spec(self.sessions, self.hub.port, "alice"), "--",
                    SENDER, "--server", f"{RECEIVER_ADDR}:{RECEIVER_PORT}", "--file", payload, "--id", f"alice:{token}"],
                   status=None, timeout=300, merge=False)
        took = time.monotonic() - t0
        said = sent.stdout + sent.stderr + "receiver:\n" + "".join(self.receiver_said)
        self.assertEqual(0, sent.returncode, said)
        key = sent.stdout.strip().splitlines()[-1].split()[-1]
        checked = self.verified(f"id,key\nalice,{key}\nbob,{key}\n").splitlines()
        self.assertEqual(checked[0], "id,verdict,detail")
        self.assertEqual([line.split(",")[:2] for line in checked[1:]], [["alice", "OK"], ["bob", "BAD"]],
                         f"key {key}: {checked}\n{said}")
        counts = self.hub.stop()
        self.assertGreater(counts.get("frames_in", 0), 200, f"the transfer did not cross the hub: {counts}")
        print(f"  (the student's guest: boot and transfer in {took:.1f} s; hub: {counts})")


class HubGuests(HubGuestCase):
    """Two User-Mode Linux guests on one hub."""

    def test_a_students_guest_earns_its_key_from_the_receivers_guest_through_the_hub(self) -> None:
        self.earns_its_key(UML_RUN)

    def test_a_frame_with_a_wrong_cookie_does_not_reach_the_receivers_guest(self) -> None:
        # An ARP for the receiver, from alice's session with a cookie one bit
        # off: dropped and counted, never answered.
        self.start_receiver()
        peer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.addCleanup(peer.close)
        peer.bind(("127.0.0.1", 0))
        peer.settimeout(scaled(2))
        mac = bytes([2, 0x72, 0x6C, 0, 0, ALICE])
        arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, mac, socket.inet_aton("10.212.0.17"),
                          b"\0" * 6, socket.inet_aton(RECEIVER_ADDR))
        frame = BROADCAST + mac + struct.pack("!H", 0x0806) + arp
        good = cookie_of(self.sessions, ALICE)
        peer.sendto(L2TP.pack(0x30000, ALICE, good ^ 1) + frame, ("127.0.0.1", self.hub.port))
        with self.assertRaises(socket.timeout, msg="the receiver's guest answered a wrong cookie's ARP"):
            peer.recv(65535)
        # The same ARP with the issued cookie is answered: the case can fail.
        peer.sendto(L2TP.pack(0x30000, ALICE, good) + frame, ("127.0.0.1", self.hub.port))
        # The guest's own multicast (IPv6) and beacon (an ARP request) may
        # come first: an ARP reply (type 0806, operation 2) within 2 s each.
        reply = struct.pack("!HHHBBH", 0x0806, 1, 0x0800, 6, 4, 2)
        while peer.recv(65535)[L2TP.size + 12:L2TP.size + 22] != reply:
            pass

        self.assertEqual(1, self.hub.stop().get("dropped_bad_cookie"))
