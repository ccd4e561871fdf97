/*
 * refsend.h: a minimal, blocking Lab 3 sender for the receiver's tests. It
 * follows docs/protocol.md step by step, and can misbehave on purpose in
 * the ways the receiver must survive.
 */
#ifndef RDMALAB_REFSEND_H
#define RDMALAB_REFSEND_H

#include "rdmalab.h"

/* Types */

/* How the sender breaks the protocol, on purpose. */
enum rs_misbehave {
	RS_GOOD = 0,
	RS_BAD_MAGIC,    /* FILE_INFO with a wrong magic */
	RS_BAD_VERSION,  /* FILE_INFO with version 2 */
	RS_TRUNCATED,    /* FILE_INFO one byte short */
	RS_ID_FIRST,     /* STUDENT_ID instead of FILE_INFO */
	RS_DONE_EARLY,   /* DONE instead of writing the first window */
	RS_BAD_ID,       /* a student ID with a space in it */
	RS_LONG_ID,      /* a student ID of 65 characters */
	RS_WRONG_WINDOW, /* WINDOW_DONE naming the next window */
	RS_BAD_RKEY,     /* write with a wrong rkey */
	RS_PAST_WINDOW,  /* write one byte more than the window */
	RS_WRONG_HASH,   /* announce a wrong hash, then ask for a key anyway */
	RS_SILENT,       /* connect and say nothing */
	RS_STALL,        /* take the first window, then say nothing */
	RS_OVERSIZE,     /* a 300-byte message */
	RS_LEAVE,        /* disconnect at sender step leave_at */
	RS_HUGE_FILE,    /* FILE_INFO of 2^40 + 1 bytes, past the protocol's limit */
	RS_SEND_IMM,     /* FILE_INFO sent as a SEND with immediate */
	RS_WRITE_IMM,    /* the first window written with an RDMA WRITE with immediate */
	RS_NO_RECV,      /* post no receive: the receiver's first reply finds none */
	RS_ID_WITH_DONE, /* STUDENT_ID right after DONE, before reading RESULT */
};

struct rs_opts {
	const char *addr;
	uint16_t port;
	const uint8_t *data; /* the file */
	uint64_t size;
	const char *id;
	enum rs_misbehave misbehave;
	int leave_at;     /* RS_LEAVE: 1 connected, 2 FILE_INFO sent, 3 first window written,
			   4 DONE sent, 5 RESULT received */
	int timeout_ms;   /* for each wait */
	bool rnr_forever; /* connect with rnr_retry_count 7: the receiver's replies retry for ever */
};

struct rs_result {
	char peer[64];         /* our address as the receiver sees it, "10.0.0.1:4242" (set
				  once the route is resolved, so a rejected run has it too) */
	int windows;           /* windows written */
	bool rejected;         /* the connect was rejected */
	bool got_result, good; /* RESULT came, and said good */
	char key[RL_PROTO_MAX_KEY + 1];
	bool got_error; /* an ERROR came (or was in the REJECT) */
	uint16_t error_code;
	char error_text[RL_PROTO_MAX_TEXT + 1];
	char what[160]; /* how it ended, for test messages */
};

/* Macros */

#define RS_DEFAULT_TIMEOUT_MS 20000

/* refsend.c */
/* Send O's file and ask for a key; 0 if a key came, else -1. R says what happened. */
int rs_send_file(const struct rs_opts *o, struct rs_result *r);

#endif
