# lib.sh: shell functions the kit's scripts share (the tests' scripts,
# scripts/bench, scripts/demo, scripts/trace-*). Source it; it sets nothing
# else.

# rl_scaled SECONDS: SECONDS times CK_TIMEOUT_MULTIPLIER (default 1), rounded
# up to whole seconds. Every timeout that only catches a hang goes through it,
# so that one multiplier slows them all down on a slow machine.
rl_scaled() {
	awk -v s="$1" -v m="${CK_TIMEOUT_MULTIPLIER:-1}" \
		'BEGIN { t = s * m; printf "%d\n", t == int(t) ? t : int(t) + 1 }'
}

# rl_wait_listening LOG PID SECONDS: until LOG (the reference receiver's
# output) has its "listening" line. Returns 1 when PID exits first or
# SECONDS (scaled) pass.
rl_wait_listening() {
	local log=$1 pid=$2 end
	end=$((EPOCHSECONDS + $(rl_scaled "$3")))
	until rl_log_has "$log" listening; do
		kill -0 "$pid" 2>/dev/null || return 1
		[ "$EPOCHSECONDS" -lt "$end" ] || return 1
		sleep 0.1
	done
}

# rl_log_has FILE TEXT: whether a line of FILE holds TEXT, read by the shell
# itself: a wait that polls a log starts no process (in User-Mode Linux each
# one costs 0.1 to 0.2 s, taken from what it waits for).
rl_log_has() {
	local line
	while IFS= read -r line || [ -n "$line" ]; do
		[[ $line == *"$2"* ]] && return 0
	done 2>/dev/null <"$1"
	return 1
}

# rl_wait_port PORT PID SECONDS: until something listens on PORT, at most
# SECONDS (scaled): a TCP socket (perftest, an out-of-band exchange; read
# from /proc/net/tcp, no process started) or an rdma_cm ID (`rdma res`,
# asked less often: under emulation every process started slows the server
# down). Returns 1 when PID died first; 0 when the time is up (the client
# then finds out for itself).
rl_wait_port() {
	local port=$1 hex end i=0 local_addr st
	printf -v hex ':%04X' "$port"
	end=$((${EPOCHREALTIME%.*} + $(rl_scaled "$3")))
	while [ "${EPOCHREALTIME%.*}" -lt "$end" ]; do
		kill -0 "$2" 2>/dev/null || return 1
		while read -r _ local_addr _ st _; do
			[ "$st" = 0A ] && [ "${local_addr: -5}" = "$hex" ] && return 0
		done </proc/net/tcp
		if [ $((i++ % 4)) = 3 ] && rdma res show cm_id 2>/dev/null | grep -q "state LISTEN .*src-addr [^ ]*:$port "; then
			return 0
		fi
		sleep 0.2
	done
	return 0
}

# rl_guest_event KIND WHAT: record that a guest hung, died, was killed or
# was booted again (KIND: hung, died, killed, retried; WHAT: who and why), a
# line in the file RDMALAB_GUEST_EVENTS names: tests/run.py sets it and
# shows the lines and their count at the end of make test. Nothing when it
# is unset.
rl_guest_event() {
	[ -n "${RDMALAB_GUEST_EVENTS:-}" ] || return 0
	printf '%s\t%s\n' "$1" "$2" >>"$RDMALAB_GUEST_EVENTS" 2>/dev/null || true
}

# rl_skip NAME REASON: a test that cannot run here says so and exits 77:
# tests/run.py counts it as skipped, never as passed, and names it
# with REASON at the end of make test (a line in the file RDMALAB_TEST_SKIPS
# names). Only for what the README does not promise: a test that needs RDMA
# fails when neither a device nor a guest can be had.
rl_skip() {
	echo "$1: SKIPPED: $2"
	[ -z "${RDMALAB_TEST_SKIPS:-}" ] || printf '%s\t%s\n' "$1" "$2" >>"$RDMALAB_TEST_SKIPS" 2>/dev/null || true
	exit 77
}

