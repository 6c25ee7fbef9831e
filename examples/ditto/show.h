/* SPDX-License-Identifier: MIT */
/* Pieces of `ditto model show`: per-service sections and value formatting. */
#ifndef DITTO_SHOW_H
#define DITTO_SHOW_H

#include <stdint.h>

#include <ditto/ditto.h>

/*
 * Formatted values are returned in a struct by value so that several can
 * appear in one printf without caller-managed buffers: fmt_bytes(x).s
 * lives until the end of the full expression.
 */
struct fmt {
	char s[48];
};

struct fmt fmt_bytes(double bytes);         /* "812 B", "1.5 KiB", "2.0 MiB" */
struct fmt fmt_ns(double ns);               /* "850 ns", "1.2 us", "3.4 ms", "1.20 s" */
struct fmt fmt_pct(double part, double whole); /* "12.5%", "-" when whole is 0 */
struct fmt fmt_ratio(double num, double den);  /* "0.253", "-" when den is 0 */
struct fmt fmt_time(uint64_t unix_s);       /* "2023-11-14 22:13:20 UTC" */
/* A string the model may not have set. */
const char *str_or_dash(const char *s);

/* Everything about one service, indented under a "service NAME" line. */
void show_service(struct ditto_service *s);

#endif /* DITTO_SHOW_H */
