"""make trace shows what the labs put on the wire.

The decoded timelines are checked against what the programs printed and,
packet by packet, against tshark's own renderings of the same capture: its
one-line summary (the opcode's words, case aside, and the QP) and its packet
tree (-V: the PSN, the payload's length, the RETH's rkey, the NAK's reason).
- A capture stopped right after a short run keeps its packets.
- make trace LAB=2 SOL=1, end to end: RDMA WRITE packets whose RETH rkey is
  the one the server printed, and a READ Request answered by READ responses.
- In one more guest boot, the capture of Lab 4's solution (an RDMA WRITE
  with Immediate) and of Lab 2's with a wrong rkey planted (the client's own
  lkey in its RDMA WRITE and READ): a NAK, "Remote Access Error"; and of
  Lab 5's solution: rdma_connect on a UDP id as a SIDR request and reply,
  then datagrams to a multicast group's QP 0xffffff.
In User-Mode Linux, where the client gets a device of its own (natively both
peers would share one, and nothing would cross a link).
"""

from __future__ import annotations

import platform
import re
import shutil
import unittest
from dataclasses import dataclass, field
from pathlib import Path

from tests.kitbase import KIT, KitCase, run

TIMELINE_LINE = re.compile(r"^ *[0-9]+\.[0-9]{6}  ")
PLANT_FROM, PLANT_TO = ".rkey = rkey,", ".rkey = c->rdma_mr->lkey,"


def setUpModule() -> None:
    if shutil.which("tshark") is None:
        raise unittest.SkipTest("no tshark here (scripts/deps install trace)")
    probe = run(["vm/uml-probe"], status=None)
    if probe.returncode != 0:
        if platform.machine() != "x86_64":
            raise unittest.SkipTest(f"User-Mode Linux does not run on {platform.machine()}: {probe.stdout.strip()}")
        raise AssertionError(f"User-Mode Linux should run on this x86-64 host: {probe.stdout.strip()}")


@dataclass
class Packet:
    """What tshark's packet tree says of one packet."""

    fields: dict[str, str] = field(default_factory=dict)


def tshark_packets(pcap: Path) -> tuple[list[str], list[Packet]]:
    """tshark's one-line summaries and packet trees of PCAP's RoCE packets,
    with the decoder's dissection options (the payload's heuristic
    subdissectors off: a payload is data, as the timeline counts it)."""
    opts = [o for o in run(["scripts/trace-decode", "--tshark-options"]).stdout.split("\n") if o]
    base: list[str | Path] = ["tshark", "-n", "-r", pcap, *opts, "-Y", "infiniband.bth"]
    lines = run(base, merge=False).stdout.splitlines()
    packets: list[Packet] = []
    for text in run([*base, "-V"], merge=False).stdout.splitlines():
        if re.match(r"^Frame [0-9]+:", text):
            packets.append(Packet())
            continue
        if not packets:
            continue
        f = packets[-1].fields
        for key, pattern in (("qp", r"^ +Destination Queue Pair: (\S+)"), ("psn", r"^ +Packet Sequence Number: (\S+)"),
                             ("data", r"^Data \(([0-9]+) bytes\)"), ("pad", r" = Pad Count: (\S+)$"),
                             ("aeth", r"^ +Syndrome: [0-9]+, (.*)$"), ("nak", r"^ +Error Code: (.*?)(?: \([0-9]+\))?$")):
            m = re.search(pattern, text)
            if m:
                f[key] = m.group(1)
        m = re.match(r"^ +Remote Key: (\S+)", text)
        if m and "rkey" not in f:
            f["rkey"] = m.group(1)
    return lines, packets


