# report.sh: bench report: the table, the CSV, the targets and the plot.
# A part of scripts/bench, which sources it: it uses that script's settings
# and functions.

# ---------------------------------------------------------------------------
# report: the table, DIR/bench.csv, the target lines and DIR/bench.png, from
# DIR/results.tsv, DIR/sizes, DIR/env and DIR/load. Exit 1 when a
# measurement is missing.

# where DIR: one line naming the backend, the device and the host's load.
where() {
	local dir=$1 env dev n before after
	read -r env dev <"$dir/env" 2>/dev/null || env='?'
	IFS=$'\t' read -r n before after <"$dir/load" 2>/dev/null || n=0
	if [ "${n:-0}" -gt 0 ]; then
		printf 'on %s (device %s), host loaded: BENCH_LOAD=%s, %s CPU-bound host processes ran throughout; load average %s before, %s after\n' \
			"$env" "${dev:-?}" "$n" "$n" "${before:-?}" "${after:-?}"
	else
		printf 'on %s (device %s), no load added (BENCH_LOAD=0); host load average %s before, %s after\n' \
			"$env" "${dev:-?}" "${before:-?}" "${after:-?}"
	fi
}

# traced_figures DIR: DIR/trace.tsv, a line "method, MiB, packets per MiB
# on the wire, retransmissions" for each round captured with TRACE=1
# (DIR/trace/METHOD-MIB.pcap), as scripts/trace-decode counts them; nothing
# without. Per MiB of the IP bytes captured, not of the file: ib_write_bw
# moves its buffer many times, and a capture that lost packets under load
# lost their bytes too.
traced_figures() {
	local dir=$1 pcap name line packets bytes retrans
	: >"$dir/trace.tsv"
	[ -d "$dir/trace" ] || return 0
	echo "$prog: TRACE=1: the first round of each sender was captured (headers only) in $dir/trace/; decoding them (tshark)"
	for pcap in "$dir"/trace/*.pcap; do
		[ -f "$pcap" ] || continue
		name=${pcap##*/}
		name=${name%.pcap}
		line=$("$kit/scripts/trace-decode" --summary "$pcap")
		packets=$(sed -n 's/^summary: \([0-9]*\) packets, \([0-9]*\) bytes.*/\1/p' <<<"$line")
		bytes=$(sed -n 's/^summary: \([0-9]*\) packets, \([0-9]*\) bytes.*/\2/p' <<<"$line")
		retrans=$(sed -n 's/.*retransmissions seen \([0-9]*\).*/\1/p' <<<"$line")
		[ "${bytes:-0}" -gt 0 ] || continue
		printf '%s\t%s\t%s\t%s\n' "${name%-*}" "${name##*-}" \
			"$(awk -v p="$packets" -v b="$bytes" 'BEGIN { printf "%.0f", p / (b / 1048576) }')" "${retrans:-0}" >>"$dir/trace.tsv"
	done
}

