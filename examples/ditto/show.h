/* SPDX-License-Identifier: MIT */
/* Pieces of `ditto model show`: per-service sections and value formatting. */
#ifndef DITTO_SHOW_H
#define DITTO_SHOW_H

#include <stddef.h>
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
/* A fact the profiler may not have learnt (the host's CPU model). */
const char *str_or_unknown(const char *s);
/*
 * A value the model may not hold, read by path (printf-style): "unknown"
 * when absent, so an unmeasured fact never reads as 0 ("0 connections").
 */
struct fmt opt_count(const struct ditto_model *m, const char *path_fmt, ...)
	__attribute__((format(printf, 2, 3)));              /* "42" */
struct fmt opt_rate(const struct ditto_model *m, const char *path_fmt, ...)
	__attribute__((format(printf, 2, 3)));              /* "1234" (%.0f) */
struct fmt opt_bytes(const struct ditto_model *m, const char *path_fmt, ...)
	__attribute__((format(printf, 2, 3)));              /* fmt_bytes() */

/* Everything about service i of m, indented under a "service NAME" line. */
void show_service(struct ditto_model *m, size_t i);
/* Service si's calls to other endpoints (nothing when it made none). */
void show_outbound(struct ditto_model *m, size_t si);
/* The RPC graph: nodes, a row per edge, the traces read (nothing when the
 * model has no graph). */
void show_graph(struct ditto_model *m);

#endif /* DITTO_SHOW_H */
