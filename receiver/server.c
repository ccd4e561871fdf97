/*
 * server.c: the receiver's event loop. One ppoll() waits on the rdma_cm event
 * channel (connects and disconnects) and on the completion channel every
 * connection's CQ shares (messages); both fds are non-blocking, so the loop
 * never waits on one sender. Timers (idle timeouts, held-back replies) set
 * ppoll()'s timeout.
 */
#define _GNU_SOURCE /* ppoll */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "receiver.h"

/* Connection requests waiting to be taken: enough for many senders connecting at once. */
#define RCV_LISTEN_BACKLOG 128

static volatile sig_atomic_t rcv_stop;

/*
 * SIGINT and SIGTERM stay blocked except inside ppoll(), which unblocks them
 * with this mask: a signal that comes between the rcv_stop check and the
 * wait then ends the wait instead of being missed until the next event.
 */
static sigset_t rcv_wait_mask;

static void rcv_on_signal(int sig)
{
	(void)sig;
	rcv_stop = 1;
}

/* Make FD non-blocking. */
static int rcv_set_nonblock(int fd, const char *what)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK))
		return rl_fail("fcntl O_NONBLOCK", errno, "%s fd %d", what, fd);
	return 0;
}

/* Create the completion channel on CTX, the device connections arrive on. */
static int rcv_open_device(struct rcv_server *srv, struct ibv_context *ctx)
{
	srv->comp_ch = rl_create_comp_channel(ctx);
	if (!srv->comp_ch)
		return -ENOMEM;
	srv->ctx = ctx;
	return rcv_set_nonblock(srv->comp_ch->fd, "completion channel");
}

/* Refuse the request on ID with an ERROR of CODE in the REJECT, and log it. */
static void rcv_reject(struct rcv_server *srv, struct rdma_cm_id *id, enum rl_proto_error code,
		       const char *text)
{
	struct rcv_result r = { .hash_ok = -1, .self_study = srv->cfg->self_study };
	uint8_t msg[RL_PROTO_MAX_MSG];
	int len;

	rcv_peer_name(id, r.peer, sizeof(r.peer));
	len = rl_proto_encode_errorf(msg, 100, code, "%s", text);
	rdma_reject(id, msg, len > 0 ? (uint8_t)len : 0);
	rdma_destroy_id(id);
	snprintf(r.error, sizeof(r.error), "%s: %s", rl_proto_error_name(code), text);
	r.time = time(NULL);
	rcv_results_append(srv->results_fd, &r);
	rcv_note("rejected %s: %s", r.peer, r.error);
}

/* A sender asks to connect on ID: serve it, or reject it when full. */
static void rcv_on_connect_request(struct rcv_server *srv, struct rdma_cm_id *id)
{
	struct rcv_conn *conn;
	char text[80];

	if (srv->nconns >= srv->cfg->max_conns) {
		snprintf(text, sizeof(text),
			 "receiver full: %d connections in use, try again later", srv->nconns);
		rcv_reject(srv, id, RL_PERR_BUSY, text);
		return;
	}
	if (!srv->comp_ch && rcv_open_device(srv, id->verbs)) {
		rcv_reject(srv, id, RL_PERR_INTERNAL, "receiver could not open the device");
		return;
	}
	if (id->verbs != srv->ctx) {
		rcv_reject(srv, id, RL_PERR_INTERNAL, "connection on another RDMA device");
		return;
	}
	conn = rcv_conn_accept(srv, id);
	if (!conn) {
		rcv_reject(srv, id, RL_PERR_INTERNAL, "receiver could not set up the connection");
		return;
	}
	conn->next = srv->conns;
	srv->conns = conn;
	srv->nconns++;
	rl_info("conn %lu %s: connect request (%d open)", conn->no, conn->result.peer, srv->nconns);
}

/* Take every waiting CM event, acknowledge it, and hand it to its connection. */
static int rcv_drain_cm_events(struct rcv_server *srv)
{
	struct rdma_cm_event *event;
	enum rdma_cm_event_type type;
	struct rdma_cm_id *id;
	int status;

	while (!rdma_get_cm_event(srv->cm_ch, &event)) {
		type = event->event;
		status = event->status;
		id = event->id;
		rdma_ack_cm_event(event);
		rl_debug("rdma_cm: %s (status %d)", rdma_event_str(type), status);
		if (type == RDMA_CM_EVENT_CONNECT_REQUEST)
			rcv_on_connect_request(srv, id);
		else if (type == RDMA_CM_EVENT_DEVICE_REMOVAL && id == srv->listen_id)
			return -ENODEV;
		else if (id && id->context)
			rcv_conn_cm_event(id->context, type, status);
	}
	if (errno != EAGAIN && errno != EWOULDBLOCK)
		return rl_fail("rdma_get_cm_event", errno, "on fd %d", srv->cm_ch->fd);
	return 0;
}

