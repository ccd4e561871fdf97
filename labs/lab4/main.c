/*
 * main.c: lab4, fast transfers and EFA-style addressing (docs/lab4.md).
 *   lab4 serve   receive one file through RDMA writes with immediate
 *   lab4 send    send one file, pipelined, and time it
 *   lab4 ud-pong / ud-ping   UD datagrams addressed by AH + QPN + Q_Key
 */
#define _GNU_SOURCE /* SCHED_IDLE */
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "lab4.h"

/* What the command line asks for, besides the options every program shares. */
struct lab4_opts {
	const char *cmd;
	const char *addr; /* the peer (send, ud-ping) or where to listen (serve, ud-pong) */
	const char *file;
	uint32_t window;
	uint32_t chunk;
	uint32_t signal_every;
	uint32_t count; /* ud-ping: datagrams */
	uint32_t size;  /* ud-ping: bytes each, 0: the MTU */
	int timeout_ms;
	enum lab4_wait wait; /* send: how to wait for completions */
	uint32_t spin_us;    /* send, adaptive wait: how long to poll before sleeping */
	enum lab4_transport transport;
	bool fault_bad_hash; /* send: announce a wrong hash (tests the "receiver bad" path) */
	bool verify;         /* serve: hash the buffer again here, outside the lab's steps */
	struct rl_args common;
};

static void lab4_usage(FILE *out, const char *prog)
{
	rl_usage(out, prog, "COMMAND ...");
	fprintf(out,
		"Commands:\n"
		"  serve [--verify] [ADDRESS]\n"
		"                           receive one file on ADDRESS (default RDMALAB_ADDR) port -p;\n"
		"                           --verify: also print the SHA-256 of the bytes received\n"
		"  send [--window N] [--chunk BYTES] [--signal-every K] [--wait HOW] [--spin-us US]\n"
		"       ADDRESS FILE        send FILE; defaults: window %d, chunk %u (smaller for a file\n"
		"                           under %d chunks), signal every %d;\n"
		"                           HOW: busy, event or adaptive (default: poll US, %d, then sleep)\n"
		"  ud-pong [ADDRESS]        echo UD datagrams to one ud-ping\n"
		"  ud-ping [--count N] [--size BYTES] ADDRESS\n"
		"                           send N datagrams (default 100) of BYTES (default: the MTU)\n"
		"Options of every command:\n"
		"  --timeout SECONDS        longest wait for the peer at any point (default %d)\n"
		"  --transport rc|srd       SRD needs AWS EFA and a LAB4_SRD=1 build (docs/efa.md)\n"
		"BYTES take a K, M or G suffix (powers of 2). Exit 0 on success, else 1 with one line.\n",
		LAB4_DEFAULT_WINDOW, LAB4_DEFAULT_CHUNK, LAB4_MIN_CHUNKS, LAB4_DEFAULT_SIGNAL,
		LAB4_SPIN_BUDGET_US, LAB4_TIMEOUT_MS / 1000);
}

/* The value of option NAME at ARGV[*I] ("--name V" or "--name=V"), or NULL if it is not NAME. */
static const char *lab4_take_opt(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n) != 0)
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		rl_err("%s needs a value (run with -h for the list)", name);
		exit(EXIT_FAILURE);
	}
	return argv[++*i];
}

/* Parse S ("4096", "64K", "1M") as a number from MIN to MAX into *OUT, or say what is wrong. */
static int lab4_parse_size(const char *opt, const char *s, uint64_t min, uint64_t max,
			   uint32_t *out)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(s, &end, 10);
	if (*end == 'K' || *end == 'k')
		n <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		n <<= 20, end++;
	else if (*end == 'G' || *end == 'g')
		n <<= 30, end++;
	if (!*s || *s == '-' || *end || errno || n < min || n > max) {
		rl_err("%s takes a number from %llu to %llu, not '%s'", opt,
		       (unsigned long long)min, (unsigned long long)max, s);
		return -EINVAL;
	}
	*out = (uint32_t)n;
	return 0;
}

