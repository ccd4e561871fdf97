/* test_rdma.c: Lab 2 step 4: remote access, the MSG_MR wire format, RDMA write and read. */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "lab2.h"

/* Step 4 */

/* Register a buffer with lab2_reg_remote_mr(), let the peer do OP on it: its completion. */
static void peer_on_remote_mr(enum ibv_wr_opcode op, struct ibv_wc *wc, char *seen)
{
	struct fx_pair p;
	struct ibv_mr *mr;
	char *buf;

	fx_pair_open(&p, false, 1);
	buf = aligned_alloc(4096, LAB2_RDMA_SIZE);
	memset(buf, 0, LAB2_RDMA_SIZE);
	strcpy(buf + 100, "ours to read");
	mr = lab2_reg_remote_mr(p.c.pd, buf, LAB2_RDMA_SIZE);
	ck_assert_msg(mr, "expected an MR from lab2_reg_remote_mr, got NULL (step 4: see "
			  "docs/lab2.md#step-4)");
	ck_assert_msg(mr->addr == buf && mr->length == LAB2_RDMA_SIZE,
		      "expected the MR to cover the %d bytes given, got %zu bytes at %p",
		      LAB2_RDMA_SIZE, mr->length, mr->addr);
	strcpy(p.peer_buf, "the peer's");
	fx_peer_rdma(&p, op, 16, (uintptr_t)buf + 100, mr->rkey);
	fx_wait(p.peer_cq, wc);
	strcpy(seen, op == IBV_WR_RDMA_READ ? p.peer_buf : buf + 100);
	ibv_dereg_mr(mr);
	free(buf);
	fx_pair_close(&p);
}

RL_TEST(remote_mr_lets_the_peer_rdma_write_into_it, .step = 4, .points = 1)
{
	char seen[64];
	struct ibv_wc wc;

	peer_on_remote_mr(IBV_WR_RDMA_WRITE, &wc, seen);
	ck_assert_msg(wc.status == IBV_WC_SUCCESS,
		      "expected the peer's RDMA WRITE to succeed, got \"%s\" "
		      "(IBV_ACCESS_REMOTE_WRITE missing?)",
		      ibv_wc_status_str(wc.status));
	ck_assert_msg(strcmp(seen, "the peer's") == 0,
		      "expected \"the peer's\" written, got \"%s\"", seen);
}
END_TEST

RL_TEST(remote_mr_lets_the_peer_rdma_read_it, .step = 4, .points = 1)
{
	char seen[64];
	struct ibv_wc wc;

	peer_on_remote_mr(IBV_WR_RDMA_READ, &wc, seen);
	ck_assert_msg(wc.status == IBV_WC_SUCCESS,
		      "expected the peer's RDMA READ to succeed, got \"%s\" "
		      "(IBV_ACCESS_REMOTE_READ missing?)",
		      ibv_wc_status_str(wc.status));
	ck_assert_msg(strcmp(seen, "ours to read") == 0,
		      "expected \"ours to read\" read, got \"%s\"", seen);
}
END_TEST

RL_TEST(describe_mr_gives_the_rkey_not_the_lkey, .step = 4, .points = 2)
{
	static char buf[256];
	struct ibv_mr mr = { .addr = buf, .length = sizeof(buf), .lkey = 0x1111, .rkey = 0x2222 };
	struct lab2_mr_msg m = { 0 };

	lab2_describe_mr(&mr, &m);
	ck_assert_msg(m.rkey == 0x2222, "expected rkey 0x2222, got 0x%x%s", m.rkey,
		      m.rkey == 0x1111 ? ": expected rkey, got lkey?" : "");
	ck_assert_msg(m.addr == (uintptr_t)buf && m.len == sizeof(buf),
		      "expected address %p and length %zu, got 0x%llx and %u", (void *)buf,
		      sizeof(buf), (unsigned long long)m.addr, m.len);
}
END_TEST

