/* SPDX-License-Identifier: MIT */
/*
 * Shared by the CPU ground-truth programs: `PROG MODE [SIZE] [ITERATIONS]`
 * parsing, the "ready" handshake and the repeat driver.
 */
#ifndef GT_COMMON_H
#define GT_COMMON_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct gt_args {
	const char *mode;
	uint64_t size;		/* bytes, or N of gt_mix dep */
	uint64_t iters;		/* 0: forever */
};

static inline int gt_number(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || end == s || *end || *s == '-' ? -1 : 0;
}

/* Exits with status 2 and the usage line on bad arguments. */
static inline void gt_parse(int argc, char **argv, uint64_t size, const char *usage,
			    struct gt_args *a)
{
	a->mode = argc > 1 ? argv[1] : NULL;
	a->size = size;
	a->iters = 0;
	if (argc < 2 || argc > 4 || (argc > 2 && gt_number(argv[2], &a->size)) ||
	    (argc > 3 && gt_number(argv[3], &a->iters))) {
		fprintf(stderr, "usage: %s %s\n", argv[0], usage);
		exit(2);
	}
}

/* Data is set up: the next instruction of interest is the steady loop. */
static inline void gt_ready(void)
{
	fputs("ready\n", stdout);
	fflush(stdout);
}

/*
 * Run `body` ITERATIONS times, or forever when 0. The forever loop is a
 * plain jmp, so the hot loop's own branches are the only conditional ones
 * a profiler attached to it sees.
 */
#define GT_REPEAT(iters, body)						\
	do {								\
		if (!(iters))						\
			for (;;) {					\
				body;					\
			}						\
		for (uint64_t gt_n_ = 0; gt_n_ < (iters); gt_n_++) {	\
			body;						\
		}							\
	} while (0)

#endif /* GT_COMMON_H */