# rl_debian_mirror SUITE: the Debian mirror to debootstrap SUITE from:
# RDMALAB_DEBIAN_MIRROR when set, else the one apt already uses for SUITE's
# main archive (deb822 or one-line form), else deb.debian.org. docker/base-image and
# tests/portability/debian-chroot use it.
rl_debian_mirror() {
	local suite=$1 f found=
	[ -z "${RDMALAB_DEBIAN_MIRROR:-}" ] || { echo "$RDMALAB_DEBIAN_MIRROR"; return; }
	for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		awk -v suite="$suite" '
			/^URIs:/ { uri = $2 }
			/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) found = uri }
			/^deb / { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:/) { u = $i; if ($(i + 1) == suite) found = u; break } }
			END { if (found != "") print found }' "$f"
	done | grep -v security | head -n 1 | grep . || echo http://deb.debian.org/debian
}

# rl_debian_keyring: the keyring debootstrap checks a Release file with,
# given explicitly: without one, debootstrap would warn and go on unchecked.
# Debian 12's debian-archive-keyring holds Debian 13's keys too.
rl_debian_keyring() {
	local k=/usr/share/keyrings/debian-archive-keyring.gpg
	[ -r "$k" ] || { echo "no $k to check the Debian archive's signatures: apt-get install debian-archive-keyring" >&2; return 1; }
	echo "$k"
}

# rl_debian_apt DIR SUITE: a private apt configuration in DIR that reads
# only Debian SUITE's main archive (from rl_debian_mirror), its lists
# fetched; prints the configuration's path, for APT_CONFIG. It leaves the
# system's sources and packages alone and needs no root: apt-get download
# with it fetches a package file, checked against the archive's signature.
# vm/uml-kernel takes its kernel source so, and grader/gradescope/setup.sh
# what an Ubuntu image's lists lack.
rl_debian_apt() {
	local dir=$1 suite=$2 keyring
	keyring=$(rl_debian_keyring) || return 1
	mkdir -p "$dir/lists/partial" "$dir/archives/partial" || return 1
	echo "deb [signed-by=$keyring] $(rl_debian_mirror "$suite") $suite main" >"$dir/sources.list"
	cat >"$dir/apt.conf" <<CONF
Dir::Etc::sourcelist "$dir/sources.list";
Dir::Etc::sourceparts "-";
Dir::State::lists "$dir/lists";
Dir::Cache::archives "$dir/archives";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
$([ "$(id -u)" = 0 ] && echo 'APT::Sandbox::User "root";')
CONF
	APT_CONFIG=$dir/apt.conf apt-get update -qq >&2 || {
		echo "apt-get update from Debian $suite ($(rl_debian_mirror "$suite")) failed" >&2
		return 1
	}
	echo "$dir/apt.conf"
}

# rl_capture_start PCAP [SNAPLEN [IFACE]]: start capturing the RoCEv2
# packets (UDP port 4791) that cross a link into PCAP (a pcap file, which
# every tool opens), in the background; SNAPLEN: bytes kept of each (empty:
# all); IFACE: that link, both ways, instead of the one picked below.
# In the kit's guest (RDMALAB_ENV uml or vm): on every link, each packet
# once, as it arrives ("any", inbound only: rxe stamps each packet it makes
# with the monotonic clock, kernel 6.12, and the capture keeps that stamp
# for the packets some links see it send, so one capture must see them all
# alike). Natively: on the network device under RDMALAB_DEVICE's GID, both
# ways, with the caller's rights, which this never changes. Sets
# rl_capture_pid. Returns 1, with one line, when no capture starts.
rl_capture_start() {
	local pcap=$1 iface=${3:-} filter="udp port 4791" why
	rl_capture_pid= rl_capture_log=$pcap.dumpcap
	command -v dumpcap >/dev/null ||
		{ echo "capture: no dumpcap here: install the trace packages (scripts/deps install trace)" >&2; return 1; }
	case ${iface:+given}:${RDMALAB_ENV:-native} in
	given:*) ;;
	:uml | :vm) iface=any filter="inbound and udp port 4791" ;;
	*)
		read -r iface <"/sys/class/infiniband/$RDMALAB_DEVICE/ports/${RDMALAB_IB_PORT:-1}/gid_attrs/ndevs/$RDMALAB_GID_INDEX" 2>/dev/null
		[ -n "$iface" ] || { echo "capture: $RDMALAB_DEVICE's GID $RDMALAB_GID_INDEX has no network device to capture on (not RoCE?)" >&2; return 1; } ;;
	esac
	dumpcap -q -P -i "$iface" -f "$filter" ${2:+-s "$2"} -w "$pcap" 2>"$rl_capture_log" &
	rl_capture_pid=$!
	# Capturing once it names its file, which it makes after it has opened
	# the link with its filter.
	for _ in {1..100}; do
		grep -q '^File:' "$rl_capture_log" && return 0
		kill -0 "$rl_capture_pid" 2>/dev/null || break
		sleep 0.05
	done
	kill "$rl_capture_pid" 2>/dev/null
	wait "$rl_capture_pid" 2>/dev/null
	why=$(grep -v '^Capturing on\|^File:\|^$' "$rl_capture_log" | head -n 1)
	rm -f "$rl_capture_log" "$pcap"
	rl_capture_pid=
	case $why in
	*ermission* | *"not permitted"*)
		echo "capture: you ($(id -un)) may not capture on $iface: ${why}. Ask for capture rights (Debian: dpkg-reconfigure wireshark-common, then join the wireshark group); nothing here changes this machine's settings" >&2 ;;
	*) echo "capture: dumpcap could not capture on $iface: ${why:-it did not start in 5 s}" >&2 ;;
	esac
	return 1
}

