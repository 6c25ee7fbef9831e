/* SPDX-License-Identifier: MIT */
/* Human-readable values for `ditto model show` (see show.h). */
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
