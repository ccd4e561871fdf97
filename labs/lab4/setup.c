/*
 * setup.c: the objects of a transfer and the QP connection (given, not a
 * step; Lab 1 taught each of them). The sender gets a plain CQ and an RC QP
 * made with ibv_create_qp_ex() so step 2 can post through ibv_qp_ex; the
 * receiver gets an extended CQ (ibv_cq_ex) on a completion channel, and
 * one posted receive per chunk in flight.
 */
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "lab4.h"

#ifdef LAB4_WITH_SRD
#include <infiniband/efadv.h>
#endif

/*
 * Create a QP of TRANSPORT whose send queue takes RDMA writes with immediate
 * through ibv_wr_*(): RC with ibv_create_qp_ex(), SRD with efadv_create_qp_ex()
 * (only in a LAB4_SRD=1 build; docs/efa.md).
 */
struct ibv_qp *lab4_create_qp(struct ibv_pd *pd, struct ibv_cq *send_cq, struct ibv_cq *recv_cq,
			      uint32_t send_depth, uint32_t recv_depth,
			      enum lab4_transport transport)
{
	struct ibv_qp_init_attr_ex attr = {
		.send_cq = send_cq,
		.recv_cq = recv_cq,
		.cap = {
			.max_send_wr = send_depth,
			.max_recv_wr = recv_depth,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD |             /* the PD is in attr, not an argument */
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,  /* which ibv_wr_*() the QP takes */
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,
	};
	struct ibv_qp *qp = NULL;

	if (transport == LAB4_RC) {
		attr.send_ops_flags |= IBV_QP_EX_WITH_RDMA_WRITE; /* lab4_warm_up() */
		qp = ibv_create_qp_ex(pd->context, &attr);
	} else {
#ifdef LAB4_WITH_SRD
		struct efadv_qp_init_attr efa = { .driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD };

		attr.qp_type = IBV_QPT_DRIVER;
		qp = efadv_create_qp_ex(pd->context, &attr, &efa, sizeof(efa));
#else
		rl_err("SRD QP: this build has no SRD support (make LAB4_SRD=1, docs/efa.md)");
		return NULL;
#endif
	}
	if (!qp)
		rl_fail(transport == LAB4_RC ? "ibv_create_qp_ex" : "efadv_create_qp_ex", errno,
			"%s QP of %u send and %u receive slots", lab4_transport_name(transport),
			send_depth, recv_depth);
	return qp;
}

/*
 * Bring QP to RTS aimed at REMOTE. RC: INIT (remote write allowed), RTR,
 * RTS with the framework's helpers. SRD: the UD-style path of step 3; the
 * peer is named per work request by an address handle instead.
 */
int lab4_qp_connect(struct ibv_qp *qp, uint8_t port, int gid_index, enum lab4_transport transport,
		    const struct rl_qp_dest *remote)
{
	int ret;

	if (transport == LAB4_SRD)
		return lab4_ud_to_rts(qp, port, LAB4_QKEY);
	ret = rl_qp_to_init(qp, port, IBV_ACCESS_REMOTE_WRITE);
	if (!ret)
		ret = rl_qp_to_rtr(qp, port, gid_index, remote);
	if (!ret)
		ret = rl_qp_to_rts(qp, 0);
	return ret;
}

/*
 * The PD, a CQ on a completion channel (not armed: lab4_poll_sends() arms it
 * when it is about to sleep), the QP and the file's MR (access 0: the NIC
 * only reads it).
 */
int lab4_sender_open(struct lab4_sender *s, struct ibv_context *ctx, const struct lab4_file *f,
		     enum lab4_transport transport)
{
	*s = (struct lab4_sender){
		.ctx = ctx,
		.data = f->data,
		.size = f->size,
		.chunk = LAB4_DEFAULT_CHUNK,
		.window = LAB4_DEFAULT_WINDOW,
		.signal_every = LAB4_DEFAULT_SIGNAL,
		.timeout_ms = LAB4_TIMEOUT_MS,
		.wait = LAB4_WAIT_ADAPTIVE,
		.spin_us = LAB4_SPIN_BUDGET_US,
	};
	s->pd = rl_alloc_pd(ctx);
	if (!s->pd)
		goto clean;
	s->comp = rl_create_comp_channel(ctx);
	if (!s->comp)
		goto clean;
	s->cq = rl_create_cq(ctx, LAB4_MAX_WINDOW + 1, s->comp);
	if (!s->cq)
		goto clean;
	s->qp = lab4_create_qp(s->pd, s->cq, s->cq, LAB4_MAX_WINDOW, 1, transport);
	if (!s->qp)
		goto clean;
	s->qpx = ibv_qp_to_qp_ex(s->qp);
	if (f->size) {
		s->mr = rl_reg_mr(s->pd, f->data, f->size, 0);
		if (!s->mr)
			goto clean;
	}
	return 0;

clean:
	lab4_sender_close(s);
	return -EIO;
}

/*
 * Before the clock starts: one zero-byte RDMA write, busy-polled for (it
 * completes at once; busy works before step 5 is done). The first use of the
 * send queue, the CQ and the library code behind them takes page faults, and
 * in User-Mode Linux each costs a round trip to the host (about 180 us
 * measured); after this the first chunk does not pay for them. RC only: an
 * SRD QP is made without plain writes. Returns 0 or a negative errno.
 */
int lab4_warm_up(struct lab4_sender *s)
{
	struct ibv_wc wc;
	int n, ret;

	if (s->ah || s->nchunks == 0)
		return 0;
	ibv_wr_start(s->qpx);
	s->qpx->wr_id = LAB4_WARM_UP_WR_ID;
	s->qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(s->qpx, s->rkey, s->remote_addr);
	ibv_wr_set_sge_list(s->qpx, 0, NULL);
	ret = ibv_wr_complete(s->qpx);
	if (ret)
		return rl_fail("ibv_wr_complete", ret,
			       "the zero-byte RDMA WRITE before the transfer");
	n = lab4_poll_busy(s, &wc, 1);
	if (n < 0)
		return n;
	if (wc.status != IBV_WC_SUCCESS)
		return rl_fail_wc("RDMA WRITE of zero bytes (warm-up)", &wc);
	if (wc.wr_id != LAB4_WARM_UP_WR_ID)
		return rl_fail("ibv_poll_cq", EPROTO,
			       "the warm-up's completion carries another wr_id");
	return 0;
}

/* Undo lab4_sender_open(), in reverse order; safe on a half-made S. */
void lab4_sender_close(struct lab4_sender *s)
{
	if (s->ah)
		ibv_destroy_ah(s->ah);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->comp)
		ibv_destroy_comp_channel(s->comp);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	s->ah = NULL;
	s->mr = NULL;
	s->qp = NULL;
	s->qpx = NULL;
	s->cq = NULL;
	s->comp = NULL;
	s->pd = NULL;
}

