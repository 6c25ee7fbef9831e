/* SPDX-License-Identifier: MIT */
/* Modelled system call -> how the clone replays it, from the syscall
 * description table that drives the profiler's capture. */
#ifndef DITTO_REPLAY_MAP_H
#define DITTO_REPLAY_MAP_H

#include <stdbool.h>
#include <stdint.h>

#include <ditto/model.h>

struct replay_entry {
	long nr;		/* the call the clone issues */
	const char *kind;	/* RT_REPLAY_* name for clone_config.c */
	bool file;		/* works on the scratch file */
	bool positional;	/* takes an offset argument */
	unsigned iovcnt;	/* > 0: vectored */
};

/* 0 and *e filled when the clone replays `name` on an fd of kind k per
 * request; -ENOENT when the skeleton makes it itself (socket data,
 * multiplexing, connections) or the clone has no safe replay for it. */
int replay_map(const char *name, enum ditto_fd_kind k, struct replay_entry *e);

bool replay_is_net_read(const char *name);
bool replay_is_net_write(const char *name);
bool replay_is_vectored(const char *name);
/* Number of a described call, -1 when unknown. */
long replay_nr(const char *name);
/* Lower end of h's fullest bucket (buffer sizes are mostly powers of
 * two, the lower ends of log2 buckets), dflt when h is empty. */
uint64_t replay_mode(const struct ditto_hist *h, uint64_t dflt);
/* Buffer size a socket read asks for, from its size histogram. */
uint32_t replay_read_size(const struct ditto_hist *size);

#endif /* DITTO_REPLAY_MAP_H */