cmd_report() {
	local dir=${1:-} status
	[ -f "$dir/sizes" ] || die "report: $dir/sizes not found: run scripts/bench first"
	rm -rf "$dir/plot"
	mkdir -p "$dir/plot" || die "report: cannot create $dir/plot"
	touch "$dir/results.tsv" "$dir/latency.tsv"
	echo "$prog: $(where "$dir")"
	traced_figures "$dir"
	awk -F'\t' -v sizes="$(cat "$dir/sizes")" -v methods="$methods" -v csv="$dir/bench.csv" \
		-v plotdir="$dir/plot" -v latency="$dir/latency.tsv" -v tpct="$target_pct" -v tmin="$target_min_mib" \
		-v tm="$target_method" -v traces="$dir/trace.tsv" '
	function fmt(v, p) { return v == "" ? "-" : sprintf("%.*f", p, v) }
	# A (method, size) can have several runs: its row is the median run by
	# transfer Gb/s (the lower one of an even count), and one failed run
	# fails it. Fields: 3 transfer Gb/s, 4 end-to-end Gb/s, 5 hash s,
	# 6 transfer s, 7 total s, 8 cpu s, 9 transfer cpu s, 10 note.
	{
		k = $1 SUBSEP $2; seen[k] = 1
		if ($3 == "") { failed[k]++; why[k] = $10; next }
		n = ++runs[k]
		for (i = 3; i <= 10; i++) all[k, n, i] = $i
	}
	END {
		# TRACE=1: the packets per MiB and the retransmissions of the round captured.
		while ((getline tl <traces) > 0)
			if (split(tl, tf, "\t") == 4) { pkts[tf[1], tf[2]] = tf[3]; rtx[tf[1], tf[2]] = tf[4]; traced = 1 }
		for (k in runs) {
			n = runs[k]
			for (i = 1; i <= n; i++) order[i] = i
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && all[k, order[j - 1], 3] + 0 > all[k, order[j], 3] + 0; j--) {
					t = order[j]; order[j] = order[j - 1]; order[j - 1] = t
				}
			mid = order[int((n + 1) / 2)]
			for (i = 3; i <= 10; i++) r[k, i] = all[k, mid, i]
			if (n > 1)
				r[k, 10] = r[k, 10] sprintf("; median of %d runs, %.3f to %.3f Gb/s", n,
					all[k, order[1], 3], all[k, order[n], 3])
		}
		for (k in failed) {
			for (i = 3; i <= 9; i++) r[k, i] = ""
			r[k, 10] = why[k] (failed[k] + runs[k] > 1 ? sprintf(" (%d of %d runs failed)", failed[k],
				failed[k] + runs[k]) : "")
		}
		ns = split(sizes, sz, " "); nm = split(methods, m, " ")
		bad = 0
		print "method,size_mib,transfer_gbps,end_to_end_gbps,ratio_to_ib_write_bw,hash_s,transfer_s,total_s,cpu_s,transfer_cpu_s,note,packets_per_mib,retransmissions" >csv
		printf "%-13s %8s %13s%s %15s %6s %7s %10s %8s %6s %10s  %s\n", "method", "size MiB", "transfer Gb/s",
			traced ? "  pkts/MiB retrans" : "", "end-to-end Gb/s", "ratio", "hash s", "transfer s", "total s", "cpu s",
			"xfer cpu s", "note"
		for (i = 1; i <= ns; i++) {
			s = sz[i]; bw = r["ib_write_bw", s, 3]
			for (j = 1; j <= nm; j++) {
				k = m[j]; tr = r[k, s, 3]; note = r[k, s, 10]
				if (!seen[k, s]) note = "no result: the run stopped before it (see the messages above)"
				if (tr == "") bad++
				ratio = (tr != "" && bw != "") ? sprintf("%.3f", tr / bw) : ""
				ppm = (k, s) in pkts ? pkts[k, s] : ""
				printf "%-13s %8d %13s%s %15s %6s %7s %10s %8s %6s %10s  %s\n", k, s, fmt(tr, 3),
					traced ? sprintf("  %8s %7s", ppm == "" ? "-" : ppm, (k, s) in rtx ? rtx[k, s] : "-") : "",
					fmt(r[k, s, 4], 3), ratio == "" ? "-" : ratio, fmt(r[k, s, 5], 2), fmt(r[k, s, 6], 2),
					fmt(r[k, s, 7], 2), fmt(r[k, s, 8], 2), fmt(r[k, s, 9], 2), note
				gsub(/"/, "\"\"", note)
				printf "%s,%d,%s,%s,%s,%s,%s,%s,%s,%s,\"%s\",%s,%s\n", k, s, tr, r[k, s, 4], ratio, r[k, s, 5], r[k, s, 6],
					r[k, s, 7], r[k, s, 8], r[k, s, 9], note, ppm, rtx[k, s] >csv
				if (tr != "")
					printf "%d %s %s\n", s, tr, (r[k, s, 4] == "" ? "NaN" : r[k, s, 4]) >(plotdir "/" k ".dat")
			}
		}
		print ""
		if ((getline lat <latency) > 0 && split(lat, l, "\t") == 2 && l[1] ~ /^[0-9.]+$/ && l[2] ~ /^[0-9.]+$/)
			printf "ib_write_lat, 64 B, 1000 iterations: %s usec typical, %s usec average\n", l[1], l[2]
		else if (lat == "uncalibrated")
			print "ib_write_lat: no figure: perftest could not time its CPU clock in 6 tries (r^2 < 0.9, a busy host); rerun make bench on an idle machine for it"
		else {
			print "ib_write_lat: no result (see the messages above)"
			bad++
		}
		for (i = 1; i <= ns; i++) {
			s = sz[i]; tr = r[tm, s, 3]; bw = r["ib_write_bw", s, 3]
			if (s < tmin)
				continue
			if (tr == "" || bw == "")
				printf "target: %s transfer at %d MiB: not measured (%s): NOT met\n", tm, s,
					tr == "" ? (seen[tm, s] ? r[tm, s, 10] : "no result") : "no ib_write_bw figure"
			else
				printf "target: %s transfer reaches %.1f%% of ib_write_bw at %d MiB (target %d%%): %s\n",
					tm, 100 * tr / bw, s, tpct, (100 * tr / bw >= tpct ? "met" : "NOT met")
		}
		# The pipelined sender is at least as fast as Lab 3 at every size.
		behind = ""; list = ""
		for (i = 1; i <= ns; i++) {
			s = sz[i]; tr = r[tm, s, 3]; l3 = r["lab3", s, 3]
			if (tr == "" || l3 == "") { behind = behind " " s " MiB (not measured)"; continue }
			list = list sprintf("%s%d MiB %.2fx", list == "" ? "" : ", ", s, tr / l3)
			if (tr + 0 < l3 + 0) behind = behind " " s " MiB"
		}
		printf "target: %s transfer at least lab3%s at every size: %s%s\n", tm, "\047s",
			behind == "" ? "met" : "NOT met, behind at" behind, list == "" ? "" : " (" list ")"
		exit (bad > 0)
	}' "$dir/results.tsv"
	status=$?
	datagrams_report "$dir" || status=1
	plot "$dir" || status=1
	echo
	echo "$prog: table in $dir/bench.csv, plot in $dir/bench.png, each tool's output in $dir/raw/"
	if [ "$status" = 0 ] && grep -qx uncalibrated "$dir/latency.tsv"; then
		echo "$prog: every measurement ran; ib_write_lat without a figure (perftest's clock, above)"
	elif [ "$status" = 0 ]; then
		echo "$prog: every measurement ran"
	else
		echo "$prog: FAILED: not every measurement ran; the rows without figures say why" >&2
	fi
	return "$status"
}

