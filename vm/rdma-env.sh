# Shared by vm/guest-stage2, vm/run-rdma and vm/doctor (sourced, not run):
# find an RDMA device and export the variables every test and tool reads;
# make trace and make bench TRACE=1 also find the peer's (rl_peer_env).
#
#   RDMALAB_DEVICE     device name, e.g. rxe0
#   RDMALAB_IB_PORT    port number on that device (1)
#   RDMALAB_GID_INDEX  GID index to use (RoCE v2, IPv4-mapped preferred)
#   RDMALAB_ADDR       IPv4 address of that GID, for rdma_cm and TCP
#   RDMALAB_ENV        where we run: "vm" or "native"
#
# A variable the user has already set is kept.

rl_sysfs=${RDMALAB_SYSFS:-/sys/class/infiniband}

# Print the names of the devices that have an ACTIVE port, one per line.
rl_active_devices() {
	local dev
	for dev in "$rl_sysfs"/*; do
		[ -d "$dev/ports" ] || continue
		if grep -qs ACTIVE "$dev"/ports/*/state; then
			basename "$dev"
		fi
	done
}

# The commands that make a Soft-RoCE device on this machine, one a line,
# when its kernel has rdma_rxe (a module, loaded or not, or built in, as in
# the kit's own guest) and no device yet; nothing when it has none. SUDO
# goes before each ("sudo " or ""). The netdev: the default route's, else
# the first with a global IPv4 address.
rl_rxe_commands() {
	local nd
	if [ -d /sys/module/rdma_rxe ] || grep -qsw rxe_net_add /proc/kallsyms; then
		:
	elif modinfo rdma_rxe >/dev/null 2>&1; then
		echo "${1}modprobe -a crc32_generic rdma_rxe rdma_ucm"
	else
		return 0
	fi
	nd=$(ip -o route get 1.1.1.1 2>/dev/null | sed -n 's/.* dev \([^ ]*\).*/\1/p')
	[ -n "$nd" ] || nd=$(ip -o -4 addr show scope global 2>/dev/null | awk '{ print $2; exit }')
	echo "${1}rdma link add rxe0 type rxe netdev ${nd:-<your netdev>}"
}

# Score one GID table entry the way perftest prefers them: RoCE v2 over v1,
# IPv4-mapped over other IPv6, never link-local or empty. Sets rl_score.
# (Builtins only: this runs for every GID entry, and forks are slow in a VM.)
rl_gid_score() {
	local gid=$1 type=$2
	rl_score=0
	case $gid in
	"" | 0000:0000:0000:0000:0000:0000:0000:0000 | fe80:*) return ;;
	esac
	case $type in
	*v2*) rl_score=4 ;;
	*) rl_score=2 ;;
	esac
	case $gid in
	0000:0000:0000:0000:0000:ffff:*) rl_score=$((rl_score + 1)) ;;
	esac
}

# rl_pick_gid DEV PORT: print the best GID index on DEV's PORT, or nothing.
# Ties go to the lowest index.
rl_pick_gid() {
	local dir="$rl_sysfs/$1/ports/$2" best=-1 best_score=0 f i gid type
	# The table has hundreds of entries (rxe: 1024), mostly empty: one grep
	# reads them all, where a read per entry costs seconds in a guest.
	while IFS=: read -r f gid; do
		i=${f##*/}
		type=
		read -r type <"$dir/gid_attrs/types/$i" 2>/dev/null || true
		rl_gid_score "$gid" "$type"
		if [ "$rl_score" -gt "$best_score" ] ||
			{ [ "$rl_score" -eq "$best_score" ] && [ "$rl_score" -gt 0 ] && [ "$i" -lt "$best" ]; }; then
			best=$i
			best_score=$rl_score
		fi
	done < <(grep -H -v -x -e '' -e '0000:0000:0000:0000:0000:0000:0000:0000' "$dir"/gids/* 2>/dev/null)
	[ "$best" -ge 0 ] && echo "$best"
}

# rl_gid_ipv4 GID: print the IPv4 address of an IPv4-mapped GID.
rl_gid_ipv4() {
	local tail=${1#0000:0000:0000:0000:0000:ffff:}
	[ "$tail" != "$1" ] || return 1
	local hi=${tail%%:*} lo=${tail##*:}
	printf '%d.%d.%d.%d\n' $((0x${hi:0:2})) $((0x${hi:2:2})) $((0x${lo:0:2})) $((0x${lo:2:2}))
}

# rl_export_env: choose the device, port, GID and address and export them.
# Returns 1 with a message when there is no usable device.
rl_export_env() {
	local dev=${RDMALAB_DEVICE:-} port=${RDMALAB_IB_PORT:-1} gid
	if [ -z "$dev" ]; then
		dev=$(rl_active_devices | head -n 1)
	fi
	if [ -z "$dev" ] || [ ! -d "$rl_sysfs/$dev" ]; then
		echo "no active RDMA device${dev:+ named $dev}: run 'make doctor' to see how to get one" >&2
		return 1
	fi
	if [ -z "${RDMALAB_GID_INDEX:-}" ]; then
		RDMALAB_GID_INDEX=$(rl_pick_gid "$dev" "$port")
	fi
	if [ -z "$RDMALAB_GID_INDEX" ]; then
		echo "$dev port $port has no usable GID (no RoCE address configured): run 'make doctor'" >&2
		return 1
	fi
	if [ -z "${RDMALAB_ADDR:-}" ]; then
		read -r gid <"$rl_sysfs/$dev/ports/$port/gids/$RDMALAB_GID_INDEX"
		RDMALAB_ADDR=$(rl_gid_ipv4 "$gid") || RDMALAB_ADDR=
	fi
	export RDMALAB_DEVICE=$dev RDMALAB_IB_PORT=$port RDMALAB_GID_INDEX RDMALAB_ADDR
	export RDMALAB_ENV=${RDMALAB_ENV:-native}
}

# rl_peer_env: the variables of a peer on another active device than
# RDMALAB_DEVICE (the kit's guest started with --wire has rxe1), as
# NAME=VALUE words for env(1): RDMALAB_DEVICE, RDMALAB_GID_INDEX and
# RDMALAB_ADDR. Nothing when there is no other device; 1 when it has no
# usable GID.
rl_peer_env() {
	local other
	other=$(rl_active_devices | grep -vx "${RDMALAB_DEVICE:-}" | head -n 1)
	[ -n "$other" ] || return 0
	(
		unset RDMALAB_GID_INDEX RDMALAB_ADDR
		RDMALAB_DEVICE=$other
		rl_export_env && echo "RDMALAB_DEVICE=$RDMALAB_DEVICE RDMALAB_GID_INDEX=$RDMALAB_GID_INDEX RDMALAB_ADDR=$RDMALAB_ADDR"
	)
}
