# senders.sh: the kit's senders measured: Lab 4 under each wait, and the Lab 3 reference.
# A part of scripts/bench, which sources it: it uses that script's settings
# and functions.

# bench_lab4 MIB FILE WAIT: lab4 serve and lab4 send --wait WAIT, a row for
# lab4-WAIT; sets chunk to the message size it used (from "N bytes in C
# chunks"), or leaves it empty.
bench_lab4() {
	local start=$EPOCHREALTIME
	local mib=$1 file=$2 wait=$3 port out_line rc src spid re n c tgb egb hs ts xc tot cpu note wait_opt
	local method=lab4-$3 raw=$out/raw/lab4-$3-$mib-$run
	if [ ! -x "$lab4" ]; then
		failed "$method" "$mib" "lab4: not built (no ${lab4#"$kit"/}; run make)"
		return
	fi
	port=$(free_port)
	# lab4's --timeout bounds each wait for the peer: serve waits while the
	# sender hashes the whole file, and the sender while serve checks it.
	wait_opt=(--timeout "$(secs 30 1 "$mib")")
	timeout "$(secs 60 3 "$mib")" "$lab4" serve -p "$port" "${wait_opt[@]}" >"$raw-serve.log" 2>&1 &
	spid=$!
	if ! rl_wait_port "$port" "$spid" 10; then
		wait "$spid"
		failed "$method" "$mib" "lab4 serve exited with status $? before listening: $(tail -n 1 "$raw-serve.log")"
		return
	fi
	out_line=$({ time env "${client_env[@]}" timeout "$(secs 60 3 "$mib")" "$lab4" send -p "$port" "${wait_opt[@]}" --wait "$wait" \
		${BENCH_CHUNK:+--chunk "$BENCH_CHUNK"} "$RDMALAB_ADDR" "$file" 2>"$raw-send.err"; } 2>"$raw-send.time")
	rc=$?
	wait "$spid"
	src=$?
	printf '%s\n' "$out_line" >"$raw-send.log"
	re='^lab4: sent ([0-9]+) bytes in ([0-9]+) chunks?: hash ([0-9.]+) s, transfer ([0-9.]+) s, cpu ([0-9.]+) s, total ([0-9.]+) s, receiver good$'
	if [ "$rc" != 0 ] || [ "$src" != 0 ]; then
		failed "$method" "$mib" "lab4 failed: send status $rc, serve status $src: $(tail -n 1 "$raw-send.err" \
			"$raw-serve.log" | grep -v '^==>' | grep . | head -n 1)"
		return
	fi
	if [ "$(grep -c . "$raw-send.log")" != 1 ] || ! [[ $out_line =~ $re ]]; then
		failed "$method" "$mib" "lab4 send printed no 'lab4: sent N bytes in C chunks: ...' line (see $raw-send.log)"
		return
	fi
	n=${BASH_REMATCH[1]} c=${BASH_REMATCH[2]}
	if [ "$n" != $((mib * 1048576)) ] || [ "$c" = 0 ]; then
		failed "$method" "$mib" "lab4 send reports $n bytes in $c chunks for a file of $((mib * 1048576)) bytes"
		return
	fi
	cpu=$(cpu_seconds "$raw-send.time")
	awk -v b="$n" -v c="$c" -v h="${BASH_REMATCH[3]}" -v t="${BASH_REMATCH[4]}" -v x="${BASH_REMATCH[5]}" \
		-v s="${BASH_REMATCH[6]}" 'BEGIN {
		if (t <= 0 || s <= 0) exit 1
		printf "%.4f\t%.4f\t%.3f\t%.3f\t%.3f\t%.3f\t%d chunk%s\n", b * 8 / t / 1e9, b * 8 / s / 1e9, h, t, x, s, c, c == 1 ? "" : "s"
	}' >"$raw-row" || { failed "$method" "$mib" "lab4 send reports a transfer time of 0 s"; return; }
	IFS=$'\t' read -r tgb egb hs ts xc tot note <"$raw-row"
	row "$method" "$mib" "$tgb" "$egb" "$hs" "$ts" "$tot" "$cpu" "$xc" "$note"
	chunk=$(((n + c - 1) / c))
	echo "$prog: $mib MiB: $method $tgb Gb/s in the transfer phase (cpu ${xc} s), $egb end to end ($note; run $run of $repeat; $(took "$start"))"
}


