/* harness.c: main() for every Check test program. */
#include <stdlib.h>

#include "harness.h"

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
