/* SPDX-License-Identifier: MIT */
/*
 * The thread sampler: perf samples in, one call tree per thread out, and
 * the distances and classes computed from those trees.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "threads_int.h"

struct tthread {
	struct thread_sampler_thread_info info;
	struct calltree tree;
};

struct thread_sampler {
	struct perf_sampler perf;
	struct unwinder uw;
	struct labels labels;
	bool (*traced)(int tgid, void *user);
	void *user;
	struct tthread *threads;
	size_t nthreads, cap;
	struct idmap by_tid;
	uint32_t root, partial, kernel;	/* pseudo-frame labels */
	uint64_t unwind_ns, named_end;
	struct ditto_hist *unwind_cost;	/* ns per sample: the mean hides one-off ELF loads */
	size_t cpus, modules;	/* kept past thread_sampler_stop, which closes both */
	bool stopped;
};

static bool not_self(int tgid, void *user)
{
	(void)user;
	return tgid != getpid();
}

static int pseudo_labels(struct thread_sampler *s)
{
	int err;

	/* Brackets keep them apart from any symbol name. */
	if ((err = labels_intern(&s->labels, "[thread]", &s->root)) ||
	    (err = labels_intern(&s->labels, "[partial]", &s->partial)))
		return err;
	return labels_intern(&s->labels, "[kernel]", &s->kernel);
}

int thread_sampler_new(int hz, bool (*traced)(int tgid, void *user), void *user,
	      struct thread_sampler **out)
{
	struct thread_sampler *s;
	int err;

	*out = NULL;
	if (hz < 1)
		return ditto_err(-EINVAL, "threads: sampling rate %d Hz", hz);
	s = calloc(1, sizeof(*s));
	if (!s)
		return ditto_err(-ENOMEM, "threads: out of memory");
	s->traced = traced ? traced : not_self;
	s->user = user;
	s->perf.epfd = -1;
	unwinder_init(&s->uw, &s->labels);
	s->unwind_cost = ditto_hist_new(DITTO_HIST_LOGLIN, 4);
	if (!s->unwind_cost) {
		thread_sampler_free(s);
		return ditto_err(-ENOMEM, "threads: out of memory");
	}
	if ((err = pseudo_labels(s)) || (err = perf_sampler_open(&s->perf, hz))) {
		thread_sampler_free(s);
		return err;
	}
	*out = s;
	return 0;
}

int thread_sampler_fd(const struct thread_sampler *s)
{
	return s->stopped ? -1 : s->perf.epfd;
}

static int get_thread(struct thread_sampler *s, const struct sample *smp, struct tthread **out)
{
	uint32_t idx;
	int err;

	if (idmap_get(&s->by_tid, (uint32_t)smp->tid, &idx)) {
		*out = &s->threads[idx];
		return 0;
	}
	if (s->nthreads == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		struct tthread *v = realloc(s->threads, cap * sizeof(*v));

		if (!v)
			return ditto_err(-ENOMEM, "threads: out of memory");
		s->threads = v;
		s->cap = cap;
	}
	*out = &s->threads[s->nthreads];
	(*out)->info = (struct thread_sampler_thread_info){ .tid = smp->tid, .tgid = smp->tgid };
	if ((err = calltree_init(&(*out)->tree, s->root)))
		return err;
	if ((err = idmap_put(&s->by_tid, (uint32_t)smp->tid, (uint32_t)s->nthreads))) {
		calltree_free(&(*out)->tree);
		return err;
	}
	s->nthreads++;
	return 0;
}

/*
 * Outermost frame first. A stack that did not unwind to its end hangs under
 * "[partial]": its outer frames are unknown, and placing it at the root
 * would fake a path. Kernel-mode samples end in a "[kernel]" leaf.
 */
static size_t tree_path(const struct thread_sampler *s, const struct sample *smp,
			const struct unwound *uw, uint32_t *path)
{
	size_t len = 0;

	if (!uw->complete)
		path[len++] = s->partial;
	for (size_t i = uw->n; i-- > 0;)
		path[len++] = uw->label[i];
	if (smp->kernel)
		path[len++] = s->kernel;
	return len;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int on_sample(void *arg, const struct sample *smp)
{
	struct thread_sampler *s = arg;
	uint32_t path[THREAD_SAMPLER_MAX_FRAMES + 2];
	struct unwound uw;
	struct tthread *t = NULL;
	uint64_t t0;
	int err;

	if (!s->traced(smp->tgid, s->user))
		return 0;
	if ((err = get_thread(s, smp, &t)))
		return err;
	t0 = now_ns();
	err = unwind_sample(&s->uw, smp, &uw);
	t0 = now_ns() - t0;
	s->unwind_ns += t0;
	if (err || (err = ditto_hist_add(s->unwind_cost, t0, 1)))
		return err;
	t->info.samples++;
	t->info.unwound += uw.complete;
	t->info.kernel += smp->kernel;
	s->named_end += uw.named_end;
	return calltree_add(&t->tree, path, tree_path(s, smp, &uw, path), 1);
}

static void on_exec(void *arg, int tgid)
{
	struct thread_sampler *s = arg;

	unwinder_exec(&s->uw, tgid);
}

static int read_rings(struct thread_sampler *s)
{
	const struct perf_handlers h = { on_sample, on_exec, s };

	unwinder_new_pass(&s->uw);
	return perf_sampler_read(&s->perf, &h);
}

static uint64_t total_samples(const struct thread_sampler *s)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->nthreads; i++)
		n += s->threads[i].info.samples;
	return n;
}