/* Take every waiting completion event and let its connection handle its CQ. */
static int rcv_drain_cq_events(struct rcv_server *srv)
{
	struct ibv_cq *cq;
	void *context;

	while (!ibv_get_cq_event(srv->comp_ch, &cq, &context)) {
		ibv_ack_cq_events(cq, 1);
		rcv_conn_cq_event(context);
	}
	if (errno != EAGAIN && errno != EWOULDBLOCK)
		return rl_fail("ibv_get_cq_event", errno, "on fd %d", srv->comp_ch->fd);
	return 0;
}

/* Fire every due timer; the milliseconds until the next one, for poll(). */
static int rcv_run_timers(struct rcv_server *srv)
{
	int64_t now = rcv_now_ms(), next = INT64_MAX, t;
	struct rcv_conn *conn;

	for (conn = srv->conns; conn; conn = conn->next) {
		t = rcv_conn_timers(conn, now);
		if (t < next)
			next = t;
	}
	if (next == INT64_MAX)
		return -1;
	return next <= now ? 0 : (int)(next - now < 60000 ? next - now : 60000);
}

/* Destroy every connection that has ended. */
static void rcv_reap(struct rcv_server *srv)
{
	struct rcv_conn **link = &srv->conns, *conn;

	while ((conn = *link)) {
		if (conn->state != RCV_DEAD) {
			link = &conn->next;
			continue;
		}
		*link = conn->next;
		rcv_conn_destroy(conn);
	}
}

/* Wait for and handle one round of events; 0, or -errno when the loop must stop. */
static int rcv_loop_once(struct rcv_server *srv)
{
	struct pollfd pfd[2] = {
		{ .fd = srv->cm_ch->fd, .events = POLLIN },
		{ .fd = srv->comp_ch ? srv->comp_ch->fd : -1, .events = POLLIN },
	};
	int timeout = rcv_run_timers(srv), ret = 0;
	struct timespec ts = { .tv_sec = timeout / 1000, .tv_nsec = timeout % 1000 * 1000000L };

	rcv_reap(srv);
	if (ppoll(pfd, 2, timeout < 0 ? NULL : &ts, &rcv_wait_mask) < 0)
		return errno == EINTR ? 0 : rl_fail("ppoll", errno, "on the receiver's channels");
	if (pfd[0].revents)
		ret = rcv_drain_cm_events(srv);
	if (!ret && pfd[1].revents)
		ret = rcv_drain_cq_events(srv);
	rcv_reap(srv);
	return ret;
}

/* End and destroy every connection, then what the server holds. */
static void rcv_shutdown(struct rcv_server *srv)
{
	struct rcv_conn *conn;

	for (conn = srv->conns; conn; conn = conn->next)
		rcv_conn_end(conn, "receiver stopped");
	rcv_reap(srv);
	if (srv->listen_id)
		rdma_destroy_id(srv->listen_id);
	if (srv->comp_ch)
		ibv_destroy_comp_channel(srv->comp_ch);
	if (srv->cm_ch)
		rdma_destroy_event_channel(srv->cm_ch);
	if (srv->results_fd >= 0)
		close(srv->results_fd);
}

/* Serve senders until SIGINT or SIGTERM (exit 0) or a fatal error. */
int rcv_serve(const struct rcv_config *cfg, const uint8_t *secret, size_t secret_len)
{
	struct rcv_server srv = {
		.cfg = cfg,
		.secret = secret,
		.secret_len = secret_len,
		.results_fd = -1,
	};
	struct sigaction sa = { .sa_handler = rcv_on_signal };
	const char *host = cfg->common.addr;
	sigset_t stop_signals;
	int ret;

	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop_signals, &rcv_wait_mask);
	sigdelset(&rcv_wait_mask, SIGINT);
	sigdelset(&rcv_wait_mask, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	srv.results_fd = rcv_results_open(cfg->results_path);
	if (srv.results_fd < 0)
		return srv.results_fd;
	srv.cm_ch = rl_cm_create_channel();
	ret = srv.cm_ch ? rcv_set_nonblock(srv.cm_ch->fd, "rdma_cm channel") : -ENODEV;
	if (!ret)
		ret = rl_cm_listen_backlog(srv.cm_ch, host, cfg->common.port, RCV_LISTEN_BACKLOG,
					   &srv.listen_id, NULL);
	if (!ret && srv.listen_id->verbs)
		ret = rcv_open_device(&srv, srv.listen_id->verbs);
	if (ret)
		goto out;
	rcv_note("rdmalab-receiver: listening on %s:%u (up to %d senders, files up to %llu bytes, "
		 "windows up to %llu, idle timeout %d ms%s%s)",
		 host ? host : "*", ntohs(rdma_get_src_port(srv.listen_id)), cfg->max_conns,
		 (unsigned long long)cfg->max_file, (unsigned long long)cfg->max_window,
		 cfg->idle_timeout_ms, cfg->self_study ? ", SELF-STUDY keys" : "",
		 cfg->tokens ? ", class mode: ID:TOKEN" : "");
	while (!rcv_stop && !ret)
		ret = rcv_loop_once(&srv);
	if (rcv_stop)
		rcv_note("rdmalab-receiver: stopping (%d connections open)", srv.nconns);
out:
	rcv_shutdown(&srv);
	return ret;
}