/* Our options out of ARGV, the rest (shared options and operands) to rl_parse_args(). */
static int lab4_parse_opts(int argc, char **argv, struct lab4_opts *o, char **rest, int *nrest)
{
	uint32_t secs = LAB4_TIMEOUT_MS / 1000;
	const char *v;
	int i, ret = 0;

	for (i = 0; i < argc && !ret; i++) {
		if (i == 0 || !(argv[i][0] == '-' && argv[i][1] == '-'))
			rest[(*nrest)++] = argv[i];
		else if ((v = lab4_take_opt(argc, argv, &i, "--window")))
			ret = lab4_parse_size("--window", v, 1, LAB4_MAX_WINDOW, &o->window);
		else if ((v = lab4_take_opt(argc, argv, &i, "--chunk")))
			ret = lab4_parse_size("--chunk", v, 1, LAB4_MAX_CHUNK, &o->chunk);
		else if ((v = lab4_take_opt(argc, argv, &i, "--signal-every")))
			ret = lab4_parse_size("--signal-every", v, 1, 1U << 20, &o->signal_every);
		else if ((v = lab4_take_opt(argc, argv, &i, "--wait")))
			ret = lab4_wait_parse(v, &o->wait);
		else if ((v = lab4_take_opt(argc, argv, &i, "--spin-us")))
			ret = lab4_parse_size("--spin-us", v, 0, 10000000, &o->spin_us);
		else if ((v = lab4_take_opt(argc, argv, &i, "--count")))
			ret = lab4_parse_size("--count", v, 1, 1U << 24, &o->count);
		else if ((v = lab4_take_opt(argc, argv, &i, "--size")))
			ret = lab4_parse_size("--size", v, 4, 1U << 16, &o->size);
		else if ((v = lab4_take_opt(argc, argv, &i, "--timeout")))
			ret = lab4_parse_size("--timeout", v, 1, 3600, &secs);
		else if ((v = lab4_take_opt(argc, argv, &i, "--transport"))) {
			if (!strcmp(v, "rc") || !strcmp(v, "srd")) {
				o->transport = !strcmp(v, "srd") ? LAB4_SRD : LAB4_RC;
			} else {
				rl_err("--transport takes rc or srd, not '%s'", v);
				ret = -EINVAL;
			}
		} else if (!strcmp(argv[i], "--fault-bad-hash"))
			o->fault_bad_hash = true;
		else if (!strcmp(argv[i], "--verify"))
			o->verify = true;
		else
			rest[(*nrest)++] = argv[i];
	}
	o->timeout_ms = (int)secs * 1000;
	return ret;
}

