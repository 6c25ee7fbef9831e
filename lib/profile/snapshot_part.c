/* SPDX-License-Identifier: MIT */
/*
 * One service's part of a snapshot taken for several: the collector
 * records every traced process in the same maps, keyed by thread, and
 * knows each process's service (the traced map's value). Each service's
 * model is then built from its part exactly as a single service's is.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile_int.h"

static int svc_of_tgid(const struct snapshot *all, uint32_t tgid)
{
	for (size_t i = 0; i < all->nprocs; i++)
		if (all->procs[i].tgid == tgid)
			return all->procs[i].svc;
	return -1;
}


/* Copies the n records of size sz at src that keep() accepts. */
static void *filter(const void *src, size_t n, size_t sz, size_t *out_n,
		    bool (*keep)(const void *rec, const void *ctx), const void *ctx)
{
	char *dst = malloc(n ? n * sz : 1);

	*out_n = 0;
	if (!dst)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *rec = (const char *)src + i * sz;

		if (keep(rec, ctx))
			memcpy(dst + (*out_n)++ * sz, rec, sz);
	}
	return dst;
}

struct part_ctx {
	const struct snapshot *all;
	unsigned svc;
	struct idmap tids;	/* the part's threads: a lookup per statistic */
};

static bool has_thread(const struct part_ctx *c, uint32_t tid)
{
	uint32_t v;

	return idmap_get(&c->tids, tid, &v);
}

static bool keep_thread(const void *rec, const void *ctx)
{
	const struct part_ctx *c = ctx;

	return svc_of_tgid(c->all, ((const struct thread_rec *)rec)->info.tgid) == (int)c->svc;
}

static bool keep_stat(const void *rec, const void *ctx)
{
	return has_thread(ctx, ((const struct stat_rec *)rec)->key.tid);
}

/* A wake-up belongs to the woken thread's service (a thread of another
 * service that wakes it is not one of its classes). */
static bool keep_wake(const void *rec, const void *ctx)
{
	const struct wake_rec *w = rec;

	return has_thread(ctx, w->key.wakee) && has_thread(ctx, w->key.waker);
}

static bool keep_outbound(const void *rec, const void *ctx)
{
	return ((const struct outbound_rec *)rec)->key.svc == ((const struct part_ctx *)ctx)->svc;
}

int snapshot_part(const struct snapshot *all, unsigned svc, struct snapshot *out)
{
	struct part_ctx c = { all, svc, { 0 } };
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (svc >= MAX_SERVICES || !all->reqs_by_svc)
		return ditto_err(-EINVAL, "snapshot: no service %u", svc);
	out->reqs = all->reqs_by_svc[svc];
	/* Lost events are counted once, for all services: each says so. */
	out->reqs.dropped = 0;
	for (unsigned i = 0; i < MAX_SERVICES; i++)
		out->reqs.dropped += all->reqs_by_svc[i].dropped;
	out->threads = filter(all->threads, all->nthreads, sizeof(*all->threads), &out->nthreads,
			      keep_thread, &c);
	for (size_t i = 0; out->threads && i < out->nthreads && !err; i++)
		err = idmap_put(&c.tids, out->threads[i].tid, (uint32_t)i);
	out->stats = filter(all->stats, all->nstats, sizeof(*all->stats), &out->nstats, keep_stat,
			    &c);
	out->wakes = filter(all->wakes, all->nwakes, sizeof(*all->wakes), &out->nwakes, keep_wake,
			    &c);
	out->outbound = filter(all->outbound, all->noutbound, sizeof(*all->outbound),
			       &out->noutbound, keep_outbound, &c);
	idmap_free(&c.tids);
	if (err || !out->threads || !out->stats || !out->wakes || !out->outbound) {
		snapshot_free(out);
		return ditto_err(-ENOMEM, "out of memory");
	}
	return 0;
}
