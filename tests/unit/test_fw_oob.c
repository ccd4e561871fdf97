/*
 * test_fw_oob.c: the out-of-band TCP channel on 127.0.0.1 moves exact byte
 * counts both ways, retries while the server is not up yet, and turns
 * refusals, silence and early close into errors instead of hangs.
 */
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "../harness.h"
#include "rdmalab.h"

#define TIMEOUT_MS 3000

/* A server thread: listens (maybe late), accepts, echoes N bytes back. */
struct echo {
	int lfd;
	uint16_t port;
	int delay_ms; /* wait this long before listening (lfd < 0 then) */
	size_t n;     /* bytes to echo; 0: close at once */
	int status;
};

static void *echo_main(void *arg)
{
	struct echo *e = arg;
	uint8_t buf[256];
	int fd;

	e->status = -1;
	if (e->lfd < 0) {
		poll(NULL, 0, e->delay_ms);
		e->lfd = rl_oob_listen("127.0.0.1", e->port, NULL);
		if (e->lfd < 0)
			return NULL;
	}
	fd = rl_oob_accept(e->lfd, TIMEOUT_MS);
	if (fd < 0)
		return NULL;
	if (e->n == 0 ||
	    (!rl_oob_recv(fd, buf, e->n, TIMEOUT_MS) && !rl_oob_send(fd, buf, e->n, TIMEOUT_MS)))
		e->status = 0;
	close(fd);
	return NULL;
}

/* A port that was free a moment ago. */
static uint16_t free_port(void)
{
	uint16_t port = 0;
	int fd = rl_oob_listen("127.0.0.1", 0, &port);

	ck_assert_msg(fd >= 0 && port, "expected a free port, got fd %d port %u", fd, port);
	close(fd);
	return port;
}

START_TEST(test_oob_exchange_round_trips_wire_message)
{
	struct echo e = { .n = 4 + 8 + 16 };
	uint8_t out[64], in[64], gid[16], gid_back[16];
	struct rl_wire w;
	pthread_t thread;
	int fd;

	memset(gid, 0x42, sizeof(gid));
	e.lfd = rl_oob_listen("127.0.0.1", 0, &e.port);
	ck_assert_msg(e.lfd >= 0, "listen: expected a socket, got %d", e.lfd);
	ck_assert_int_eq(pthread_create(&thread, NULL, echo_main, &e), 0);

	rl_wire_writer(&w, out, sizeof(out));
	rl_wire_put_u32(&w, 0x00abcdef);
	rl_wire_put_u64(&w, 0x7f0000001000ULL);
	rl_wire_put_bytes(&w, gid, sizeof(gid));
	ck_assert_int_eq(rl_wire_status(&w), 0);
	fd = rl_oob_connect("127.0.0.1", e.port, TIMEOUT_MS);
	ck_assert_msg(fd >= 0, "connect: expected a socket, got %d", fd);
	ck_assert_int_eq(rl_oob_send(fd, out, rl_wire_used(&w), TIMEOUT_MS), 0);
	ck_assert_int_eq(rl_oob_recv(fd, in, e.n, TIMEOUT_MS), 0);
	close(fd);
	pthread_join(thread, NULL);
	close(e.lfd);

	rl_wire_reader(&w, in, e.n);
	ck_assert_msg(rl_wire_get_u32(&w) == 0x00abcdef, "qpn: expected 0xabcdef");
	ck_assert_msg(rl_wire_get_u64(&w) == 0x7f0000001000ULL, "addr: expected 0x7f0000001000");
	rl_wire_get_bytes(&w, gid_back, sizeof(gid_back));
	ck_assert_msg(!memcmp(gid, gid_back, sizeof(gid)), "gid: expected it back unchanged");
	ck_assert_msg(e.status == 0, "server: expected status 0, got %d", e.status);
}
END_TEST

