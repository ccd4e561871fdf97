# uml-host.sh: this machine's side of a User-Mode Linux guest, sourced by
# vm/uml-run (it uses uml-run's settings and globals: mem, host_uid, run,
# log, kept, start, timeout_secs, prog, die, say).
#   host_memory   before the boot: where the guest's memory file goes and
#                 what this machine must allow for it. Sets mem_dir, norand
#                 (a command prefix that turns address randomization off, or
#                 nothing), map_count and map_count_needed (vm.max_map_count
#                 now, and what a guest of mem MB may need); stops with one
#                 line when a limit leaves no room for the file.
#   ended RC      after it: how the guest ended (UML's status RC), said in
#                 one line and counted (rl_guest_event) when it was not the
#                 command's own end; exits with uml-run's status.

host_memory() {
	# Guest memory is a file in TMPDIR, which must allow exec mappings; /dev/shm
	# is used only when it is large enough and allows them (Docker gives it
	# 64 MB, noexec).
	# The host mappings a guest may need. UML maps each guest page into the host
	# process that runs it with an mmap of its own (arch/um/kernel/tlb.c); pages
	# that are not adjacent in the guest's memory file make a host mapping each,
	# so a guest process with a large buffer registered (Lab 4's bench: 256 MiB)
	# needs more than Debian 12's vm.max_map_count of 65530, once the guest's
	# memory is fragmented. The guest then kills that process (SIGSEGV; "UML ran
	# out of memory on the host side" on its console): seen on 6.12, the second
	# 256 MiB registration of a boot. Ubuntu and Fedora ship 1048576. As root,
	# raise it to what a guest of this size may need; otherwise say so if it
	# happens (below).
	map_count_needed=$((mem * 256 + 65536))
	map_count=$(cat /proc/sys/vm/max_map_count 2>/dev/null || echo "$map_count_needed")
	if [ "$map_count" -lt "$map_count_needed" ] && [ "$(id -u)" = 0 ] &&
		echo "$map_count_needed" 2>/dev/null >/proc/sys/vm/max_map_count; then
		echo "$prog: raised vm.max_map_count from $map_count to $map_count_needed: a guest of $mem MB maps each of its pages into this machine on its own" >&2
		map_count=$map_count_needed
	fi

	mem_dir=${TMPDIR:-/tmp}
	shm_kb=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')
	shm_opts=$(awk '$2 == "/dev/shm" { o = $4 } END { print o }' /proc/mounts 2>/dev/null)
	[ "${shm_kb:-0}" -gt $((mem * 1024)) ] && [ -z "$host_uid" ] && [[ ,$shm_opts, != *,noexec,* ]] &&
		mem_dir=/dev/shm
	# That file is --mem MB, and more: User-Mode Linux counts in the gap between
	# its image and this process's heap (arch/um/kernel/um_arch.c, "exec-shield
	# gap"), which x86-64 places at random up to 1 GiB further unless address
	# randomization is off (kernel.randomize_va_space below 2, or setarch -R;
	# seen: 54 to 731 MB more). A file past this process's size limit kills the
	# kernel as it boots (SIGXFSZ): Tango's autodriver allows 100 MB. Where that
	# limit leaves room for --mem alone, the kernel runs without randomization
	# when this machine lets it (Docker's default seccomp profile does not).
	fsize_kb=$(ulimit -f) norand=()
	if [ "$fsize_kb" != unlimited ]; then
		gap=0
		[ "$(cat /proc/sys/kernel/randomize_va_space 2>/dev/null)" = 2 ] &&
			[ $((0x$(cat /proc/self/personality 2>/dev/null || echo 0) & 0x40000)) = 0 ] && gap=1024
		if [ $((fsize_kb >> 10)) -le $((mem + gap)) ] && [ $((fsize_kb >> 10)) -gt "$mem" ] &&
			setarch "$(uname -m)" -R true 2>/dev/null; then
			norand=(setarch "$(uname -m)" -R) gap=0
		fi
		[ $((fsize_kb >> 10)) -gt $((mem + gap)) ] ||
			die "the guest's memory is a file of $mem MB$([ "$gap" = 0 ] || echo ", plus up to $gap MB that address randomization adds to it,") past the $((fsize_kb >> 10)) MB this process may write (ulimit -f; Tango's autodriver: VM_ULIMIT_FILE_SIZE): raise that limit past $((mem + gap)) MB, or give the guest less memory (--mem, RDMALAB_GUEST_MEM)"
	fi
}

ended() {
	local rc=$1 report ran
	if [ -f "$run/started" ]; then
		say "guest ready in $(awk -v a="$start" -v b="$(cat "$run/started")" 'BEGIN { printf "%.1f", b - a }') s"
	fi
	if grep -q "ran out of memory on the host side" "$log" 2>/dev/null; then
		echo "$prog: the guest ran out of mappings on this machine (vm.max_map_count is $map_count; a guest of $mem MB may need $map_count_needed), and killed the process that needed one: run 'sudo sysctl -w vm.max_map_count=$map_count_needed' (guest console: $log)" >&2
		rl_guest_event died "uml-run: the guest ran out of host mappings (vm.max_map_count $map_count)"
	fi
	if [ -f "$run/hung" ]; then
		report=$(cat "$run/hang-report")
		cp "$log" "${report%.txt}.console.log" 2>/dev/null
		echo "$prog: the guest's kernel hung: it ran for $(cat "$run/hung") s while none of the guest's processes did; the guest was stopped. What its processes were doing: $report (its console: ${report%.txt}.console.log):" >&2
		head -n 80 "$report" | sed 's/^/  /' >&2
		rl_guest_event hung "uml-run: the kernel spun for $(cat "$run/hung") s with no guest process running ($report)"
		exit 125
	fi
	# timeout's 137 (it had to send KILL) is a timeout only when the time was up:
	# before that, something on this machine killed the guest's kernel.
	ran=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%d", b - a }')
	if [ "$rc" = 124 ] || { [ "$rc" = 137 ] && [ "$ran" -ge "$timeout_secs" ]; }; then
		echo "$prog: timed out after ${timeout_secs} s; the guest was killed (guest console: $log)" >&2
		exit 124
	fi
	if [ "$rc" = 137 ]; then
		echo "$prog: the guest's kernel was killed (SIGKILL) after $ran s by something on this machine, not by its timeout (out of memory? see dmesg; guest console: $log). Run again" >&2
		rl_guest_event killed "uml-run: the kernel was killed from outside after $ran s"
		exit 2
	fi
	if [ -f "$run/setup-error" ]; then
		echo "$prog: guest set-up failed: $(cat "$run/setup-error") (guest console: $log)" >&2
		exit 2
	fi
	if [ ! -f "$run/status" ]; then
		echo "$prog: the guest stopped before the command finished (UML exit $rc); its last words:" >&2
		tail -n 5 "$log" "$run/uml.out" 2>/dev/null | sed 's/^/  /' >&2
		mkdir -p "$kept" && cp "$log" "$kept/" 2>/dev/null
		rl_guest_event died "uml-run: the guest stopped before its command finished (UML exit $rc; console: $kept/${log##*/})"
		exit 2
	fi
	exit "$(cat "$run/status")"
}
