/* main.c: main() for the kit's own Check programs (tests/unit, tests/rdma). */
#include <stdlib.h>

#include "harness.h"

/*
 * Runs the suite rl_test_suite() returns, in fork mode unless CK_FORK=no;
 * CK_VERBOSITY and CK_XML_LOG_FILE_NAME are read by Check itself. Exits
 * non-zero when any test failed. The labs' graded programs have their own
 * main(), in tests/graded.c.
 */
int main(void)
{
	SRunner *sr;
	int failed;

	rl_harness_start(tcase_name);
	sr = srunner_create(rl_test_suite());
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