/* Parse ARGV: the command first, then our options and the shared ones in any order. */
static int lab4_parse(int argc, char **argv, struct lab4_opts *o)
{
	char **rest = calloc(argc + 1, sizeof(*rest));
	int nrest = 0, ret = -EINVAL;

	if (!rest)
		return -ENOMEM;
	o->window = LAB4_DEFAULT_WINDOW;
	o->chunk = 0; /* none given: lab4_pick_chunk() */
	o->signal_every = LAB4_DEFAULT_SIGNAL;
	o->wait = LAB4_WAIT_ADAPTIVE;
	o->spin_us = LAB4_SPIN_BUDGET_US;
	o->count = 100;
	if (argc > 1 && argv[1][0] != '-') {
		o->cmd = argv[1];
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	if (lab4_parse_opts(argc, argv, o, rest, &nrest))
		goto out;
	ret = rl_parse_args(nrest, rest, &o->common);
	if (ret || o->common.help)
		goto out;
	rl_log_set_level(o->common.verbose);
	ret = -EINVAL;
	o->addr = o->common.addr;
	if (!o->cmd) {
		rl_err("no command: give serve, send, ud-pong or ud-ping (run with -h for help)");
	} else if (!strcmp(o->cmd, "send")) {
		/* "send FILE" with RDMALAB_ADDR set: the one operand is the file. */
		if (o->common.nrest == 1) {
			o->file = o->common.rest[0];
		} else if (o->common.nrest == 0 && o->common.addr_given) {
			o->file = o->common.addr;
			o->addr = getenv("RDMALAB_ADDR");
		}
		if (!o->file || !o->addr)
			rl_err("send needs ADDRESS and FILE: lab4 send [options] ADDRESS FILE");
		else
			ret = 0;
	} else if (!strcmp(o->cmd, "serve") || !strcmp(o->cmd, "ud-pong") ||
		   !strcmp(o->cmd, "ud-ping")) {
		if (o->common.nrest > 0)
			rl_err("%s: one address at most, not '%s' too", o->cmd, o->common.rest[0]);
		else if (!strcmp(o->cmd, "ud-ping") && !o->addr)
			rl_err("ud-ping needs the ADDRESS of ud-pong (or RDMALAB_ADDR)");
		else
			ret = 0;
	} else {
		rl_err("unknown command '%s': serve, send, ud-pong or ud-ping", o->cmd);
	}
out:
	free(rest);
	return ret;
}

static double lab4_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The CPU time this process has used so far, user and system, in seconds. */
static double lab4_cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* The device and GID index the options (or the environment) name. */
static struct ibv_context *lab4_open(const struct lab4_opts *o, int *gid_index)
{
	struct ibv_context *ctx;

	/*
	 * Your steps run from here on, as they run in the tests: with no
	 * executable memory, no exec and no ptrace (framework/lockdown.c).
	 * Before the device opens: a process whose credentials change after
	 * it opened one may not use it.
	 */
	if (rl_lockdown())
		return NULL;
	ctx = rl_open_device(o->common.dev);
	if (!ctx)
		return NULL;
	*gid_index = rl_choose_gid_index(ctx, (uint8_t)o->common.ib_port, o->common.gid_index);
	/* RC runs on every device: only SRD needs step 4's check. */
	if (*gid_index < 0 ||
	    (o->transport != LAB4_RC && lab4_check_transport(ctx, o->transport))) {
		ibv_close_device(ctx);
		return NULL;
	}
	return ctx;
}

/* Why a HELLO cannot be served, as an errno for ACCEPT's status; 0 if it can. */
static int lab4_refusal(const struct lab4_hello *h)
{
	if (h->transport != LAB4_RC && h->transport != LAB4_SRD)
		return EPROTO;
	if (h->chunk == 0 || h->chunk > LAB4_MAX_CHUNK)
		return EINVAL;
	if (h->size > LAB4_MAX_FILE)
		return EFBIG;
	return 0;
}

/*
 * Receive and hash only when no other work wants the CPU (SCHED_IDLE). With
 * a CPU to spare this changes nothing; where the hash and rxe's work share
 * one CPU (User-Mode Linux), the transfer goes first and the hash takes the
 * gaps (docs/lab4.md#speed). Every chunk's receive is posted before the
 * first write (LAB4_RECV_DEPTH), so the receiver has nothing urgent to do.
 */
static void lab4_yield_to_the_transfer(void)
{
	struct sched_param param = { .sched_priority = 0 };

	if (sched_setscheduler(0, SCHED_IDLE, &param))
		rl_info("sched_setscheduler SCHED_IDLE: %s (the hash competes with the transfer)",
			strerror(errno));
}

/*
 * serve --verify: the SHA-256 of the bytes in R's buffer, computed here and
 * not by the lab's steps, so that a test can check what really arrived.
 */
static int lab4_verify(const struct lab4_receiver *r)
{
	uint8_t sha256[32];
	char hex[65];

	if (!EVP_Digest(r->size ? r->buf : (const uint8_t *)"", (size_t)r->size, sha256, NULL,
			EVP_sha256(), NULL)) {
		rl_err("EVP_Digest of the buffer received failed");
		return -1;
	}
	lab4_sha256_hex(sha256, hex);
	printf("lab4: verified SHA-256 %s of the bytes in the buffer\n", hex);
	return 0;
}

/* serve: one sender, one file, one verdict. */
static int lab4_serve(const struct lab4_opts *o)
{
	uint8_t port = (uint8_t)o->common.ib_port;
	struct lab4_receiver r = { 0 };
	struct lab4_accept acc = { 0 };
	struct lab4_result res = { 0 };
	struct lab4_hello h;
	struct ibv_context *ctx;
	int gid_index, lfd, fd = -1, ret = -1;
	char hex[65];

	ctx = lab4_open(o, &gid_index);
	if (!ctx)
		return -1;
	lfd = rl_oob_listen(o->addr, o->common.port, NULL);
	if (lfd < 0)
		goto clean_ctx;
	rl_info("listening on %s:%u", o->addr ? o->addr : "*", o->common.port);
	fd = rl_oob_accept(lfd, o->timeout_ms);
	close(lfd);
	if (fd < 0)
		goto clean_ctx;
	if (lab4_recv_hello(fd, &h, o->timeout_ms))
		goto clean_fd;
	acc.status = (uint16_t)lab4_refusal(&h);
	if (!acc.status && h.transport != o->transport)
		acc.status = EOPNOTSUPP;
	if (acc.status) {
		rl_err("refusing the sender: %s (%llu bytes, chunk %u, %s)", strerror(acc.status),
		       (unsigned long long)h.size, h.chunk,
		       lab4_transport_name((enum lab4_transport)h.transport));
		lab4_send_accept(fd, &acc, o->timeout_ms);
		goto clean_fd;
	}
	if (lab4_receiver_open(&r, ctx, h.size, h.chunk, h.sha256, o->transport))
		goto clean_fd;
	r.watch_fd = fd;
	r.timeout_ms = o->timeout_ms;
	/* RTR and receives before ACCEPT goes out: the sender writes as soon as it has it. */
	if (lab4_receiver_connect(&r, port, gid_index, o->transport, &h.dest) ||
	    rl_qp_local_dest(r.qp, port, gid_index, 0, &acc.dest))
		goto clean_r;
	acc.qkey = LAB4_QKEY;
	acc.addr = (uintptr_t)r.buf;
	acc.rkey = r.mr ? r.mr->rkey : 0;
	acc.credits = r.recv_depth;
	if (lab4_send_accept(fd, &acc, o->timeout_ms))
		goto clean_r;
	lab4_yield_to_the_transfer();
	if (lab4_receive_file(&r))
		goto clean_r;
	res.good = r.good;
	res.received = (uint64_t)r.size;
	memcpy(res.sha256, r.sha256, sizeof(res.sha256));
	lab4_send_result(fd, &res, o->timeout_ms);
	lab4_sha256_hex(r.sha256, hex);
	printf("lab4: received %llu bytes in %u chunks: SHA-256 %s, %s\n",
	       (unsigned long long)r.size, r.nchunks, hex, r.good ? "good" : "BAD");
	ret = r.good ? 0 : -1;
	if (o->verify && lab4_verify(&r))
		ret = -1;
clean_r:
	lab4_receiver_close(&r);
clean_fd:
	close(fd);
clean_ctx:
	ibv_close_device(ctx);
	return ret;
}

/* Connect S to the receiver on FD: HELLO out, ACCEPT in, QP to RTS. */
static int lab4_handshake(const struct lab4_opts *o, struct lab4_sender *s,
			  const struct lab4_file *f, int fd, int gid_index)
{
	uint8_t port = (uint8_t)o->common.ib_port;
	struct lab4_hello h = { .transport = o->transport, .size = f->size, .chunk = s->chunk };
	struct lab4_accept acc;
	int ret;

	memcpy(h.sha256, f->sha256, sizeof(h.sha256));
	if (o->fault_bad_hash)
		h.sha256[0] ^= 0xff;
	ret = rl_qp_local_dest(s->qp, port, gid_index, 0, &h.dest);
	if (!ret)
		ret = lab4_send_hello(fd, &h, o->timeout_ms);
	if (!ret)
		ret = lab4_recv_accept(fd, &acc, o->timeout_ms);
	if (ret)
		return ret;
	if (acc.status) {
		rl_err("the receiver refused the transfer: %s", strerror(acc.status));
		return -acc.status;
	}
	ret = lab4_qp_connect(s->qp, port, gid_index, o->transport, &acc.dest);
	if (ret)
		return ret;
	if (o->transport == LAB4_SRD) {
		s->ah = lab4_ud_make_ah(s->pd, port, gid_index, &acc.dest.gid);
		if (!s->ah)
			return -EIO;
		s->remote_qpn = acc.dest.qpn;
	}
	s->remote_addr = acc.addr;
	s->rkey = acc.rkey;
	if (s->window > acc.credits)
		s->window = acc.credits;
	return 0;
}

/* send: hash, connect, pipeline, verdict, one line. */
static int lab4_send(const struct lab4_opts *o)
{
	double start = lab4_seconds(), hashed, t0, t1, cpu0, cpu1;
	struct lab4_sender s;
	struct lab4_result res;
	struct lab4_file f;
	struct ibv_context *ctx;
	int gid_index, fd, ret = -1;

	if (lab4_open_file(&f, o->file))
		return -1;
	if (lab4_hash_file(&f))
		goto clean_file;
	hashed = lab4_seconds();
	ctx = lab4_open(o, &gid_index);
	if (!ctx)
		goto clean_file;
	if (lab4_sender_open(&s, ctx, &f, o->transport))
		goto clean_ctx;
	s.chunk = o->chunk ? o->chunk : lab4_pick_chunk(f.size);
	s.nchunks = lab4_nchunks(f.size, s.chunk);
	s.window = o->window;
	s.signal_every = o->signal_every;
	s.timeout_ms = o->timeout_ms;
	s.wait = o->wait;
	s.spin_us = o->spin_us;
	s.post = lab4_post_chunk;
	fd = rl_oob_connect(o->addr, o->common.port, o->timeout_ms);
	if (fd < 0)
		goto clean_s;
	if (lab4_handshake(o, &s, &f, fd, gid_index))
		goto clean_fd;
	rl_info("sending %llu bytes in %u chunks of %u, window %u, signal every %u, %s wait "
		"(spin %u us)",
		(unsigned long long)f.size, s.nchunks, s.chunk, s.window, s.signal_every,
		lab4_wait_name(s.wait), s.spin_us);
	if (lab4_warm_up(&s))
		goto clean_fd;
	cpu0 = lab4_cpu_seconds();
	t0 = lab4_seconds();
	if (lab4_pipeline(&s))
		goto clean_fd;
	t1 = lab4_seconds();
	cpu1 = lab4_cpu_seconds();
	if (lab4_recv_result(fd, &res, o->timeout_ms))
		goto clean_fd;
	printf("lab4: sent %llu bytes in %u chunks: hash %.6f s, transfer %.6f s, cpu %.6f s, "
	       "total %.6f s, receiver %s\n",
	       (unsigned long long)f.size, s.nchunks, hashed - start, t1 - t0, cpu1 - cpu0,
	       lab4_seconds() - start, res.good ? "good" : "bad");
	ret = res.good ? 0 : -1;
clean_fd:
	close(fd);
clean_s:
	lab4_sender_close(&s);
clean_ctx:
	ibv_close_device(ctx);
clean_file:
	lab4_close_file(&f);
	return ret;
}

/*
 * UD ping and pong. UD has no acknowledgements: a datagram that is lost, or
 * that finds no receive posted, is gone without a word to either side. So
 * ping numbers its datagrams (the first 4 bytes, big-endian) and sends one
 * again when its echo is not back within LAB4_UD_RESEND_MS, at most
 * LAB4_UD_TRIES times; echoes of an earlier number (a datagram sent twice,
 * echoed twice) are dropped. Pong echoes until ping closes the TCP
 * connection. And a send is the NIC's until its completion: each one is
 * waited for before the send slot is reused and before the QP is destroyed
 * (a pong that returned right after posting its last echo lost it).
 */

/* Polls CQ (of WHAT) for one completion for at most MS ms: 1, 0 (none), or -EIO. */
static int lab4_ud_poll(struct ibv_cq *cq, const char *what, struct ibv_wc *wc, int ms)
{
	int64_t deadline = lab4_now_ms() + ms;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			return rl_fail("ibv_poll_cq", EIO, "UD CQ");
		if (n > 0 && wc->status != IBV_WC_SUCCESS)
			return rl_fail_wc(what, wc);
		if (n > 0)
			return 1;
	} while (lab4_now_ms() < deadline);
	return 0;
}

