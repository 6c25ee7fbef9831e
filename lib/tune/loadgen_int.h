/* SPDX-License-Identifier: MIT */
/*
 * Internal interface of the load generator: the request encoders and
 * response parsers of every wire framing (loadgen_wire.c) and the result
 * object the event loop fills (load_result.c).
 */
#ifndef DITTO_LOADGEN_INT_H
#define DITTO_LOADGEN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core_int.h"

/* Keys are "key:NNNNNN" drawn uniformly from this many; with a model
 * from the few set before the clock starts, so that reads hit. */
#define LOADGEN_KEYS 10000
#define LOADGEN_MODEL_KEYS 64
/* Largest answer accepted, and longest line or header block. */
#define LOADGEN_FRAME_MAX (64u << 20)
#define LOADGEN_LINE_MAX (64u << 10)

struct loadgen_req {
	bool write;		/* SET / set / POST; ignored where the framing has no writes */
	uint64_t key;		/* < LOADGEN_KEYS */
	uint64_t value_bytes;	/* value of a write; payload of length-prefixed and raw */
	const char *host;	/* HTTP Host header */
	const char *path;	/* HTTP request target (NULL: "/") */
};

/* Whether path may be the target of our HTTP requests: '/' first,
 * printable ASCII without spaces, at most 1024 bytes. */
bool loadgen_http_path_ok(const char *path);
/* Whether the framing has requests that read and requests that write. */
bool loadgen_has_writes(unsigned framing);
/* Append one request in the framing's encoding to out (out->oom on no
 * memory). -EINVAL for a framing without an encoder. */
int loadgen_encode(unsigned framing, const struct loadgen_req *r, struct dbuf *out);
/* Append what opens a connection of the framing (PostgreSQL's startup,
 * MySQL's handshake response) to out: false when it has none. Its answer
 * is one loadgen_parse() answer, or one loadgen_my_packet() for MySQL. */
bool loadgen_greeting(unsigned framing, struct dbuf *out);
/* Whether the service speaks first (MySQL's handshake, one
 * loadgen_my_packet()) before the greeting is sent. */
bool loadgen_server_first(unsigned framing);
/* One MySQL packet at the start of p[0..n), as loadgen_parse(); *failed
 * when it is an ERR packet or asks for another authentication method. */
long loadgen_my_packet(const char *p, size_t n, bool *failed);
/* Bytes a write (or the only kind of request) adds around its value. */
uint64_t loadgen_overhead(unsigned framing, const char *host);

/* Bytes on the wire of a write and a read around a value, and of the
 * answers a key-value store gives them (the read hitting that value). */
struct loadgen_costs {
	uint64_t req_write, req_read, ans_write, ans_read;
	/* Writes get a fixed ack from the service and its clone alike, and
	 * reads a hit drawn from the model's answers at least ans_read(0)
	 * long (memcached). A RESP clone draws every answer, a write's too,
	 * from all of them: there only the mean answer can be matched. */
	bool acked_writes;
};

/* false for framings whose answers do not follow from the request (HTTP,
 * length-prefixed, raw). */
bool loadgen_costs(unsigned framing, uint64_t value_bytes, struct loadgen_costs *c);

/*
 * The one answer at the start of p[0..n): its length when complete, 0 when
 * more bytes are needed, -1 when the bytes cannot be an answer. *failed is
 * set when the complete answer is an error reply of the protocol (RESP
 * -ERR, memcached ERROR or a binary status other than "not found", HTTP 4xx and 5xx,
 * a PostgreSQL ErrorResponse, a MySQL ERR packet).
 */
long loadgen_parse(unsigned framing, const char *p, size_t n, bool *failed);

/* --- the result (load_result.c) --- */
/* Kinds of enum ditto_load_error are 1..LOADGEN_ERR_KINDS. */
#define LOADGEN_ERR_KINDS 7

struct ditto_load_result {
	uint64_t completed, errors;
	uint64_t errors_by[LOADGEN_ERR_KINDS + 1];	/* by enum ditto_load_error; [0] unused */
	uint64_t bytes_sent, bytes_received;
	double offered_qps, elapsed_s;
	uint64_t max_ns;
	double sum_ns;		/* exact mean, not the histogram's midpoints */
	struct ditto_hist *latency;
};

/* NULL (with the message set) on no memory. */
struct ditto_load_result *loadgen_result_new(double offered_qps);
/* Record one answered request; -ENOMEM/-EOVERFLOW from the histogram. */
int loadgen_result_add(struct ditto_load_result *r, uint64_t latency_ns);
/* Record one failed request of an enum ditto_load_error kind. */
void loadgen_result_error(struct ditto_load_result *r, int kind);
/* "timeout 8, reset 2": each kind with errors, in enum order ("none"
 * without errors). */
void loadgen_result_kinds(const struct ditto_load_result *r, char *buf, size_t len);

#endif /* DITTO_LOADGEN_INT_H */
