# lib.sh: shell functions the kit's scripts share (grader/rdmalab-grade,
# scripts/bench, scripts/demo). Source it; it sets nothing else.

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
	end=$(($(date +%s) + $(rl_scaled "$3")))
	until grep -q listening "$log" 2>/dev/null; do
		kill -0 "$pid" 2>/dev/null || return 1
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.1
	done
}

# rl_guest_event KIND WHAT: record that a guest hung, died, was killed or
# was booted again (KIND: hung, died, killed, retried; WHAT: who and why), a
# line in the file RDMALAB_GUEST_EVENTS names: scripts/run-tests sets it and
# shows the lines and their count at the end of make test. Nothing when it
# is unset.
rl_guest_event() {
	[ -n "${RDMALAB_GUEST_EVENTS:-}" ] || return 0
	printf '%s\t%s\n' "$1" "$2" >>"$RDMALAB_GUEST_EVENTS" 2>/dev/null || true
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
