/* harness.c: main() for every Check test program, and what the tests share. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"

double rl_test_timeout(double seconds)
{
	const char *s = getenv("RDMALAB_TEST_TIMEOUT");
	char *end;
	double t;

	if (!s || !*s)
		return seconds;
	t = strtod(s, &end);
	return *end == '\0' && t > 0 ? t : seconds;
}

const char *rl_test_device(void)
{
	const char *dev = getenv("RDMALAB_DEVICE");

	ck_assert_msg(dev && *dev,
		      "RDMALAB_DEVICE is not set: run RDMA tests with 'make rdma-test' "
		      "(natively or in the Soft-RoCE VM)");
	return dev;
}

int rl_test_gid_index(void)
{
	const char *s = getenv("RDMALAB_GID_INDEX");

	ck_assert_msg(s && *s,
		      "RDMALAB_GID_INDEX is not set: run RDMA tests with 'make rdma-test'");
	return atoi(s);
}

uint8_t rl_test_ib_port(void)
{
	const char *s = getenv("RDMALAB_IB_PORT");

	return s && *s ? (uint8_t)atoi(s) : 1;
}

const char *rl_test_addr(void)
{
	const char *addr = getenv("RDMALAB_ADDR");

	ck_assert_msg(addr && *addr,
		      "RDMALAB_ADDR is not set: run RDMA tests with 'make rdma-test' "
		      "or 'make check LAB=N'");
	return addr;
}

uint16_t rl_test_free_port(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_msg(fd >= 0, "expected a socket, got %s", strerror(errno));
	ck_assert_msg(bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
			      getsockname(fd, (struct sockaddr *)&sin, &len) == 0,
		      "expected a free TCP port, got %s", strerror(errno));
	close(fd);
	return ntohs(sin.sin_port);
}

/*
 * Fork mode unless CK_FORK=no; CK_VERBOSITY and CK_XML_LOG_FILE_NAME are
 * read by Check itself. Exits non-zero when any test failed.
 */
int main(void)
{
	SRunner *sr = srunner_create(rl_test_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