# stamp_lines: each line of standard input with the time its first byte came.
# Perl takes whatever the pipe holds in one read and, as root, runs at
# real-time priority, so it stamps a line the moment it is written: on one
# CPU a bash loop (one read per byte, and its turn after the writer's) put
# the same 1 MiB Lab 3 transfer anywhere from 1.4 to 10 ms (measured in UML;
# 3.2 to 4.1 ms this way). Without perl's Time::HiRes, that bash loop.
stamp_lines() {
	if [ ${#stamper[@]} -eq 0 ]; then
		while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done
		return
	fi
	"${stamper[@]}" -MTime::HiRes=time -e '
		$| = 1; my ($buf, $t0) = ("", 0);
		while (sysread(STDIN, my $b, 65536)) {
			my $t = time; $t0 = $t if $buf eq ""; $buf .= $b;
			while ((my $i = index($buf, "\n")) >= 0) {
				printf "%.6f %s\n", $t0, substr($buf, 0, $i);
				$buf = substr($buf, $i + 1); $t0 = $t;
			}
		}
		printf "%.6f %s\n", $t0, $buf if $buf ne "";'
}

# pick_stamper: sets stamper to the command stamp_lines runs, or () for bash.
pick_stamper() {
	stamper=()
	perl -MTime::HiRes=time -e 1 2>/dev/null || return 0
	stamper=(perl)
	if [ "$(id -u)" = 0 ] && chrt -f 1 true 2>/dev/null; then
		stamper=(chrt -f 1 perl)
	fi
}

# bench_lab3 MIB FILE: the Lab 3 reference sender to the reference receiver,
# the whole file in one window. Its -vv lines, stamped as they come, give the
# phases: hashing (start to the "file:" line, less the program's start-up,
# timed on its own with -h just before) and the transfer (first WINDOW
# received to the last WINDOW_DONE sent).
bench_lab3() {
	local start=$EPOCHREALTIME
	local mib=$1 file=$2 port rpid rc t0 t1 startup tgb egb hs ts tot note
	local raw=$out/raw/lab3-$mib-$run
	if [ ! -x "$lab3" ]; then
		failed lab3 "$mib" "lab3: not built ($lab3 missing; run make)"
		return
	fi
	(umask 077 && head -c 32 /dev/urandom >"$work/secret")
	port=$(free_port)
	timeout "$(secs 60 3 "$mib")" "$receiver" --secret-file "$work/secret" --results "$work/results.jsonl" \
		--max-file-size "${mib}M" --max-window "${mib}M" --mem-budget "${mib}M" \
		--idle-timeout "$(secs 60 2 "$mib")s" -p "$port" "$RDMALAB_ADDR" >"$raw-receiver.log" 2>&1 &
	rpid=$!
	if ! rl_wait_port "$port" "$rpid" 10; then
		wait "$rpid"
		failed lab3 "$mib" "the receiver exited with status $?: $(tail -n 1 "$raw-receiver.log")"
		return
	fi
	t0=$EPOCHREALTIME
	timeout "$(secs 60 0 0)" "$lab3" -h >/dev/null 2>&1
	t1=$EPOCHREALTIME
	startup=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
	t0=$EPOCHREALTIME
	# Its own --timeout (each wait for the receiver, which hashes the whole
	# file at once) grows with the file; the outer one catches a hang.
	{ time env "${client_env[@]}" timeout "$(secs 60 3 "$mib")" "$lab3" -vv --server "$RDMALAB_ADDR:$port" --file "$file" --id bench \
		--timeout "$(awk -v t="$(secs 60 1 "$mib")" 'BEGIN { print (t > 3600 ? 3600 : t) }')" 2>&1; } \
		2>"$raw-sender.time" | stamp_lines >"$raw-sender.log"
	rc=${PIPESTATUS[0]}
	t1=$EPOCHREALTIME
	kill "$rpid" 2>/dev/null
	wait "$rpid" 2>/dev/null
	if [ "$rc" != 0 ] || ! grep -q ' key: ' "$raw-sender.log"; then
		failed lab3 "$mib" "lab3 failed with status $rc (see $raw-sender.log): $(tail -n 1 "$raw-sender.log" | cut -d' ' -f2-)"
		return
	fi
	awk -v b=$((mib * 1048576)) -v t0="$t0" -v t1="$t1" -v up="$startup" '
		$2 == "file:" && !h { h = $1 }
		/received WINDOW / && !w0 { w0 = $1 }
		/sending WINDOW_DONE/ { w1 = $1; n++ }
		END {
			if (!h || !w0 || !w1 || w1 <= w0) exit 1
			printf "%.4f\t%.4f\t%.3f\t%.3f\t%.3f\t%d window%s\n", b * 8 / (w1 - w0) / 1e9,
				b * 8 / (t1 - t0) / 1e9, (h - t0 > up ? h - t0 - up : 0), w1 - w0, t1 - t0, n, n == 1 ? "" : "s"
		}' "$raw-sender.log" >"$raw-row" ||
		{ failed lab3 "$mib" "lab3: no WINDOW / WINDOW_DONE lines to time (see $raw-sender.log)"; return; }
	IFS=$'\t' read -r tgb egb hs ts tot note <"$raw-row"
	row lab3 "$mib" "$tgb" "$egb" "$hs" "$ts" "$tot" "$(cpu_seconds "$raw-sender.time")" '' "$note"
	echo "$prog: $mib MiB: lab3 $tgb Gb/s in the transfer phase, $egb end to end ($(took "$start"))"
}
