/* SPDX-License-Identifier: MIT */
/* Printing a comparison: `ditto model diff` and `ditto graph compare`. */
#ifndef DITTO_DIFF_PRINT_H
#define DITTO_DIFF_PRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <ditto/ditto.h>

/* Exit codes of both commands (diff(1)'s): 1 is "they differ", so an
 * unreadable file cannot be taken for a difference. */
enum { DIFF_WITHIN = 0, DIFF_BEYOND = 1, DIFF_TROUBLE = 2 };

/* The rows as a table (path, kind, a, b, error) or as the library's JSON;
 * CLI_OK, or a CLI error code after a message. */
int diff_print(const struct ditto_comparison *cmp, bool json);
/* The largest error of all rows and the path where it is ("-" when none). */
void diff_worst(const struct ditto_comparison *all, double *worst, char *path, size_t n);
/* "models within the bound ..." or "models differ beyond the bound ...". */
void diff_verdict(const char *what, double bound, double worst, const char *where);
/* A name on one line: tab and newline (the only control characters a
 * valid name holds) as \xNN, as the library's messages show them. */
void diff_print_name(FILE *f, const char *name);

#endif /* DITTO_DIFF_PRINT_H */