int thread_sampler_drain(struct thread_sampler *s)
{
	uint64_t before = total_samples(s);
	int err;

	if (s->stopped)
		return 0;
	if ((err = read_rings(s)))
		return err;
	uint64_t kept = total_samples(s) - before;

	return kept > INT32_MAX ? INT32_MAX : (int)kept;
}

void thread_sampler_stop(struct thread_sampler *s)
{
	if (!s || s->stopped)
		return;
	perf_sampler_disable(&s->perf);
	/* Keep what is already in the rings; an error here only loses those samples. */
	read_rings(s);
	s->cpus = s->perf.nrings;
	s->modules = s->uw.mods.n + (s->uw.mods.vdso != NULL);
	perf_sampler_close(&s->perf);
	unwinder_fini(&s->uw);
	s->stopped = true;
}

size_t thread_sampler_thread_count(const struct thread_sampler *s)
{
	return s->nthreads;
}

int thread_sampler_thread(const struct thread_sampler *s, size_t i,
			  struct thread_sampler_thread_info *out)
{
	if (i >= s->nthreads)
		return ditto_err(-DITTO_ENOTFOUND, "threads: no thread %zu (%zu seen)", i,
				 s->nthreads);
	*out = s->threads[i].info;
	return 0;
}

static uint64_t total_unwound(const struct thread_sampler *s)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->nthreads; i++)
		n += s->threads[i].info.unwound;
	return n;
}

double thread_sampler_unwind_success(const struct thread_sampler *s)
{
	uint64_t n = total_samples(s);

	return n ? (double)total_unwound(s) / (double)n : 0;
}

uint64_t thread_sampler_lost(const struct thread_sampler *s)
{
	return s->perf.lost;
}

void thread_sampler_stats(const struct thread_sampler *s, struct thread_sampler_stats *out)
{
	*out = (struct thread_sampler_stats){
		.read = s->perf.read,
		.kept = total_samples(s),
		.unwound = total_unwound(s),
		.named_outermost = s->named_end,
		.lost = s->perf.lost,
		.maps_reads = s->uw.maps_reads,
		.cpus = s->stopped ? s->cpus : s->perf.nrings,
		.modules = s->stopped ? s->modules : s->uw.mods.n + (s->uw.mods.vdso != NULL),
		.kernel_excluded = s->perf.exclude_kernel,
	};
	for (size_t i = 0; i < s->nthreads; i++)
		out->kernel += s->threads[i].info.kernel;
	out->unwind_us = out->kept ? (double)s->unwind_ns / 1e3 / (double)out->kept : 0;
	out->unwind_us_p50 = ditto_hist_quantile(s->unwind_cost, 0.5) / 1e3;
	out->unwind_us_p99 = ditto_hist_quantile(s->unwind_cost, 0.99) / 1e3;
}

static const struct calltree *tree_of(const struct thread_sampler *s, int tid)
{
	uint32_t idx;

	return idmap_get(&s->by_tid, (uint32_t)tid, &idx) ? &s->threads[idx].tree : NULL;
}

/* Pruned, canonically ordered trees for tids[0..n); missing threads are empty. */
static int build_trees(const struct thread_sampler *s, const int *tids, size_t n,
		       struct ted_tree *trees)
{
	uint32_t *rank = NULL;
	int err = labels_rank(&s->labels, &rank);

	for (size_t i = 0; !err && i < n; i++)
		err = ted_tree_build(tree_of(s, tids[i]), rank, TED_MIN_SHARE, TED_MAX_NODES,
				     &trees[i]);
	free(rank);
	return err;
}

/* THREAD_SAMPLER_SHAPE compares two trees from the first frame both passed
 * through with this share of their samples (the unwinder's partial
 * stacks, a few percent, aside). */
#define TRUNK_SHARE 0.9

/* t (whose tree is at root, or NOT_BUILT) holds tid's tree from root on,
 * as shares of its samples there. A thread's common root is the same for
 * most of its pairs (its first frame), so a tree is built about once. */
#define NOT_BUILT UINT32_MAX

static int shape_tree(const struct thread_sampler *s, int tid, uint32_t root,
		      const uint32_t *rank, struct ted_tree *t, uint32_t *at)
{
	int err;

	if (*at == root)
		return 0;
	ted_tree_free(t);
	*at = NOT_BUILT;
	err = ted_tree_build_at(tree_of(s, tid), root, rank, TED_MIN_SHARE, TED_MAX_NODES, t);
	if (err)
		return err;
	ted_tree_normalise(t);
	*at = root;
	return 0;
}

