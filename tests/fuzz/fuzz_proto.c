/*
 * fuzz_proto.c: libFuzzer target for the Lab 3 decoder (make fuzz). Any
 * bytes must decode to a message or an error code without touching memory
 * outside the input; a message that decodes must encode back to the same
 * bytes and decode to the same fields.
 */
#include <stdlib.h>
#include <string.h>

#include "rdmalab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t again[RL_PROTO_MAX_MSG];
	struct rl_msg msg, back;
	int n;

	if (rl_proto_decode(data, size, &msg) != RL_PERR_NONE)
		return 0;
	n = rl_proto_encode(again, sizeof(again), &msg);
	if (n < 0 || (size_t)n != size || memcmp(again, data, size))
		abort(); /* decode accepted what encode would not write */
	if (rl_proto_decode(again, (size_t)n, &back) != RL_PERR_NONE || back.type != msg.type ||
	    memcmp(&back.u, &msg.u, sizeof(msg.u)))
		abort();
	return 0;
}