# rl_capture_stop: stop the capture rl_capture_start started and let
# dumpcap write out what it holds. The kernel hands captured packets over
# in blocks, each when full or once dumpcap's read timeout (250 ms) is up;
# a packet in a block not yet handed over when dumpcap stops is lost (a
# short run lost all of them), so the stop waits a second (scaled) first.
# Sets rl_capture_received and rl_capture_dropped, dumpcap's own counts;
# packets the kernel dropped because dumpcap fell behind (a busy machine)
# are said in one line: the capture lacks them.
rl_capture_stop() {
	[ -n "${rl_capture_pid:-}" ] || return 0
	local line re="^Packets received/dropped on interface '(.*)': ([0-9]+)/([0-9]+) "
	sleep "$(rl_scaled 1)"
	kill -INT "$rl_capture_pid" 2>/dev/null
	wait "$rl_capture_pid" 2>/dev/null
	rl_capture_pid= rl_capture_received= rl_capture_dropped=
	[ -f "$rl_capture_log" ] && while IFS= read -r line; do
		[[ $line =~ $re ]] || continue
		rl_capture_received=${BASH_REMATCH[2]} rl_capture_dropped=${BASH_REMATCH[3]}
		[ "$rl_capture_dropped" = 0 ] ||
			echo "capture: $rl_capture_dropped of $rl_capture_received packets on ${BASH_REMATCH[1]} were dropped (the machine was too busy for dumpcap): the capture lacks them" >&2
	done <"$rl_capture_log"
	rm -f "$rl_capture_log"
}

# rl_labs KIT: the kit's labs, one number a line, from its rubric
# (KIT/build/rubric/labN.jsonl, which make builds): the one list of labs,
# never a hand-kept one. Returns 1, saying to build, when there is none.
rl_labs() {
	local f
	for f in "$1"/build/rubric/lab*.jsonl; do
		[ -f "$f" ] || continue
		f=${f##*/lab}
		echo "${f%.jsonl}"
	done | sort -n
	compgen -G "$1/build/rubric/lab*.jsonl" >/dev/null ||
		{ echo "no rubric in $1/build/rubric: run make (it builds it)" >&2; return 1; }
}

# rl_lab_points KIT LAB: what lab LAB's solution earns, the sum of its
# tests' points in the rubric (a stub earns 0: every test fails on it).
rl_lab_points() {
	jq -s 'map(.max) | add // 0' "$1/build/rubric/lab$2.jsonl"
}

# rl_sample_scores KIT: "SAMPLE LAB SCORE [SANDBOX]" lines, the score each
# sample submission of the grader's tests must get, as their one owner
# (tests/grader/test_samples.py) gives them: the solutions' and the stubs'
# on every lab from the rubric, then tests/grader/expected's broken samples.
rl_sample_scores() {
	"$1/tests/grader/run-samples" --scores
}