/* Sends LEN bytes of MSG to PEER (step 3c) and waits for the send's completion. */
static int lab4_ud_put(struct lab4_ud *u, const struct lab4_ud_peer *peer, const void *msg,
		       uint32_t len, uint64_t wr_id, int timeout_ms)
{
	struct ibv_wc wc;
	int ret = lab4_ud_send(u, peer, msg, len, wr_id);

	if (ret)
		return ret;
	ret = lab4_ud_poll(u->send_cq, "UD SEND", &wc, timeout_ms);
	if (ret == 0)
		rl_err("UD SEND (wr_id %llu): no completion within %d ms",
		       (unsigned long long)wr_id, timeout_ms);
	return ret == 1 ? 0 : -EIO;
}

/* The next datagram, within MS ms: 1 with its slot and payload, 0 (none), or < 0. */
static int lab4_ud_take(struct lab4_ud *u, int ms, int *slot, const uint8_t **payload,
			uint32_t *len)
{
	struct ibv_wc wc;
	int ret = lab4_ud_poll(u->cq, "UD RECV", &wc, ms);

	if (ret <= 0)
		return ret;
	*slot = (int)wc.wr_id;
	if (lab4_ud_payload(lab4_ud_slot(u, *slot), wc.byte_len, payload, len))
		return -EPROTO;
	return 1;
}