RL_TEST(encode_mr_puts_each_field_big_endian_at_its_offset, .step = 4, .points = 2)
{
	static const uint8_t want[LAB2_MR_WIRE_LEN] = {
		0,    0,    0,    3,                            /* type MR */
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* addr */
		0xa1, 0xb2, 0xc3, 0xd4,                         /* rkey */
		0,    0,    0x10, 0,                            /* len */
	};
	struct lab2_mr_msg m = { .addr = 0x0102030405060708ull, .rkey = 0xa1b2c3d4, .len = 4096 };
	uint8_t buf[64];
	int i, ret;

	memset(buf, 0xee, sizeof(buf));
	ret = lab2_encode_mr(&m, buf, sizeof(buf));
	ck_assert_msg(ret == LAB2_MR_WIRE_LEN, "expected lab2_encode_mr to return %d, got %d",
		      LAB2_MR_WIRE_LEN, ret);
	for (i = 0; i < LAB2_MR_WIRE_LEN; i++)
		ck_assert_msg(buf[i] == want[i], "byte %d: expected 0x%02x, got 0x%02x", i, want[i],
			      buf[i]);
	ret = lab2_encode_mr(&m, buf, LAB2_MR_WIRE_LEN - 1);
	ck_assert_msg(ret == -EMSGSIZE, "expected -EMSGSIZE for a 19-byte buffer, got %d", ret);
}
END_TEST

RL_TEST(decode_mr_reads_each_field_and_refuses_other_bytes, .step = 4, .points = 1)
{
	uint8_t buf[LAB2_MR_WIRE_LEN] = {
		0,    0,    0, 3, 0,    0,    0x7f, 0x12, 0x34, 0x56,
		0x78, 0x9a, 0, 0, 0x12, 0x34, 0,    0,    0x20, 0,
	};
	struct lab2_mr_msg m = { 0 };
	int ret;

	ret = lab2_decode_mr(buf, sizeof(buf), &m);
	ck_assert_msg(ret == 0, "expected lab2_decode_mr to return 0, got %d", ret);
	ck_assert_msg(m.addr == 0x7f123456789aull && m.rkey == 0x1234 && m.len == 8192,
		      "expected addr 0x7f123456789a rkey 0x1234 len 8192, got 0x%llx 0x%x %u",
		      (unsigned long long)m.addr, m.rkey, m.len);
	ret = lab2_decode_mr(buf, sizeof(buf) - 1, &m);
	ck_assert_msg(ret == -EMSGSIZE, "expected -EMSGSIZE for 19 bytes, got %d", ret);
	buf[3] = LAB2_MSG_DONE;
	ret = lab2_decode_mr(buf, sizeof(buf), &m);
	ck_assert_msg(ret == -EPROTO, "expected -EPROTO for a message of type DONE, got %d", ret);
}
END_TEST

RL_TEST(post_rdma_writes_into_and_reads_from_the_peers_buffer, .step = 4, .points = 2)
{
	struct ibv_wc wc;
	struct fx_pair p;

	fx_pair_open(&p, false, 1);
	strcpy(p.c.rdma_buf, "written by us");
	strcpy(p.peer_buf + 512, "the peer's own");
	fx_ok(lab2_post_rdma(&p.c, IBV_WR_RDMA_WRITE, p.c.rdma_buf, 14, (uintptr_t)p.peer_buf + 64,
			     p.peer_mr->rkey),
	      "lab2_post_rdma (WRITE)", 4);
	fx_wait(p.c.cq, &wc);
	ck_assert_msg(
		wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_WRITE &&
			wc.wr_id == LAB2_WR_WRITE,
		"expected a successful RDMA WRITE with wr_id %d, got opcode %d wr_id %llu \"%s\"",
		LAB2_WR_WRITE, wc.opcode, (unsigned long long)wc.wr_id,
		ibv_wc_status_str(wc.status));
	ck_assert_msg(strcmp(p.peer_buf + 64, "written by us") == 0,
		      "expected \"written by us\" in the peer's buffer, got \"%.14s\"",
		      p.peer_buf + 64);
	fx_ok(lab2_post_rdma(&p.c, IBV_WR_RDMA_READ, p.c.rdma_buf + 1024, 15,
			     (uintptr_t)p.peer_buf + 512, p.peer_mr->rkey),
	      "lab2_post_rdma (READ)", 4);
	fx_wait(p.c.cq, &wc);
	ck_assert_msg(
		wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_READ &&
			wc.wr_id == LAB2_WR_READ,
		"expected a successful RDMA READ with wr_id %d, got opcode %d wr_id %llu \"%s\"",
		LAB2_WR_READ, wc.opcode, (unsigned long long)wc.wr_id,
		ibv_wc_status_str(wc.status));
	ck_assert_msg(strcmp(p.c.rdma_buf + 1024, "the peer's own") == 0,
		      "expected \"the peer's own\" read into our buffer, got \"%.15s\"",
		      p.c.rdma_buf + 1024);
	fx_pair_close(&p);
}
END_TEST
