/*
 * oob.c: the out-of-band TCP channel two peers use to swap what RDMA needs
 * before it can run (QP numbers, GIDs, rkeys). The server listens and
 * accepts one client; the client retries until the server is up. Sends and
 * receives move an exact number of bytes or fail, within a timeout.
 */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rdmalab.h"

#define RL_OOB_RETRY_MS 100

static int64_t rl_oob_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left until DEADLINE, never negative. */
static int rl_oob_left(int64_t deadline)
{
	int64_t left = deadline - rl_oob_now_ms();

	return left > 0 ? (int)left : 0;
}

/*
 * Resolve HOST (NULL: any local address) and PORT to an IPv4 socket
 * address. Shared with cm.c.
 */
int rl_resolve_ipv4(const char *host, uint16_t port, struct sockaddr_in *sin)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	int ret;

	*sin = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(port) };
	if (!host)
		return 0;
	ret = getaddrinfo(host, NULL, &hints, &res);
	if (ret) {
		rl_err("getaddrinfo %s: %s", host, gai_strerror(ret));
		return -EINVAL;
	}
	sin->sin_addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
	freeaddrinfo(res);
	return 0;
}

/*
 * Listen on HOST:PORT (HOST NULL for every address, PORT 0 for any free
 * port, which is then stored in *BOUND_PORT if that is not NULL).
 * Returns the listening socket or -errno.
 */
int rl_oob_listen(const char *host, uint16_t port, uint16_t *bound_port)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd, one = 1, ret;

	ret = rl_resolve_ipv4(host, port, &sin);
	if (ret)
		return ret;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return rl_fail("socket", errno, "for %s:%u", host ? host : "*", port);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		ret = rl_fail("bind", errno, "%s:%u", host ? host : "*", port);
		goto clean_fd;
	}
	if (listen(fd, 1)) {
		ret = rl_fail("listen", errno, "%s:%u", host ? host : "*", port);
		goto clean_fd;
	}
	if (bound_port && !getsockname(fd, (struct sockaddr *)&sin, &len))
		*bound_port = ntohs(sin.sin_port);
	return fd;

clean_fd:
	close(fd);
	return ret;
}

/* Accept one client on LFD within TIMEOUT_MS; its socket or -errno. */
int rl_oob_accept(int lfd, int timeout_ms)
{
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };
	int fd, n, one = 1;

	do {
		n = poll(&pfd, 1, timeout_ms);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return rl_fail("poll", errno, "on listening socket %d", lfd);
	if (n == 0) {
		rl_err("accept: no client within %d ms (hint: did the client start, and use "
		       "the same address and --port?)",
		       timeout_ms);
		return -ETIMEDOUT;
	}
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return rl_fail("accept", errno, "on listening socket %d", lfd);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* One non-blocking connect attempt of at most WAIT_MS: 0 or -errno, quiet. */
static int rl_oob_try_connect(int fd, const struct sockaddr_in *sin, int wait_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	socklen_t len = sizeof(int);
	int err = 0, n;

	if (!connect(fd, (const struct sockaddr *)sin, sizeof(*sin)))
		return 0;
	if (errno != EINPROGRESS)
		return -errno;
	do {
		n = poll(&pfd, 1, wait_ms);
	} while (n < 0 && errno == EINTR);
	if (n == 0)
		return -ETIMEDOUT;
	if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		return -errno;
	return -err;
}

/*
 * Connect to HOST:PORT, retrying while the server is not up yet, for at
 * most TIMEOUT_MS. Returns the connected (blocking) socket or -errno.
 */
int rl_oob_connect(const char *host, uint16_t port, int timeout_ms)
{
	int64_t deadline = rl_oob_now_ms() + timeout_ms;
	struct sockaddr_in sin;
	int fd, ret, left, one = 1;

	ret = rl_resolve_ipv4(host, port, &sin);
	if (ret)
		return ret;
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return rl_fail("socket", errno, "for %s:%u", host, port);
		ret = rl_oob_try_connect(fd, &sin, rl_oob_left(deadline));
		if (!ret)
			break;
		close(fd);
		left = rl_oob_left(deadline);
		if (ret != -ECONNREFUSED || left == 0)
			return rl_fail("connect", ret, "%s:%u", host, port);
		rl_debug("connect %s:%u: refused, retrying", host, port);
		poll(NULL, 0, left < RL_OOB_RETRY_MS ? left : RL_OOB_RETRY_MS);
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Wait until FD is ready for EVENTS, for at most TIMEOUT_MS: 1, 0 or -errno. */
static int rl_oob_wait(int fd, short events, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int n;

	do {
		n = poll(&pfd, 1, timeout_ms);
	} while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/* Send exactly LEN bytes from BUF on FD within TIMEOUT_MS. */
int rl_oob_send(int fd, const void *buf, size_t len, int timeout_ms)
{
	int64_t deadline = rl_oob_now_ms() + timeout_ms;
	const char *p = buf;
	size_t done = 0;
	ssize_t n;
	int ready;

	while (done < len) {
		ready = rl_oob_wait(fd, POLLOUT, rl_oob_left(deadline));
		if (ready <= 0)
			return rl_fail("send", ready ? ready : ETIMEDOUT,
				       "on socket %d after %zu of %zu bytes", fd, done, len);
		n = send(fd, p + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return rl_fail("send", errno, "on socket %d after %zu of %zu bytes", fd,
				       done, len);
		done += n;
	}
	return 0;
}

/* Receive exactly LEN bytes into BUF from FD within TIMEOUT_MS. */
int rl_oob_recv(int fd, void *buf, size_t len, int timeout_ms)
{
	int64_t deadline = rl_oob_now_ms() + timeout_ms;
	char *p = buf;
	size_t done = 0;
	ssize_t n;
	int ready;

	while (done < len) {
		ready = rl_oob_wait(fd, POLLIN, rl_oob_left(deadline));
		if (ready <= 0)
			return rl_fail("recv", ready ? ready : ETIMEDOUT,
				       "on socket %d after %zu of %zu bytes", fd, done, len);
		n = recv(fd, p + done, len - done, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return rl_fail("recv", errno, "on socket %d after %zu of %zu bytes", fd,
				       done, len);
		if (n == 0) {
			rl_err("recv on socket %d: peer closed the connection after %zu of %zu bytes",
			       fd, done, len);
			return -ECONNRESET;
		}
		done += n;
	}
	return 0;
}