/* Datagram number SEQ of SIZE bytes (SIZE >= 4): the number, then a pattern. */
static void lab4_ud_fill(uint8_t *msg, uint32_t size, uint32_t seq)
{
	struct rl_wire w;
	uint32_t j;

	rl_wire_writer(&w, msg, size);
	rl_wire_put_u32(&w, seq);
	for (j = 4; j < size; j++)
		msg[j] = (uint8_t)(seq * 31 + j);
}

/* The number a datagram of LEN bytes carries (0 when too short). */
static uint32_t lab4_ud_seq(const uint8_t *payload, uint32_t len)
{
	struct rl_wire w;

	rl_wire_reader(&w, payload, len);
	return rl_wire_get_u32(&w);
}

/*
 * Waits up to LAB4_UD_RESEND_MS for the echo of datagram MSG (number SEQ, SIZE
 * bytes). Returns 1 when it came back whole, 0 when it did not come, < 0 on
 * an error or an echo that differs.
 */
static int lab4_ud_echo(struct lab4_ud *u, const uint8_t *msg, uint32_t size, uint32_t seq)
{
	int64_t deadline = lab4_now_ms() + LAB4_UD_RESEND_MS;
	const uint8_t *payload;
	uint32_t len;
	int slot, ret;

	while ((ret = lab4_ud_take(u, (int)(deadline - lab4_now_ms()), &slot, &payload, &len)) ==
	       1) {
		if (lab4_ud_seq(payload, len) == seq &&
		    (len != size || memcmp(payload, msg, size))) {
			rl_err("datagram %u: expected the %u bytes sent back, got %u bytes%s", seq,
			       size, len, len == size ? " that differ" : "");
			return -EPROTO;
		}
		ret = lab4_ud_seq(payload, len) == seq;
		if (lab4_ud_post_recv(u, slot))
			return -EIO;
		if (ret)
			return 1;
		/* An earlier datagram's second echo: it was sent twice. */
	}
	return ret;
}

