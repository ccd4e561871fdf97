# sandbox.sh: running the student's code isolated: uids, limits, namespaces, the guest's user.
# A part of grader/rdmalab-grade and grader/test-batch, which source it: it uses that script's
# settings and globals, and defines functions (and, where it says so, state).

isolated() { [ "$(id -u)" = 0 ]; }

# Verbs need locked memory: raise the limit for the student when we may
# (root in a container without CAP_SYS_RESOURCE may not).
memlock=
prlimit --memlock=unlimited -- true 2>/dev/null && memlock=--memlock=unlimited

# Student code runs in namespaces of its own, one set per run (a build, a
# lab's tests, an end-to-end run). A PID namespace: when the run ends, the
# kernel kills whatever it left, daemons included. A /proc that lists only
# its own processes (hidepid): not the receiver's command line, nor the
# students graded beside it, whose processes would otherwise change what it
# finds there. That needs root natively and in the guests, and
# CAP_SYS_ADMIN in a container. The same mount namespace hides the kit's answers
# from the student's builds and tests: an empty, read-only folder over each
# (an #include through the tree's links to the kit would otherwise reach
# them). The command runs as a child of the namespace's first process, a
# shell, so that it keeps the usual signals (the first process of a PID
# namespace ignores those it has no handler for).
# What of this cannot be had here is sandbox_missing, a few words (empty
# when nothing is missing), and sandbox_cost what that costs and how to
# mend it: the grader stops on them unless --unsafe, and every report of an
# --unsafe grade names what was missing (grader/lib/publish.sh).
own_proc=() sandbox_missing= sandbox_cost=
if ! isolated; then
	sandbox_missing="root (it runs as uid $(id -u))"
	sandbox_cost="the students' code would run as you, not as a uid of its own per submission: grade as root"
elif ! err=$(unshare --mount --propagation private --pid --fork --kill-child -- \
	mount -t proc -o hidepid=invisible proc /proc 2>&1); then
	err=${err%%$'\n'*}
	sandbox_missing="mount and PID namespaces (${err:-unshare failed})"
	sandbox_cost="the students' code would see every process and could read the kit's answers: in a container, give the grader CAP_SYS_ADMIN and no AppArmor profile that forbids mount"
else
	hidden=()
	for f in solutions build/solutions .git tests/grader/samples; do
		[ -d "$kit/$f" ] && hidden+=("$kit/$f")
	done
	own_proc=(unshare --mount --propagation private --pid --fork --kill-child -- sh -c '
		mount -t proc -o hidepid=invisible proc /proc || exit 125
		while [ "$1" != -- ]; do
			mount -t tmpfs -o ro,size=4k,mode=755 hidden "$1" || exit 125
			shift
		done
		shift
		"$@"' own-proc "${hidden[@]}" --)
	if ! "${own_proc[@]}" true 2>/dev/null; then
		own_proc=()
		sandbox_missing="a mount over ${hidden[*]} (mount -t tmpfs in a mount namespace failed)"
		sandbox_cost="the students' code could read the kit's answers"
	fi
fi

# sandbox_refuse WHERE: nothing when the sandbox is whole here or the batch
# grades --unsafe (UNSAFE=1); else the one line that says what is missing
# WHERE, and status 1.
sandbox_refuse() {
	[ -n "$sandbox_missing" ] && [ "$unsafe" != 1 ] || return 0
	echo "cannot isolate the students' code $1: it lacks $sandbox_missing, so $sandbox_cost; or pass --unsafe to grade anyway (every report then says what was missing)"
	return 1
}

# within_own LIMIT RESOURCE: LIMIT, or this process's own hard limit of
# RESOURCE (prlimit's name: cpu, as, fsize, nproc) when that is lower. A
# limit is never asked past it: a grader that may not raise it (not root,
# as under Tango's autodriver, whose files are at most 100 MB) would have
# every run of the student's code refused by prlimit.
within_own() {
	local hard
	hard=$(prlimit --pid $$ "--$2" --output HARD --noheadings 2>/dev/null | tr -d ' ')
	case $hard in
	'' | *[!0-9]*) echo "$1" ;;
	*) echo $(($1 < hard ? $1 : hard)) ;;
	esac
}

# student_uid K: the uid of the batch's submission K.
student_uid() {
	echo $((uid_base + 1 + $1))
}

# as_student UID SECONDS CMD...: run CMD with the limits, for at most
# SECONDS (times the multiplier), as UID when root.
as_student() {
	local uid=$1 limit
	limit=$(rl_scaled "$2")
	shift 2
	if isolated; then
		timeout -k 5 "$limit" prlimit --cpu="$limit_cpu" --as="$limit_as" --fsize="$limit_fsize" \
			--nproc="$limit_nproc" --core=0 $memlock -- "${own_proc[@]}" \
			setpriv --reuid="$uid" --regid="$uid" \
			--clear-groups --no-new-privs -- "$@"
	else
		timeout -k 5 "$limit" prlimit --cpu="$limit_cpu" --as="$limit_as" --fsize="$limit_fsize" \
			--core=0 -- "$@"
	fi
}

# end_student UID: kill whatever UID left running (a backstop: each run has
# its PID namespace).
end_student() {
	isolated || return 0
	local i
	for i in $(seq 50); do
		pkill -KILL -U "$1" 2>/dev/null || return 0
		sleep 0.1
	done
}

# clean_student UID: once a submission is done, remove the files UID left in
# the shared temporary folders, where a submission of a later batch, which
# gets the same uid, would find them.
clean_student() {
	isolated || return 0
	find /tmp /var/tmp /dev/shm -xdev -user "$1" -delete 2>/dev/null
	return 0
}

# give_student UID PATH...: let UID own PATH (when root).
give_student() {
	local uid=$1
	shift
	isolated || return 0
	chown -R "$uid:$uid" "$@"
}

# own_folder UID DIR: DIR open to UID's group alone (when root), so that no
# other submission's uid can reach what is below it.
own_folder() {
	chmod 750 "$2"
	! isolated || chgrp "$1" "$2"
}

# guest_user: the grader runs as root in each User-Mode Linux guest, where
# it makes the students' uids and namespaces. As root here, each guest runs
# as a host user of its own (uid GRADE_UID_BASE - 1, no student's), and its
# root can write on this machine only what that user owns: the work folder
# and each submission's results. Not root here, the guest runs as you, and
# its root can write only what you can. The QEMU VM enforces its read-only
# root itself.
guest_as=()
guest_user() {
	if ! isolated; then
		guest_as=(--guest-root)
		return 0
	fi
	local uid=$((uid_base - 1))
	guest_as=(--host-uid "$uid")
	chown "$uid:$uid" "$work" "$batch" "$batch"/* # not the list of sources, root's
	chown root "$batch/list"
	chown "$uid" "$work"/*/ # the group stays the submission's (own_folder)
	chown -R "$uid:$uid" "$work"/*/results
	if ! setpriv --reuid="$uid" --regid="$uid" --clear-groups -- test -w "$work"; then
		echo "the results folder $out cannot be reached by the grader's guest user (uid $uid): make every folder above it traversable (mode 711 or 755)" >"$batch/infra.txt"
		return 1
	fi
}

# why_guest_failed LOG: the line of a guest's log that says why it failed
# (not the probe's progress line, which says nothing of an outcome).
why_guest_failed() {
	grep -E '^(uml-run|rxe-run|run-rdma|uml-probe|uml-kernel): ' "$1" | grep -v '^uml-probe: booting ' | tail -n 1 | grep . ||
		grep -v -e '^[[:space:]]*$' -e '^rdmalab-grade: --- ' "$1" | tail -n 1
}