/* The receiver's extended CQ: it can report byte_len and the immediate data. */
static struct ibv_cq_ex *lab4_create_cq_ex(struct ibv_context *ctx, int depth,
					   struct ibv_comp_channel *ch)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = depth,
		.channel = ch,
		.comp_vector = 0,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | /* ibv_wc_read_byte_len() */
			    IBV_WC_EX_WITH_IMM,       /* ibv_wc_read_imm_data() */
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &attr);

	if (!cq)
		rl_fail("ibv_create_cq_ex", errno, "of %d entries", depth);
	return cq;
}

/*
 * Everything a receiver of SIZE bytes in chunks of CHUNK needs: the buffer
 * (an anonymous mapping, registered for local and remote write), the
 * channel, the extended CQ (armed), the QP (in RESET: lab4_receiver_connect()
 * goes on), and the hash started. ANNOUNCED is the sender's SHA-256.
 */
int lab4_receiver_open(struct lab4_receiver *r, struct ibv_context *ctx, uint64_t size,
		       uint32_t chunk, const uint8_t announced[32], enum lab4_transport transport)
{
	struct ibv_device_attr attr;
	void *buf;

	*r = (struct lab4_receiver){
		.ctx = ctx,
		.size = size,
		.chunk = chunk,
		.nchunks = lab4_nchunks(size, chunk),
		.recv_depth = LAB4_RECV_DEPTH,
		.watch_fd = -1,
		.timeout_ms = LAB4_TIMEOUT_MS,
	};
	if (ibv_query_device(ctx, &attr))
		return rl_fail("ibv_query_device", errno, "%s", ibv_get_device_name(ctx->device));
	/* As many receives as the device allows, up to LAB4_RECV_DEPTH. */
	if ((int)r->recv_depth > attr.max_qp_wr)
		r->recv_depth = (uint32_t)attr.max_qp_wr;
	if ((int)r->recv_depth >= attr.max_cqe)
		r->recv_depth = (uint32_t)attr.max_cqe - 1;
	memcpy(r->announced, announced, sizeof(r->announced));
	r->hash = EVP_MD_CTX_new();
	if (!r->hash || !EVP_DigestInit_ex(r->hash, EVP_sha256(), NULL)) {
		rl_err("EVP_DigestInit_ex: SHA-256 is not available");
		goto clean;
	}
	r->pd = rl_alloc_pd(ctx);
	if (!r->pd)
		goto clean;
	if (size) {
		buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (buf == MAP_FAILED) {
			rl_fail("mmap", errno, "receive buffer of %llu bytes",
				(unsigned long long)size);
			goto clean;
		}
		r->buf = buf;
		r->mr = rl_reg_mr(r->pd, r->buf, size,
				  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		if (!r->mr)
			goto clean;
	}
	r->comp = rl_create_comp_channel(ctx);
	if (!r->comp)
		goto clean;
	r->cq = lab4_create_cq_ex(ctx, (int)r->recv_depth + 1, r->comp);
	if (!r->cq)
		goto clean;
	if (rl_req_notify_cq(ibv_cq_ex_to_cq(r->cq)))
		goto clean;
	r->qp = lab4_create_qp(r->pd, ibv_cq_ex_to_cq(r->cq), ibv_cq_ex_to_cq(r->cq), 1,
			       r->recv_depth, transport);
	if (!r->qp)
		goto clean;
	return 0;

clean:
	lab4_receiver_close(r);
	return -EIO;
}

/*
 * Bring r's QP to RTS aimed at REMOTE, then post its receives: a QP takes
 * receives only from INIT on, and they must be there before the sender
 * learns where to write (a write with immediate finding none is RNR-NAKed).
 */
int lab4_receiver_connect(struct lab4_receiver *r, uint8_t port, int gid_index,
			  enum lab4_transport transport, const struct rl_qp_dest *remote)
{
	int ret = lab4_qp_connect(r->qp, port, gid_index, transport, remote);

	if (!ret)
		ret = lab4_post_recvs(r, r->recv_depth);
	return ret;
}

/* Undo lab4_receiver_open(), in reverse order; safe on a half-made R. */
void lab4_receiver_close(struct lab4_receiver *r)
{
	if (r->qp)
		ibv_destroy_qp(r->qp);
	if (r->cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(r->cq));
	if (r->comp)
		ibv_destroy_comp_channel(r->comp);
	if (r->mr)
		ibv_dereg_mr(r->mr);
	if (r->buf)
		munmap(r->buf, r->size);
	if (r->pd)
		ibv_dealloc_pd(r->pd);
	if (r->hash)
		EVP_MD_CTX_free(r->hash);
	r->qp = NULL;
	r->cq = NULL;
	r->comp = NULL;
	r->mr = NULL;
	r->buf = NULL;
	r->pd = NULL;
	r->hash = NULL;
}

/*
 * Post up to N more receives, never more than the file has chunks. A write
 * with immediate data consumes one receive and puts no bytes in it, so the
 * receives have no buffer at all (num_sge 0).
 */
int lab4_post_recvs(struct lab4_receiver *r, uint32_t n)
{
	struct ibv_recv_wr wrs[LAB4_POLL_BATCH], *bad_wr;
	uint32_t i, batch;
	int ret;

	if (n > r->nchunks - r->recvs_posted)
		n = r->nchunks - r->recvs_posted;
	while (n > 0) {
		batch = n < LAB4_POLL_BATCH ? n : LAB4_POLL_BATCH;
		for (i = 0; i < batch; i++)
			wrs[i] = (struct ibv_recv_wr){
				.wr_id = r->recvs_posted + i,
				.next = i + 1 < batch ? &wrs[i + 1] : NULL,
				.num_sge = 0,
			};
		ret = ibv_post_recv(r->qp, wrs, &bad_wr);
		if (ret)
			return rl_fail("ibv_post_recv", ret, "%u receives on QP 0x%x", batch,
				       r->qp->qp_num);
		r->recvs_posted += batch;
		n -= batch;
	}
	return 0;
}

/*
 * Sleep until the CQ raises an event (then acknowledge it and arm the CQ
 * again, so the next completion wakes us too), the watched socket closes,
 * or r->timeout_ms pass. Call it only after a poll found nothing: the CQ is
 * armed before that poll, so a completion in between is never missed.
 */
int lab4_wait_arrivals(struct lab4_receiver *r)
{
	struct pollfd pfd[2] = {
		{ .fd = r->comp->fd, .events = POLLIN },
		{ .fd = r->watch_fd, .events = POLLIN },
	};
	struct ibv_cq *cq;
	void *context;
	char byte;
	int n;

	n = poll(pfd, r->watch_fd >= 0 ? 2 : 1, r->timeout_ms);
	if (n < 0 && errno == EINTR)
		return 0;
	if (n < 0)
		return rl_fail("poll", errno, "on the completion channel");
	if (n == 0) {
		rl_err("timed out: no chunk arrived for %d ms (chunk %u of %u is next)",
		       r->timeout_ms, r->arrived, r->nchunks);
		return -ETIMEDOUT;
	}
	if (pfd[0].revents) {
		if (ibv_get_cq_event(r->comp, &cq, &context))
			return rl_fail("ibv_get_cq_event", errno, "on the receiver's channel");
		ibv_ack_cq_events(cq, 1);
		return rl_req_notify_cq(cq);
	}
	if (recv(r->watch_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) <= 0) {
		rl_err("connection lost: the sender went away after %u of %u chunks", r->arrived,
		       r->nchunks);
		return -ECONNRESET;
	}
	rl_err("the sender sent TCP bytes during the transfer: that is not the protocol");
	return -EPROTO;
}
