/* SPDX-License-Identifier: MIT */
/* Human-readable values for `ditto model show` (see show.h). */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "show.h"

struct fmt fmt_bytes(double bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	struct fmt f;
	int u = -1;

	while (bytes >= 1024 && u < 3) {
		bytes /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(f.s, sizeof(f.s), "%.0f B", bytes);
	else
		snprintf(f.s, sizeof(f.s), "%.1f %s", bytes, units[u]);
	return f;
}

struct fmt fmt_ns(double ns)
{
	struct fmt f;

	if (ns < 1e3)
		snprintf(f.s, sizeof(f.s), "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(f.s, sizeof(f.s), "%.1f us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(f.s, sizeof(f.s), "%.1f ms", ns / 1e6);
	else
		snprintf(f.s, sizeof(f.s), "%.2f s", ns / 1e9);
	return f;
}

struct fmt fmt_pct(double part, double whole)
{
	struct fmt f;

	if (whole > 0)
		snprintf(f.s, sizeof(f.s), "%.1f%%", 100.0 * part / whole);
	else
		snprintf(f.s, sizeof(f.s), "-");
	return f;
}

struct fmt fmt_ratio(double num, double den)
{
	struct fmt f;

	if (den > 0)
		snprintf(f.s, sizeof(f.s), "%.3f", num / den);
	else
		snprintf(f.s, sizeof(f.s), "-");
	return f;
}

struct fmt fmt_time(uint64_t unix_s)
{
	struct fmt f;
	time_t t = (time_t)unix_s;
	struct tm tm;

	/* UTC: the same file reads the same on every host. */
	if (!gmtime_r(&t, &tm) || !strftime(f.s, sizeof(f.s), "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(f.s, sizeof(f.s), "%llu", (unsigned long long)unix_s);
	return f;
}

const char *str_or_dash(const char *s)
{
	return s && *s ? s : "-";
}

const char *str_or_unknown(const char *s)
{
	return s && *s ? s : "unknown";
}

enum opt_kind { OPT_COUNT, OPT_RATE, OPT_BYTES };

__attribute__((format(printf, 3, 0)))
static struct fmt opt_value(const struct ditto_model *m, enum opt_kind kind, const char *path_fmt,
			    va_list ap)
{
	char path[256];
	struct fmt f;
	double v;

	vsnprintf(path, sizeof(path), path_fmt, ap);
	/* Absent (-DITTO_ENOTFOUND) or not a number: not known. */
	if (ditto_model_get_f64(m, path, &v) < 0) {
		snprintf(f.s, sizeof(f.s), "unknown");
		return f;
	}
	if (kind == OPT_BYTES)
		return fmt_bytes(v);
	snprintf(f.s, sizeof(f.s), "%.0f", v);
	return f;
}

#define OPT_FN(name, kind)                                                     \
	struct fmt name(const struct ditto_model *m, const char *path_fmt, ...) \
	{                                                                      \
		va_list ap;                                                    \
		struct fmt f;                                                  \
                                                                               \
		va_start(ap, path_fmt);                                        \
		f = opt_value(m, kind, path_fmt, ap);                          \
		va_end(ap);                                                    \
		return f;                                                      \
	}

OPT_FN(opt_count, OPT_COUNT)
OPT_FN(opt_rate, OPT_RATE)
OPT_FN(opt_bytes, OPT_BYTES)
