/* SPDX-License-Identifier: MIT */
/* Small helpers of the feedback loop: ports, the clone directory and
 * sums of metrics. */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_int.h"
#include "synth_int.h"
#include "tune_int.h"

void tune_remember(double *x, double *y, size_t *n, size_t cap, double xv, double yv)
{
	if (*n == cap) {
		memmove(x, x + 1, sizeof(x[0]) * (cap - 1));
		memmove(y, y + 1, sizeof(y[0]) * (cap - 1));
		(*n)--;
	}
	x[*n] = xv;
	y[(*n)++] = yv;
}

void tune_clone_cmd_init(struct tune_clone_cmd *c, const char *dir, unsigned port)
{
	snprintf(c->bin, sizeof(c->bin), "%s/clone", dir);
	snprintf(c->port, sizeof(c->port), "%u", port);
	c->argv[0] = c->bin;
	c->argv[1] = "--port";
	c->argv[2] = c->port;
	c->argv[3] = "--max-seconds";
	c->argv[4] = "3600";
	c->argv[5] = NULL;
}

int tune_dir_check(const char *dir)
{
	int err = synth_tree_replaceable(dir);

	if (err == -ENOENT)
		return 0;
	if (err == -ENOTEMPTY)
		ditto_err(err, "tune: %s holds files that are not a clone tree: give an empty or "
			  "new directory", dir);
	else if (err == -ENOTDIR)
		ditto_err_prefix("tune");
	else if (err)
		ditto_err(err, "tune: %s: %s", dir, strerror(-err));
	return err;
}

void tune_progress(ditto_tune_progress_fn fn, void *user, unsigned i, double e,
		   const char *worst, bool best, const char *note)
{
	if (fn)
		fn(i, e, worst, best, note, user);
	else
		ditto_log(DITTO_LOG_INFO, "tune: iteration %u: max error %.1f%% (%s)%s: %s", i,
			  100 * e, worst, best ? ", best so far" : "", note);
}

int tune_keep_best(const char *try_dir, const char *dir)
{
	char old[4200];
	struct stat st;

	snprintf(old, sizeof(old), "%s.old", dir);
	synth_rm_tree(old);
	if (!stat(dir, &st) && rename(dir, old))
		return ditto_err(-errno, "tune: %s: %s", dir, strerror(errno));
	if (rename(try_dir, dir)) {
		int err = -errno;

		rename(old, dir);	/* dir keeps the best so far */
		return ditto_err(err, "tune: %s: %s", dir, strerror(-err));
	}
	synth_rm_tree(old);
	return 0;
}

void tune_values_copy(struct ditto_values *dst, const struct ditto_values *src)
{
	for (size_t i = 0; i < ditto_values_size(src); i++) {
		const char *k;
		double v;

		if (!ditto_values_entry(src, i, &k, &v))
			ditto_values_set(dst, k, v);
	}
}

int tune_metrics_add(struct ditto_metrics *dst, const struct ditto_metrics *src, double w)
{
	int err = 0;

	for (size_t i = 0; !err && i < ditto_metrics_count(src); i++) {
		const char *name;
		double v, acc = 0;

		if (ditto_metrics_entry(src, i, &name, &v))
			continue;
		ditto_metrics_get(dst, name, &acc);
		err = ditto_metrics_set(dst, name, acc + w * v);
	}
	return err;
}

struct ditto_loadgen_opts tune_base_load(struct ditto_model *m, struct ditto_service *s,
					   const struct ditto_tune_opts *o, unsigned port)
{
	unsigned f = ditto_service_framing(s);

	return (struct ditto_loadgen_opts){ .sz = sizeof(struct ditto_loadgen_opts), .port = port,
					    .framing = f ? f : DITTO_FRAMING_RAW, .model = m,
					    .service = ditto_service_name(s), .seed = o->seed,
					    .mode = DITTO_LOAD_CLOSED, .connections = o->connections,
					    .requests = o->requests, .stop = o->stop };
}
