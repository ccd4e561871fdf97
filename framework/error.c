/* error.c: one-line failure reports, and hints for the traps students hit. */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "rdmalab.h"

static const char *const rl_hints[] = {
	[RL_TRAP_MEMLOCK] = "the locked-memory limit is too low: run 'ulimit -l unlimited' "
			    "or see 'make doctor'",
	[RL_TRAP_NO_DEVICE] = "no usable RDMA device here: run 'make doctor', or run the "
			      "program in the Soft-RoCE VM (vm/rxe-run)",
	[RL_TRAP_GID_INDEX] = "the GID index may be wrong for this port: set RDMALAB_GID_INDEX "
			      "or --gid-index, and check 'ibv_devinfo -v'",
	[RL_TRAP_RNR] = "the peer did not post a receive in time (receiver not ready)",
	[RL_TRAP_REMOTE_ACCESS] = "wrong rkey or address, or the peer's MR lacks the "
				  "IBV_ACCESS_REMOTE_* flag for this operation",
	[RL_TRAP_CM_TIMEOUT] = "is the peer listening? check the address and port "
			       "(RDMALAB_ADDR, --port)",
	[RL_TRAP_TCP_REFUSED] = "nothing listens there: start the server first, and check "
				"the address and --port",
	[RL_TRAP_RETRY_EXC] = "the peer QP did not answer: it is gone, not in RTR, or its "
			      "QPN/GID was exchanged wrongly",
	[RL_TRAP_QUEUE_FULL] = "the work queue is full: poll completions before posting more, "
			       "or create the QP deeper",
	[RL_TRAP_QP_ATTR] =
		"the QP may not be in the state this transition starts from, the "
		"mask may lack an attribute the transition requires or name one it "
		"does not take (the table at the end of man ibv_modify_qp), or a "
		"value may not fit this port (its number, the GID index: RDMALAB_GID_INDEX, "
		"ibv_devinfo -v)",
};

/* The hint for TRAP, or NULL when there is none. */
const char *rl_hint(enum rl_trap trap)
{
	if ((unsigned)trap >= sizeof(rl_hints) / sizeof(rl_hints[0]))
		return NULL;
	return rl_hints[trap];
}

/*
 * The trap behind VERB failing with errno ERR (positive), if it is a known
 * one. VERB is the name the caller reports, e.g. "ibv_reg_mr" or
 * "ibv_modify_qp RTR"; only its start is compared.
 */
enum rl_trap rl_trap_of_errno(const char *verb, int err)
{
	static const struct {
		const char *verb;
		int err;
		enum rl_trap trap;
	} table[] = {
		{ "ibv_reg_mr", ENOMEM, RL_TRAP_MEMLOCK },
		{ "ibv_reg_mr", EPERM, RL_TRAP_MEMLOCK },
		{ "ibv_create_cq", ENOMEM, RL_TRAP_MEMLOCK },
		{ "ibv_create_qp", ENOMEM, RL_TRAP_MEMLOCK },
		{ "ibv_get_device_list", ENODEV, RL_TRAP_NO_DEVICE },
		{ "ibv_get_device_list", ENOSYS, RL_TRAP_NO_DEVICE },
		{ "ibv_open_device", ENODEV, RL_TRAP_NO_DEVICE },
		{ "ibv_modify_qp", EINVAL, RL_TRAP_QP_ATTR },
		{ "ibv_query_gid", EINVAL, RL_TRAP_GID_INDEX },
		{ "rdma_cm", ETIMEDOUT, RL_TRAP_CM_TIMEOUT },
		{ "rdma_cm", ECONNREFUSED, RL_TRAP_CM_TIMEOUT },
		{ "rdma_cm", ENODEV, RL_TRAP_NO_DEVICE },
		{ "rdma_cm", EADDRNOTAVAIL, RL_TRAP_NO_DEVICE },
		{ "ibv_post_send", ENOMEM, RL_TRAP_QUEUE_FULL },
		{ "ibv_post_recv", ENOMEM, RL_TRAP_QUEUE_FULL },
		{ "connect", ECONNREFUSED, RL_TRAP_TCP_REFUSED },
	};
	size_t i;

	if (!verb)
		return RL_TRAP_NONE;
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (table[i].err == err && !strncmp(verb, table[i].verb, strlen(table[i].verb)))
			return table[i].trap;
	}
	return RL_TRAP_NONE;
}

/* The trap behind a failed work completion, if it is a known one. */
enum rl_trap rl_trap_of_wc(enum ibv_wc_status status)
{
	switch (status) {
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return RL_TRAP_RNR;
	case IBV_WC_REM_ACCESS_ERR:
		return RL_TRAP_REMOTE_ACCESS;
	case IBV_WC_RETRY_EXC_ERR:
		return RL_TRAP_RETRY_EXC;
	default:
		return RL_TRAP_NONE;
	}
}

/*
 * Format "WHAT: REASON" into BUF, with " (hint: ...)" when TRAP has one.
 * Returns what snprintf returns. Pure, so tests can check the wording.
 */
int rl_format_failure(char *buf, size_t size, const char *what, const char *reason,
		      enum rl_trap trap)
{
	const char *hint = rl_hint(trap);

	if (hint)
		return snprintf(buf, size, "%s: %s (hint: %s)", what, reason, hint);
	return snprintf(buf, size, "%s: %s", what, reason);
}

/* Print "WHAT: REASON (hint: ...)" as one error line. */
void rl_log_failure(const char *what, const char *reason, enum rl_trap trap)
{
	char line[1024];

	rl_format_failure(line, sizeof(line), what, reason, trap);
	rl_err("%s", line);
}

/*
 * Report that VERB on an object (printf-style FMT) failed with errno ERR,
 * positive or negative, as one line. Returns -ERR, ready to return again.
 */
int rl_fail(const char *verb, int err, const char *fmt, ...)
{
	char what[256];
	int n;
	va_list ap;

	if (err < 0)
		err = -err;
	if (err == 0)
		err = EIO; /* some verbs fail without setting errno */
	n = snprintf(what, sizeof(what), "%s ", verb);
	va_start(ap, fmt);
	vsnprintf(what + n, sizeof(what) - n, fmt, ap);
	va_end(ap);
	rl_log_failure(what, strerror(err), rl_trap_of_errno(verb, err));
	return -err;
}

/*
 * Report a failed work completion as one line naming WHAT it was for, e.g.
 * "RDMA write (wr_id 3): remote access error (hint: ...)". Returns -EIO.
 */
int rl_fail_wc(const char *what, const struct ibv_wc *wc)
{
	char obj[160];

	snprintf(obj, sizeof(obj), "%s (wr_id %llu)", what, (unsigned long long)wc->wr_id);
	rl_log_failure(obj, ibv_wc_status_str(wc->status), rl_trap_of_wc(wc->status));
	return -EIO;
}