/* Distances by shape (THREAD_SAMPLER_SHAPE), each pair from its common roots;
 * t[0..n) is the trees' cache. */
static int shape_matrix(const struct thread_sampler *s, const int *tids, size_t n,
			struct ted_tree *t, double *d)
{
	uint32_t *rank = NULL, *at = malloc(n * sizeof(*at));
	int err = at ? labels_rank(&s->labels, &rank) : ditto_err(-ENOMEM, "threads: out of memory");

	for (size_t i = 0; at && i < n; i++)
		at[i] = NOT_BUILT;
	for (size_t i = 0; !err && i < n; i++) {
		d[i * n + i] = 0;
		for (size_t j = i + 1; !err && j < n; j++) {
			uint32_t ri, rj;

			calltree_common_roots(tree_of(s, tids[i]), tree_of(s, tids[j]), TRUNK_SHARE,
					      &ri, &rj);
			err = shape_tree(s, tids[i], ri, rank, &t[i], &at[i]);
			err = err ? err : shape_tree(s, tids[j], rj, rank, &t[j], &at[j]);
			err = err ? err : ted_distance(&t[i], &t[j], NULL, &d[i * n + j]);
			d[j * n + i] = d[i * n + j];
		}
	}
	free(rank);
	free(at);
	return err;
}

static void free_trees(struct ted_tree *trees, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ted_tree_free(&trees[i]);
	free(trees);
}

int thread_sampler_distance(const struct thread_sampler *s, int tid_a, int tid_b, double *out)
{
	int tids[2] = { tid_a, tid_b };
	struct ted_tree *t = calloc(2, sizeof(*t));
	int err;

	if (!t)
		return ditto_err(-ENOMEM, "threads: out of memory");
	err = build_trees(s, tids, 2, t);
	if (!err)
		err = ted_distance(&t[0], &t[1], NULL, out);
	free_trees(t, 2);
	return err;
}

static int distance_matrix(const struct ted_tree *t, size_t n, double *d)
{
	for (size_t i = 0; i < n; i++) {
		d[i * n + i] = 0;
		for (size_t j = i + 1; j < n; j++) {
			int err = ted_distance(&t[i], &t[j], NULL, &d[i * n + j]);

			if (err)
				return err;
			d[j * n + i] = d[i * n + j];
		}
	}
	return 0;
}

int thread_sampler_cluster(const struct thread_sampler *s, const int *tids, size_t n,
			   double threshold, unsigned flags, int *class_of, size_t *nclasses)
{
	struct ted_tree *t;
	double *d;
	int err;

	*nclasses = 0;
	if (!n)
		return 0;
	if (n > 65536)
		return ditto_err(-DITTO_ELIMIT, "threads: %zu threads to cluster", n);
	t = calloc(n, sizeof(*t));
	d = malloc(n * n * sizeof(*d));
	if (!t || !d) {
		free(t);
		free(d);
		return ditto_err(-ENOMEM, "threads: out of memory");
	}
	if (flags & THREAD_SAMPLER_SHAPE) {
		err = shape_matrix(s, tids, n, t, d);
	} else {
		err = build_trees(s, tids, n, t);
		if (!err)
			err = distance_matrix(t, n, d);
	}
	if (!err)
		err = cluster_average(d, n, threshold, class_of, nclasses);
	free_trees(t, n);
	free(d);
	return err;
}

static void dump_node(const struct thread_sampler *s, const struct calltree *t, uint32_t at,
		      int depth, uint64_t min_w, FILE *f)
{
	for (uint32_t c = t->v[at].first_child; c != CT_NONE; c = t->v[c].next_sibling) {
		if (t->v[c].weight < min_w)
			continue;
		fprintf(f, "%*s%s %llu\n", 2 * depth, "", labels_str(&s->labels, t->v[c].label),
			(unsigned long long)t->v[c].weight);
		dump_node(s, t, c, depth + 1, min_w, f);
	}
}

int thread_sampler_dump(const struct thread_sampler *s, int tid, double min_share, FILE *f)
{
	const struct calltree *t = tree_of(s, tid);
	uint64_t min_w;

	if (!t)
		return ditto_err(-DITTO_ENOTFOUND, "threads: no samples of thread %d", tid);
	min_w = (uint64_t)(min_share * (double)t->v[0].weight);
	fprintf(f, "[thread %d] %llu\n", tid, (unsigned long long)t->v[0].weight);
	dump_node(s, t, 0, 1, min_w ? min_w : 1, f);
	return 0;
}

void thread_sampler_free(struct thread_sampler *s)
{
	if (!s)
		return;
	thread_sampler_stop(s);
	perf_sampler_close(&s->perf);
	unwinder_fini(&s->uw);
	for (size_t i = 0; i < s->nthreads; i++)
		calltree_free(&s->threads[i].tree);
	free(s->threads);
	idmap_free(&s->by_tid);
	labels_free(&s->labels);
	ditto_hist_free(s->unwind_cost);
	free(s);
}
