/* SPDX-License-Identifier: MIT */
/*
 * The syscall description table: for each x86-64 system call libditto
 * knows, which argument is the fd, the size, the flags and the offset,
 * and what the call does (moves data in or out, returns a count, accepts,
 * connects, closes). It drives the BPF capture now and the clone's replay
 * later: one table, in the spirit of R2's annotated interfaces.
 */
#ifndef DITTO_SYSCALL_TABLE_H
#define DITTO_SYSCALL_TABLE_H

#include <stddef.h>

#include "syscall_bits.h"

enum sc_class {
	SC_OTHER = 0,
	SC_NET,		/* socket data and connections */
	SC_IO,		/* read/write family on any fd */
	SC_MUX,		/* epoll, poll, select */
	SC_SYNC,	/* futex */
	SC_SLEEP,
	SC_FS,		/* open, stat, close, fsync */
	SC_MEM,
	SC_PROC,	/* clone, exit */
};

struct syscall_desc {
	const char *name;
	unsigned short nr;
	/* Argument indexes, -1 when absent (the BPF collector's struct dt_desc
	 * takes them from here). */
	signed char fd, size, iov, iovcnt, flags, offset;
	unsigned short bits;	/* SD_* of bpf/collector.h */
	enum sc_class cls;
};

extern const struct syscall_desc syscall_table[];
extern const size_t syscall_table_len;

/* Description of nr, or NULL when the table does not describe it. */
const struct syscall_desc *syscall_by_nr(unsigned nr);
const struct syscall_desc *syscall_by_name(const char *name);
/* Name of any x86-64 syscall number (generated from <asm/unistd_64.h>), or NULL. */
const char *syscall_name_of(unsigned nr);

#endif /* DITTO_SYSCALL_TABLE_H */
