/* SPDX-License-Identifier: MIT */
/*
 * Traced processes: their mappings, parsed from /proc/PID/maps once and
 * again only when an address is not covered, the modules behind them, and
 * their live memory through /proc/PID/mem for what the stack copy misses.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "threads_int.h"

#define DELETED " (deleted)"

static void free_maps(struct proc *p)
{
	for (size_t i = 0; i < p->nmaps; i++)
		free(p->maps[i].path);
	free(p->maps);
	p->maps = NULL;
	p->nmaps = 0;
	p->last = 0;
}

static unsigned parse_prot(const char *perms)
{
	return (perms[0] == 'r' ? PF_R : 0) | (perms[1] == 'w' ? PF_W : 0) |
	       (perms[2] == 'x' ? PF_X : 0);
}

/* "start-end perms offset major:minor inode   path" */
static int parse_line(const char *line, struct mapping *m)
{
	unsigned major, minor;
	char perms[5];
	int pathpos = 0;
	const char *path;

	*m = (struct mapping){ 0 };
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n", &m->start,
		   &m->end, perms, &m->pgoff, &major, &minor, &m->ino, &pathpos) < 7)
		return -EINVAL;
	m->dev = (uint64_t)major << 32 | minor;
	m->prot = parse_prot(perms);
	path = line + pathpos;
	if (pathpos && *path && *path != '\n') {
		m->path = strndup(path, strcspn(path, "\n"));
		if (!m->path)
			return ditto_err(-ENOMEM, "threads: out of memory");
	}
	return 0;
}

static int push_map(struct proc *p, const struct mapping *m, size_t *cap)
{
	if (p->nmaps == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct mapping *v = realloc(p->maps, ncap * sizeof(*v));

		if (!v)
			return ditto_err(-ENOMEM, "threads: out of memory");
		p->maps = v;
		*cap = ncap;
	}
	p->maps[p->nmaps++] = *m;
	return 0;
}

int proc_load_maps(struct proc *p)
{
	char path[64], *line = NULL;
	size_t len = 0, cap = 0;
	struct mapping m;
	int err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", p->tgid);
	f = fopen(path, "re");
	if (!f) {
		p->gone = true;
		return 0;	/* exited: keep the mappings we had */
	}
	free_maps(p);
	p->flush = true;
	while (!err && getline(&line, &len, f) > 0) {
		if (parse_line(line, &m) == 0 && (err = push_map(p, &m, &cap)))
			free(m.path);
	}
	free(line);
	fclose(f);
	return err;
}

/* The kernel lists mappings sorted and disjoint, so a binary search finds addr. */
struct mapping *proc_find(struct proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nmaps;

	if (p->last < p->nmaps && addr >= p->maps[p->last].start && addr < p->maps[p->last].end)
		return &p->maps[p->last];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < p->maps[mid].start)
			hi = mid;
		else if (addr >= p->maps[mid].end)
			lo = mid + 1;
		else
			return &p->maps[p->last = mid];
	}
	return NULL;
}

static struct module *cached(const struct modcache *mc, const struct mapping *m)
{
	for (size_t i = 0; i < mc->n; i++) {
		const struct module *x = mc->v[i];

		if (x->dev == m->dev && x->ino == m->ino && !strcmp(x->path, m->path))
			return mc->v[i];
	}
	return NULL;
}

/*
 * Read the file as the process sees it: through its root (containers), or
 * through map_files when it was deleted or replaced since it was mapped.
 */
static int open_file(struct modcache *mc, const struct proc *p, const struct mapping *m,
		     struct module **out)
{
	char where[4200];
	size_t plen = strlen(m->path), dlen = strlen(DELETED);

	if (plen > dlen && !strcmp(m->path + plen - dlen, DELETED))
		snprintf(where, sizeof(where), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, p->tgid,
			 m->start, m->end);
	else
		snprintf(where, sizeof(where), "/proc/%d/root%s", p->tgid, m->path);
	if (access(where, R_OK) != 0)
		snprintf(where, sizeof(where), "%s", m->path);
	if (mc->n == mc->cap) {
		size_t cap = mc->cap ? mc->cap * 2 : 16;
		struct module **v = realloc(mc->v, cap * sizeof(*v));

		if (!v)
			return ditto_err(-ENOMEM, "threads: out of memory");
		mc->v = v;
		mc->cap = cap;
	}
	int err = module_open(m->path, where, m->dev, m->ino, out);

	if (!err)
		mc->v[mc->n++] = *out;
	return err;
}

static struct module *vdso(struct modcache *mc)
{
	if (!mc->vdso && !mc->vdso_failed && module_open_vdso(&mc->vdso) != 0)
		mc->vdso_failed = true;
	return mc->vdso;
}

struct module *proc_module(struct modcache *mc, struct proc *p, struct mapping *m)
{
	struct module *mod = NULL;

	if (m->resolved)
		return m->mod;
	m->resolved = true;
	if (!m->path)
		return NULL;
	if (!strcmp(m->path, "[vdso]"))
		mod = vdso(mc);
	else if (m->path[0] == '/' && !(mod = cached(mc, m)) && open_file(mc, p, m, &mod) != 0)
		mod = NULL;
	if (mod && (!mod->image || module_bias(mod, m->start, m->pgoff, m->prot, &m->bias) != 0))
		mod = NULL;
	m->mod = mod;
	return mod;
}

int proc_read(struct proc *p, uint64_t addr, void *buf, size_t n)
{
	if (p->memfd < 0 || addr > (uint64_t)INT64_MAX - n)
		return -EIO;
	return pread(p->memfd, buf, n, (off_t)addr) == (ssize_t)n ? 0 : -EIO;
}

int proc_new(int tgid, unw_accessors_t *acc, struct proc **out)
{
	char path[64];
	struct proc *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return ditto_err(-ENOMEM, "threads: out of memory");
	p->tgid = tgid;
	snprintf(path, sizeof(path), "/proc/%d/mem", tgid);
	p->memfd = open(path, O_RDONLY | O_CLOEXEC);
	p->as = unw_create_addr_space(acc, 0);
	if (!p->as) {
		proc_free(p);
		return ditto_err(-ENOMEM, "threads: libunwind address space: out of memory");
	}
	/* Register states cached by IP: valid until this process's maps change. */
	unw_set_caching_policy(p->as, UNW_CACHE_GLOBAL);
	if ((err = proc_load_maps(p))) {
		proc_free(p);
		return err;
	}
	p->flush = false;
	*out = p;
	return 0;
}

void proc_free(struct proc *p)
{
	if (!p)
		return;
	free_maps(p);
	if (p->memfd >= 0)
		close(p->memfd);
	if (p->as)
		unw_destroy_addr_space(p->as);
	free(p);
}

void modcache_free(struct modcache *mc)
{
	for (size_t i = 0; i < mc->n; i++)
		module_free(mc->v[i]);
	module_free(mc->vdso);
	free(mc->v);
	*mc = (struct modcache){ 0 };
}