/* Ping: COUNT datagrams of SIZE bytes to PEER, each echoed; *RESENT: sent again. */
static int lab4_ud_ping(struct lab4_ud *u, const struct lab4_ud_peer *peer, uint32_t count,
			uint8_t *msg, uint32_t size, int timeout_ms, uint32_t *resent)
{
	uint32_t i;
	int tries, ret;

	for (i = 0; i < count; i++) {
		lab4_ud_fill(msg, size, i);
		ret = 0;
		for (tries = 0; ret == 0 && tries < LAB4_UD_TRIES; tries++) {
			ret = lab4_ud_put(u, peer, msg, size, i, timeout_ms);
			if (ret == 0)
				ret = lab4_ud_echo(u, msg, size, i);
		}
		if (ret < 0)
			return ret;
		if (ret == 0) {
			rl_err("datagram %u: no echo after %d sends %d ms apart (is ud-pong running, on this Q_Key?)",
			       i, LAB4_UD_TRIES, LAB4_UD_RESEND_MS);
			return -ETIMEDOUT;
		}
		*resent += (uint32_t)tries - 1;
	}
	return 0;
}

/* Whether the peer closed the TCP connection FD (or wrote on it): ping is done. */
static bool lab4_peer_done(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

/*
 * Pong: echoes every datagram to PEER until ping closes FD, or for
 * TIMEOUT_MS without one. *ECHOED: echoes sent; *NEXT: one past the highest
 * number echoed.
 */
static int lab4_ud_pong(struct lab4_ud *u, const struct lab4_ud_peer *peer, int fd, int timeout_ms,
			uint32_t *echoed, uint32_t *next)
{
	int64_t idle_until = lab4_now_ms() + timeout_ms;
	const uint8_t *payload;
	uint32_t len;
	int slot, ret;

	for (;;) {
		ret = lab4_ud_take(u, LAB4_UD_RESEND_MS, &slot, &payload, &len);
		if (ret < 0)
			return ret;
		if (ret == 0 && lab4_peer_done(fd))
			return 0;
		if (ret == 0 && lab4_now_ms() >= idle_until) {
			rl_err("timed out: no UD datagram within %d ms", timeout_ms);
			return -ETIMEDOUT;
		}
		if (ret == 0)
			continue;
		if (lab4_ud_put(u, peer, payload, len, *echoed, timeout_ms) ||
		    lab4_ud_post_recv(u, slot))
			return -EIO;
		*echoed += 1;
		if (lab4_ud_seq(payload, len) >= *next)
			*next = lab4_ud_seq(payload, len) + 1;
		idle_until = lab4_now_ms() + timeout_ms;
	}
}

/* Swaps UD_HELLOs with the peer on FD (MINE filled in) and makes *PEER's AH. */
static int lab4_ud_meet(struct lab4_ud *u, int fd, const struct lab4_opts *o,
			struct lab4_ud_hello *mine, struct lab4_ud_hello *theirs,
			struct lab4_ud_peer *peer)
{
	mine->qpn = u->qp->qp_num;
	mine->qkey = u->qkey;
	mine->count = o->count;
	mine->size = o->size ? o->size : u->mtu;
	if (ibv_query_gid(u->ctx, u->port, u->gid_index, &mine->gid))
		return rl_fail("ibv_query_gid", errno, "index %d", u->gid_index);
	if (lab4_send_ud_hello(fd, mine, o->timeout_ms) ||
	    lab4_recv_ud_hello(fd, theirs, o->timeout_ms))
		return -EIO;
	*peer = (struct lab4_ud_peer){ .qpn = theirs->qpn,
				       .qkey = theirs->qkey,
				       .gid = theirs->gid };
	peer->ah = lab4_ud_make_ah(u->pd, u->port, u->gid_index, &peer->gid);
	return peer->ah ? 0 : -EIO;
}

/* The TCP connection to the other side: PING connects, pong accepts. */
static int lab4_ud_connect(const struct lab4_opts *o, bool ping)
{
	int lfd, fd;

	if (ping)
		return rl_oob_connect(o->addr, o->common.port, o->timeout_ms);
	lfd = rl_oob_listen(o->addr, o->common.port, NULL);
	fd = lfd < 0 ? lfd : rl_oob_accept(lfd, o->timeout_ms);
	if (lfd >= 0)
		close(lfd);
	return fd;
}

/* Ping's side, after the meeting: the datagrams, and the line that says how it went. */
static int lab4_ud_run_ping(struct lab4_ud *u, const struct lab4_ud_peer *peer,
			    const struct lab4_ud_hello *mine, int timeout_ms)
{
	uint8_t *msg = malloc(mine->size);
	uint32_t resent = 0;
	double t0 = lab4_seconds();
	int ret;

	if (!msg)
		return -ENOMEM;
	ret = lab4_ud_ping(u, peer, mine->count, msg, mine->size, timeout_ms, &resent);
	if (!ret)
		printf("lab4: ud-ping: %u datagrams of %u bytes echoed (MTU %u), round trip %.1f us, "
		       "%u sent again\n",
		       mine->count, mine->size, u->mtu, (lab4_seconds() - t0) * 1e6 / mine->count,
		       resent);
	free(msg);
	return ret;
}

/* Pong's side, after the meeting: echo until ping is done, and check it got them all. */
static int lab4_ud_run_pong(struct lab4_ud *u, const struct lab4_ud_peer *peer, int fd,
			    const struct lab4_ud_hello *theirs, int timeout_ms)
{
	uint32_t echoed = 0, next = 0;
	int ret = lab4_ud_pong(u, peer, fd, timeout_ms, &echoed, &next);

	if (ret)
		return ret;
	if (next < theirs->count) {
		rl_err("ud-ping left after datagram %u of %u (see its messages)", next,
		       theirs->count);
		return -EPIPE;
	}
	printf("lab4: ud-pong: echoed %u datagrams of %u bytes (%u sent twice or more)\n",
	       theirs->count, theirs->size, echoed - theirs->count);
	return 0;
}

/*
 * ud-pong and ud-ping: swap UD_HELLOs over TCP, build the AH, then COUNT
 * datagrams there and back. PING is true for the side that starts.
 */
static int lab4_ud_run(const struct lab4_opts *o, bool ping)
{
	struct lab4_ud_hello mine = { 0 }, theirs;
	struct lab4_ud_peer peer = { 0 };
	struct ibv_context *ctx;
	struct lab4_ud u;
	int gid_index, fd, ret = -1;

	ctx = lab4_open(o, &gid_index);
	if (!ctx)
		return -1;
	if (lab4_ud_open(&u, ctx, (uint8_t)o->common.ib_port, gid_index))
		goto clean_ctx;
	fd = lab4_ud_connect(o, ping);
	if (fd < 0)
		goto clean_u;
	if (lab4_ud_meet(&u, fd, o, &mine, &theirs, &peer))
		goto clean_fd;
	if (ping)
		ret = lab4_ud_run_ping(&u, &peer, &mine, o->timeout_ms);
	else
		ret = lab4_ud_run_pong(&u, &peer, fd, &theirs, o->timeout_ms);
	ibv_destroy_ah(peer.ah);
clean_fd:
	close(fd);
clean_u:
	lab4_ud_close(&u);
clean_ctx:
	ibv_close_device(ctx);
	return ret;
}

int main(int argc, char **argv)
{
	struct lab4_opts o = { 0 };
	int ret;

	if (lab4_parse(argc, argv, &o))
		return EXIT_FAILURE;
	if (o.common.help) {
		lab4_usage(stdout, o.common.prog);
		return EXIT_SUCCESS;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(o.cmd, "serve"))
		ret = lab4_serve(&o);
	else if (!strcmp(o.cmd, "send"))
		ret = lab4_send(&o);
	else
		ret = lab4_ud_run(&o, !strcmp(o.cmd, "ud-ping"));
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}