START_TEST(test_oob_connect_retries_until_server_listens)
{
	struct echo e = { .lfd = -1, .delay_ms = 300, .n = 0 };
	pthread_t thread;
	int fd;

	e.port = free_port();
	ck_assert_int_eq(pthread_create(&thread, NULL, echo_main, &e), 0);
	fd = rl_oob_connect("127.0.0.1", e.port, TIMEOUT_MS);
	ck_assert_msg(fd >= 0, "expected to connect once the server is up, got %d", fd);
	close(fd);
	pthread_join(thread, NULL);
	close(e.lfd);
	ck_assert_msg(e.status == 0, "server: expected status 0, got %d", e.status);
}
END_TEST

START_TEST(test_oob_connect_to_closed_port_is_refused_after_timeout)
{
	uint16_t port = free_port();
	int fd = rl_oob_connect("127.0.0.1", port, 300);

	ck_assert_msg(fd == -ECONNREFUSED, "expected -ECONNREFUSED (%d), got %d", -ECONNREFUSED,
		      fd);
}
END_TEST

START_TEST(test_oob_recv_times_out_when_peer_is_silent)
{
	struct echo e = { .n = 8 }; /* waits for 8 bytes we never send */
	pthread_t thread;
	uint8_t buf[8];
	int fd, ret;

	e.lfd = rl_oob_listen("127.0.0.1", 0, &e.port);
	ck_assert_int_ge(e.lfd, 0);
	ck_assert_int_eq(pthread_create(&thread, NULL, echo_main, &e), 0);
	fd = rl_oob_connect("127.0.0.1", e.port, TIMEOUT_MS);
	ck_assert_int_ge(fd, 0);
	ret = rl_oob_recv(fd, buf, sizeof(buf), 200);
	close(fd);
	pthread_join(thread, NULL);
	close(e.lfd);
	ck_assert_msg(ret == -ETIMEDOUT, "expected -ETIMEDOUT, got %d", ret);
}
END_TEST

START_TEST(test_oob_recv_reports_peer_closing_early)
{
	struct echo e = { .n = 0 }; /* accepts, then closes at once */
	pthread_t thread;
	uint8_t buf[8];
	int fd, ret;

	e.lfd = rl_oob_listen("127.0.0.1", 0, &e.port);
	ck_assert_int_ge(e.lfd, 0);
	ck_assert_int_eq(pthread_create(&thread, NULL, echo_main, &e), 0);
	fd = rl_oob_connect("127.0.0.1", e.port, TIMEOUT_MS);
	ck_assert_int_ge(fd, 0);
	ret = rl_oob_recv(fd, buf, sizeof(buf), TIMEOUT_MS);
	close(fd);
	pthread_join(thread, NULL);
	close(e.lfd);
	ck_assert_msg(ret == -ECONNRESET, "expected -ECONNRESET, got %d", ret);
}
END_TEST

START_TEST(test_oob_accept_times_out_without_client)
{
	uint16_t port;
	int lfd = rl_oob_listen("127.0.0.1", 0, &port);
	int fd;

	ck_assert_int_ge(lfd, 0);
	fd = rl_oob_accept(lfd, 100);
	close(lfd);
	ck_assert_msg(fd == -ETIMEDOUT, "expected -ETIMEDOUT, got %d", fd);
}
END_TEST

START_TEST(test_oob_rejects_unresolvable_host)
{
	int fd = rl_oob_connect("no-such-host.invalid", 7471, 100);

	ck_assert_msg(fd == -EINVAL, "expected -EINVAL, got %d", fd);
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("framework out-of-band TCP");
	TCase *tc = tcase_create("oob");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_UNIT);
	tcase_add_test(tc, test_oob_exchange_round_trips_wire_message);
	tcase_add_test(tc, test_oob_connect_retries_until_server_listens);
	tcase_add_test(tc, test_oob_connect_to_closed_port_is_refused_after_timeout);
	tcase_add_test(tc, test_oob_recv_times_out_when_peer_is_silent);
	tcase_add_test(tc, test_oob_recv_reports_peer_closing_early);
	tcase_add_test(tc, test_oob_accept_times_out_without_client);
	tcase_add_test(tc, test_oob_rejects_unresolvable_host);
	suite_add_tcase(s, tc);
	return s;
}
