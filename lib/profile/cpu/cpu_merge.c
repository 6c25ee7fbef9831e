/* SPDX-License-Identifier: MIT */
/* Add one cpu entry of a model into another (results of the stepping child). */
#include <errno.h>

#include "core_int.h"
#include "cpu_run.h"

#include <ditto/model.h>

typedef uint64_t (*get_fn)(const struct ditto_cpu *);
typedef int (*set_fn)(struct ditto_cpu *, uint64_t);
typedef struct ditto_hist *(*hist_fn)(const struct ditto_cpu *);
typedef struct ditto_hist *(*hist_ensure_fn)(struct ditto_cpu *);

/* In the order of enum cpu_count and enum cpu_hist (cpu_run.h). */
static const struct {
	get_fn get;
	set_fn set;
} counts[CPU_NCOUNTS] = {
	{ ditto_cpu_windows, ditto_cpu_set_windows },
	{ ditto_cpu_instructions, ditto_cpu_set_instructions },
	{ ditto_cpu_undecoded, ditto_cpu_set_undecoded },
	{ ditto_cpu_loads, ditto_cpu_set_loads },
	{ ditto_cpu_stores, ditto_cpu_set_stores },
	{ ditto_cpu_chased_loads, ditto_cpu_set_chased_loads },
	{ ditto_cpu_dws_cold, ditto_cpu_set_dws_cold },
	{ ditto_cpu_iws_cold, ditto_cpu_set_iws_cold },
	{ ditto_cpu_jit_instructions, ditto_cpu_set_jit_instructions },
	{ ditto_cpu_stepped_ns, ditto_cpu_set_stepped_ns },
};

/* Read from a source (creating nothing in it), and written into dst. */
static const hist_fn hists[CPU_NHISTS] = {
	ditto_cpu_insts_per_request, ditto_cpu_branches, ditto_cpu_dws, ditto_cpu_iws,
	ditto_cpu_raw, ditto_cpu_war, ditto_cpu_waw, ditto_cpu_mem_raw,
};
static const hist_ensure_fn hists_ensure[CPU_NHISTS] = {
	ditto_cpu_insts_per_request_ensure, ditto_cpu_branches_ensure, ditto_cpu_dws_ensure,
	ditto_cpu_iws_ensure, ditto_cpu_raw_ensure, ditto_cpu_war_ensure, ditto_cpu_waw_ensure,
	ditto_cpu_mem_raw_ensure,
};

int cpu_add(struct ditto_cpu *dst, const uint64_t c[CPU_NCOUNTS],
	    const struct ditto_hist *const h[CPU_NHISTS])
{
	int err = 0;

	for (size_t i = 0; i < CPU_NCOUNTS && !err; i++)
		err = counts[i].set(dst, counts[i].get(dst) + c[i]);
	for (size_t i = 0; i < CPU_NHISTS && !err; i++) {
		struct ditto_hist *d = hists_ensure[i](dst);

		err = !h[i] ? 0 : d ? ditto_hist_merge(d, h[i]) : -ENOMEM;
	}
	return err ? ditto_err(err, "cpu profile: cannot add results: %s", ditto_strerror(err)) : 0;
}

/* src NULL: an absent map, nothing to add. */
static int counts_merge(struct ditto_counts *dst, const struct ditto_counts *src)
{
	int err = dst ? 0 : -ENOMEM;

	for (size_t i = 0; src && i < ditto_counts_size(src) && !err; i++) {
		const char *key;
		uint64_t n;

		if (!(err = ditto_counts_entry(src, i, &key, &n)))
			err = ditto_counts_add(dst, key, n);
	}
	return err;
}

int cpu_merge(struct ditto_cpu *dst, const struct ditto_cpu *src)
{
	const struct ditto_hist *h[CPU_NHISTS];
	uint64_t c[CPU_NCOUNTS];
	int err;

	for (size_t i = 0; i < CPU_NCOUNTS; i++)
		c[i] = counts[i].get(src);
	for (size_t i = 0; i < CPU_NHISTS; i++)
		h[i] = hists[i](src);
	err = cpu_add(dst, c, h);
	if (!err)
		err = counts_merge(ditto_cpu_mix_ensure(dst), ditto_cpu_mix(src));
	if (!err)
		err = counts_merge(ditto_cpu_stepping_ensure(dst), ditto_cpu_stepping(src));
	return err ? ditto_err(err, "cpu profile: cannot add results: %s", ditto_strerror(err)) : 0;
}