def disagreements(timeline: str, lines: list[str], packets: list[Packet]) -> list[str]:
    """Where each line of TIMELINE (the decoder's) differs from tshark's
    rendering of the same packet, in order: the opcode (or a CM message),
    the QP, the PSN, the payload length less padding, the rkey, the AETH
    syndrome and the NAK reason."""
    ours = [ln for ln in timeline.splitlines() if TIMELINE_LINE.match(ln)]
    if not ours or len(ours) != len(lines) or len(ours) != len(packets):
        return [f"{len(ours)} timeline lines, tshark shows {len(lines)} packets"]
    bad = []
    for n, (line, summary, p) in enumerate(zip(ours, lines, packets), 1):
        def no(what: str) -> None:
            bad.append(f"packet {n}: {what}; ours: {line}; tshark: {summary} | {p.fields}")
        rest = re.sub(r"^ *[0-9.]+  \S+ > \S+ +", "", line)
        m = re.search(r" +(0x[0-9a-f]+) +([0-9]+) +([0-9]+|-)( |$)", rest)
        if not m:
            no("unreadable line")
            continue
        op = re.sub(r"^(ud|uc|rd|xrc) ", "", rest[:m.start()].lower()).replace("with ", "")
        qp, psn, length = m.group(1), m.group(2), m.group(3)
        detail = rest[m.end():]
        cm = re.search(r"CM: [A-Za-z]+", summary)
        # A connection manager datagram: tshark sums it up by its message,
        # not by the opcode (UD SEND only, to QP 1).
        if cm:
            if cm.group(0) not in line:
                no("CM message")
        elif op not in summary.lower():
            no("opcode")
        f = p.fields
        if int(f.get("qp", "-1"), 16) != int(qp, 16):
            no("QP")
        if f.get("psn") != psn:
            no("PSN")
        if (length == "-" and "data" in f) or (length != "-" and int(length) != int(f.get("data", 0)) - int(f.get("pad", 0))):
            no("payload length")
        rkey = re.search(r"rkey (0x[0-9a-f]+)", detail)
        if rkey and int(rkey.group(1), 16) != int(f.get("rkey", "-1"), 16):
            no("rkey")
        if "aeth" in f and f["aeth"] not in detail:
            no("AETH syndrome")
        if "nak" in f and f"Nak: {f['nak']}" not in detail:
            no("NAK reason")
    return bad


class AShortCapture(KitCase):
    def test_a_capture_stopped_right_after_a_short_run_keeps_its_packets(self) -> None:
        # Three datagrams on this machine's loopback, stopped at once; what the
        # pcap holds, and dumpcap's own counts as rl_capture_stop read them.
        pcap = self.tmp() / "lo.pcap"
        out = self.run_cmd(["bash", "-c", '. scripts/lib.sh; rl_capture_start "$1" "" lo 2>/dev/null || exit 3; '
                            'for _ in 1 2 3; do echo short >/dev/udp/127.0.0.1/4791; done; rl_capture_stop; '
                            'echo "${rl_capture_received:-none}/${rl_capture_dropped:-none}"', "lo", pcap]).stdout
        kept = len(run(["tshark", "-n", "-r", pcap], status=None, merge=False).stdout.splitlines())
        self.assertEqual((3, "3/0"), (kept, out.strip().splitlines()[-1]),
                         "expected 3 packets kept and dumpcap's count 3/0 (received/dropped)")


class Lab2Traced(KitCase):
    """make trace LAB=2 SOL=1, as a student runs it."""

    out: str
    pcap: Path | None
    rkey: str | None

    @classmethod
    def setUpClass(cls) -> None:
        done = run(["make", "-C", KIT, "--no-print-directory", "trace", "LAB=2", "SOL=1", "RDMA_MODE=uml"], timeout=900)
        cls.out = done.stdout
        m = re.search(r"(?m)^trace: (.*\.pcap) \(open it", cls.out)
        cls.pcap = KIT / m.group(1) if m else None
        m = re.search(r"(?m)^server: sent MSG_MR: .* rkey (0x[0-9a-f]*)$", cls.out)
        cls.rkey = m.group(1) if m else None

    @classmethod
    def tearDownClass(cls) -> None:
        if cls.pcap:
            for ext in (".pcap", ".peers", ".txt"):
                cls.pcap.with_suffix(ext).unlink(missing_ok=True)

    def test_it_names_the_pcap_it_wrote(self) -> None:
        self.assertTrue(self.pcap and self.pcap.exists(), self.out[-800:])

    def test_every_rdma_write_carries_the_rkey_the_server_printed(self) -> None:
        self.assertIsNotNone(self.rkey, "Lab 2's server printed no rkey (sent MSG_MR: ... rkey 0x...)")
        writes = [ln for ln in self.out.splitlines() if re.search(r"RDMA WRITE .* rkey", ln)]
        self.assertTrue(writes, "no RDMA WRITE in the timeline")
        wrong = [ln for ln in writes if f"rkey {self.rkey} len" not in ln]
        self.assertEqual([], wrong, f"expected every RDMA WRITE's RETH to carry the server's rkey {self.rkey}")

    def test_a_read_request_is_answered_by_a_read_response(self) -> None:
        self.assertRegex(self.out, rf"client > server *RDMA READ Request .* rkey {self.rkey} len.*\n"
                                   r".*server > client *RDMA READ response (First|Only)")

    def test_each_packet_as_tshark_shows_it(self) -> None:
        if not (self.pcap and self.pcap.exists()):
            self.fail("no pcap")
        assert self.pcap is not None
        self.assertEqual([], disagreements(self.out, *tshark_packets(self.pcap))[:20])


