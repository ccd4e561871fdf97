/* run_mc.c: the program's multicast commands, mc-send and mc-recv (step 3, given). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lab5.h"

#define MC_COUNT 10       /* datagrams, when COUNT is not given */
#define MC_SIZE 64        /* payload bytes, when SIZE is not given */
#define MC_MEMBERS_MAX 56 /* rxe's QPs per group */
#define MC_HELLO_MS 60000 /* the longest mc-send waits for the next member's hello */

/* Argument I of ARGV as a number from LO to HI into *OUT, or one line and false. */
static bool mc_arg(const char *cmd, const char *name, const char *arg, unsigned long lo,
		   unsigned long hi, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v < lo || v > hi) {
		rl_err("%s: %s must be a number from %lu to %lu, got %s", cmd, name, lo, hi, arg);
		return false;
	}
	*out = (uint32_t)v;
	return true;
}

/*
 * Wait for HELLOs from MEMBERS other QPs of the group (a member says hello
 * once its receives are posted), each receive posted again. Returns 0, or
 * a negative errno when one did not come in time.
 */
static int mc_wait_hellos(struct lab5_ud *u, uint32_t members)
{
	uint32_t seen[MC_MEMBERS_MAX], n = 0, i;
	int ret = 0, timeout_ms = u->timeout_ms;
	struct lab5_msg m;

	/* A hello sent before this member joined is lost: start mc-recv after it. */
	printf("joined as a full member: waiting for %u members' hellos (start mc-recv now)\n",
	       members);
	fflush(stdout);
	u->timeout_ms = MC_HELLO_MS;
	while (!ret && n < members) {
		ret = lab5_recv_msg(u, &m);
		if (ret) {
			rl_err("mc-send: %u of %u members said hello", n, members);
			break;
		}
		ret = lab5_post_recv_scatter(u, m.slot);
		if (ret)
			break;
		if (m.hdr.kind != LAB5_MSG_HELLO || m.src_qp == u->qp->qp_num)
			continue;
		for (i = 0; i < n && seen[i] != m.src_qp; i++)
			;
		if (i == n) {
			seen[n++] = m.src_qp;
			printf("hello from QP %u (%u of %u)\n", m.src_qp, n, members);
		}
	}
	u->timeout_ms = timeout_ms;
	return ret;
}

int lab5_cmd_mc_send(int argc, char **argv)
{
	uint32_t count = MC_COUNT, size = MC_SIZE, members = 0, i;
	struct lab5_ud u = { 0 };
	uint8_t *payload;
	int ret;

	if (argc < 2 || argc > 5) {
		rl_err("mc-send: usage: mc-send LOCAL GROUP [COUNT [SIZE [MEMBERS]]]");
		return -EINVAL;
	}
	if ((argc > 2 && !mc_arg("mc-send", "COUNT", argv[2], 1, 1000000, &count)) ||
	    (argc > 3 && !mc_arg("mc-send", "SIZE", argv[3], 0, LAB5_MAX_PAYLOAD, &size)) ||
	    (argc > 4 && !mc_arg("mc-send", "MEMBERS", argv[4], 0, MC_MEMBERS_MAX, &members)))
		return -EINVAL;
	payload = malloc(size + 1);
	if (!payload)
		return rl_fail("malloc", ENOMEM, "%u bytes", size);
	/*
	 * To hear the members' hellos it must receive: a full member. Then it
	 * only sends, and as a full member its own datagrams would come back to
	 * it: it leaves, and publishes as a send-only member.
	 */
	if (members) {
		ret = lab5_mc_join(&u, argv[0], argv[1], false);
		if (!ret)
			ret = mc_wait_hellos(&u, members);
		if (!ret)
			ret = lab5_mc_leave(&u);
		lab5_ud_close(&u);
		if (ret)
			goto out;
	}
	ret = lab5_mc_join(&u, argv[0], argv[1], true);
	if (!ret)
		printf("joined %s as a send-only member; datagrams of up to %u bytes\n", argv[1],
		       u.mtu);
	for (i = 0; !ret && i < count; i++) {
		memset(payload, 'a' + (int)(i % 26), size);
		ret = lab5_send_msg(&u, LAB5_MSG_DATA, payload, size);
	}
	if (!ret)
		printf("sent %u datagrams of %u payload bytes to %s\n", count, size, argv[1]);
	if (u.joined && lab5_mc_leave(&u) && !ret)
		ret = -EIO;
	lab5_ud_close(&u);
out:
	free(payload);
	return ret;
}

int lab5_cmd_mc_recv(int argc, char **argv)
{
	uint32_t count = MC_COUNT, got = 0, missing = 0, disorder = 0, next = 0;
	struct lab5_ud u = { 0 };
	struct lab5_msg m;
	int ret;

	if (argc < 2 || argc > 3) {
		rl_err("mc-recv: usage: mc-recv LOCAL GROUP [COUNT]");
		return -EINVAL;
	}
	if (argc > 2 && !mc_arg("mc-recv", "COUNT", argv[2], 1, 1000000, &count))
		return -EINVAL;
	ret = lab5_mc_join(&u, argv[0], argv[1], false);
	if (!ret) {
		printf("joined %s as a full member; saying hello\n", argv[1]);
		ret = lab5_send_msg(&u, LAB5_MSG_HELLO, NULL, 0);
	}
	while (!ret && got < count) {
		ret = lab5_recv_msg(&u, &m);
		if (ret)
			break;
		ret = lab5_post_recv_scatter(&u, m.slot);
		/* Our own hello comes back too: the group includes us. */
		if (ret || m.hdr.kind != LAB5_MSG_DATA)
			continue;
		printf("seq %u len %u\n", m.hdr.seq, m.payload_len);
		if (got && m.hdr.seq < next)
			disorder++;
		else if (m.hdr.seq > next)
			missing += m.hdr.seq - next;
		if (!got || m.hdr.seq >= next)
			next = m.hdr.seq + 1;
		got++;
	}
	if (got)
		printf("received %u datagrams: %u missing, %u out of order\n", got, missing,
		       disorder);
	if (!ret && (missing || disorder))
		ret = -EPROTO;
	if (u.joined && lab5_mc_leave(&u) && !ret)
		ret = -EIO;
	lab5_ud_close(&u);
	return ret;
}