# plot DIR: throughput against file size, one line per method, from the
# per-method data files the report wrote.
plot() {
	local dir=$1 plots=() f name color load
	command -v gnuplot >/dev/null || { echo "$prog: gnuplot not found: run make deps" >&2; return 1; }
	for name in $methods; do
		f=$dir/plot/$name.dat
		[ -s "$f" ] || continue
		case $name in
		lab3) color='#1f77b4' ;;
		lab4-busy) color='#ff7f0e' ;;
		lab4-event) color='#9467bd' ;;
		lab4-adaptive) color='#d62728' ;;
		*) color='#2ca02c' ;;
		esac
		plots+=("'$f' using 1:2 with linespoints lw 2 lc rgb '$color' title '$name, transfer phase'")
		case $name in lab3 | "$target_method")
			plots+=("'$f' using 1:3 with linespoints lw 2 dashtype 2 lc rgb '$color' title '$name, end to end'") ;;
		esac
	done
	[ ${#plots[@]} -gt 0 ] || { echo "$prog: nothing to plot: no measurement ran" >&2; return 1; }
	load=$(cut -f1 "$dir/load" 2>/dev/null)
	local IFS=,
	gnuplot -e "
		set terminal pngcairo size 960,600 noenhanced;
		set output '$dir/bench.png';
		set title 'RDMA WRITE throughput, $(cat "$dir/env" 2>/dev/null || echo '?'), $(
			[ "${load:-0}" -gt 0 ] && echo "BENCH_LOAD=$load" || echo 'no load added'), one run$(
			[ "$(cat "$dir/repeat" 2>/dev/null || echo 1)" -gt 1 ] && echo " (medians of $(cat "$dir/repeat") rounds)")';
		set xlabel 'file size (MiB)'; set ylabel 'Gb/s (10^9 bit/s)';
		set logscale x 2; set offsets graph 0.03, graph 0.03, 0, 0; set yrange [0:*];
		set grid; set key outside bottom center horizontal;
		plot ${plots[*]}" 2>"$dir/plot/gnuplot.log" ||
		{ echo "$prog: gnuplot failed: $(tail -n 1 "$dir/plot/gnuplot.log")" >&2; return 1; }
}