class Lab4AndAWrongRkey(KitCase):
    """Lab 4, and Lab 2 with the client's lkey for the server's rkey, in one
    boot, from a copy of the kit with the plant in its labs/lab2."""

    top: Path
    copy: Path
    boot: str
    timelines: dict[str, str]

    @classmethod
    def setUpClass(cls) -> None:
        cls.top = cls.class_tmp("rdmalab-test-trace.")
        copy = cls.copy = cls.top / "kit"
        (copy / "build").mkdir(parents=True)
        for f in ("Makefile", "mk", "framework", "tests", "receiver", "scripts", "vm", "labs", "solutions", "grader"):
            run(["cp", "-a", KIT / f, copy / f])
        for f in ("framework", "receiver", "lib", "bin", "tests", "rubric", "solutions"):
            if (KIT / "build" / f).is_dir():
                run(["cp", "-a", KIT / "build" / f, copy / "build/"])
        run(["cp", "-a", f"{KIT}/solutions/lab2/.", copy / "labs/lab2/"])
        rdma = copy / "labs/lab2/rdma.c"
        text = rdma.read_text()
        if PLANT_FROM not in text:
            raise AssertionError(f"solutions/lab2/rdma.c no longer has '{PLANT_FROM}': update this test's plant")
        rdma.write_text(text.replace(PLANT_FROM, PLANT_TO, 1))
        run(["make", "-C", copy, "--no-print-directory", "-s", "build/labs/lab2/lab2", "build/solutions/lab4/lab4",
             "build/solutions/lab5/lab5"])
        cls.boot = run(["vm/run-rdma", "--mode", "uml", "--wire", "--rw", cls.top, "--", "bash", "-c",
                        'cd "$1" || exit 2\n'
                        "scripts/trace-capture --out build/trace/lab4.pcap -- scripts/trace-lab 4 solutions build/trace/lab4.peers\n"
                        'echo "== lab 4: status $?"\n'
                        "scripts/trace-capture --out build/trace/planted.pcap -- scripts/trace-lab 2 labs build/trace/planted.peers\n"
                        'echo "== planted: status $?"\n'
                        "scripts/trace-capture --out build/trace/lab5.pcap -- scripts/trace-lab 5 solutions build/trace/lab5.peers\n"
                        'echo "== lab 5: status $?"', "test-trace", copy], status=None, timeout=900).stdout
        cls.timelines = {}
        for name in ("lab4", "planted", "lab5"):
            pcap = copy / f"build/trace/{name}.pcap"
            if pcap.exists():
                cls.timelines[name] = run(["scripts/trace-decode", "--peers", copy / f"build/trace/{name}.peers",
                                           pcap], status=None).stdout


    def timeline(self, name: str) -> str:
        t = self.timelines.get(name)
        self.assertIsNotNone(t, f"no capture of {name}:\n{self.boot[-1500:]}")
        assert t is not None
        self.assertNotRegex(t, r"(?m): no RoCE packets$", f"the capture of {name} holds no RoCE packet:\n{self.boot[-1500:]}")
        return t

    def test_lab4s_solution_sends_rdma_write_with_immediate(self) -> None:
        self.assertRegex(self.boot, r"(?m)^== lab 4: status 0", self.boot[-1500:])
        self.assertRegex(self.timeline("lab4"), r"client > server *RDMA WRITE (Only|Last) with Immediate .* imm 0x")

    def test_a_wrong_rkey_gets_the_servers_nak_remote_access_error(self) -> None:
        self.assertRegex(self.boot, r"(?m)^== planted: status [1-9]", "Lab 2 with the wrong rkey did not fail")
        self.assertRegex(self.timeline("planted"), r"server > client *Acknowledge .* Nak: Remote Access Error")

    def test_lab5s_sidr_and_datagrams_to_the_server_and_the_group(self) -> None:
        self.assertRegex(self.boot, r"(?m)^== lab 5: status 0", self.boot[-1500:])
        t = self.timeline("lab5")
        self.assertRegex(t, r"client > server *UD SEND only .*CM: ServiceIDResReq")
        self.assertRegex(t, r"server > client *UD SEND only .*CM: ServiceIDResReqResp")
        self.assertRegex(t, r"server > 239\.[0-9.]+ *UD SEND only +0xffffff ")

    def test_each_packet_of_all_three_as_tshark_shows_it(self) -> None:
        for name in ("lab4", "planted", "lab5"):
            with self.subTest(name):
                timeline = self.timeline(name)
                self.assertEqual([], disagreements(timeline, *tshark_packets(self.copy / f"build/trace/{name}.pcap"))[:20])
