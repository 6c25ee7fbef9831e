/* SPDX-License-Identifier: MIT */
/*
 * The system calls a request makes besides its socket I/O, replayed at the
 * model's per-request rates on the scratch file (never anything else).
 *
 * Per thread and entry an accumulator adds per_request and issues the
 * whole calls it owes, keeping the fraction. File offsets follow the
 * entry's `sequential` share: continue where its previous call ended,
 * else a drawn offset. Positional forms (pread64, pwritev...) take the
 * offset as an argument. Plain forms (read, writev...) use a file
 * descriptor of their own per thread and entry, whose position continues
 * by itself; an lseek is issued only when the offset jumps (a
 * non-sequential draw, or a wrap at the end of the file), the one call
 * the replay adds. OPEN leaves its descriptor in a small ring and CLOSE
 * closes the oldest one there (nothing when the ring is empty); a full
 * ring closes its oldest before an OPEN.
 */
#include "rt_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define IOV_CAP 64		/* iovecs of one vectored call */
#define DATA_MAX (16u << 20)	/* bytes of one file call */
#define SLEEP_MAX_NS 250000000ull	/* keeps a stop prompt (synth.h's caps) */
#define MMAP_MAX (1ull << 30)
#define REGION_MAX (64ull << 20)	/* what mprotect and madvise replays cover at most */

/* The argument shape of a file data call, from its number. */
struct shape {
	long nr;
	bool write, vec, pos;
};

static const struct shape shapes[] = {
	{ SYS_read, false, false, false },   { SYS_pread64, false, false, true },
	{ SYS_readv, false, true, false },   { SYS_preadv, false, true, true },
	{ SYS_preadv2, false, true, true },  { SYS_write, true, false, false },
	{ SYS_pwrite64, true, false, true }, { SYS_writev, true, true, false },
	{ SYS_pwritev, true, true, true },   { SYS_pwritev2, true, true, true },
};

struct entry {
	double acc;		/* calls owed, fraction kept */
	double fail_acc[RT_FAILS];	/* failures owed by errno, fraction kept */
	uint64_t next;		/* where the previous call ended */
	uint64_t pos;		/* position of fd */
	int fd;			/* own descriptor of a plain-form call, else -1 */
	struct shape shape;
	unsigned iovcnt;
};

struct rt_replayer {
	const struct rt_call *calls;	/* the table it replays */
	unsigned ncalls;
	struct entry *e;
	int ring[RT_REPLAY_RING];
	unsigned head, count;
	char *data;
	size_t cap;
	struct iovec iov[IOV_CAP];
	char absent[sizeof(rt_scratch_path) + 8];	/* a path that never exists */
	char notdir[sizeof(rt_scratch_path) + 8];	/* one through a regular file */
	uint32_t futex_word;
	void *region;	/* REGION_MAX reserved, never touched: mprotect, madvise */
};

/* The number decides the shape (the wrong shape would pass an iovec array
 * as a data buffer); an unknown number takes the shape from the flags. */
static struct shape shape_of(const struct rt_call *c)
{
	bool write = c->kind == RT_REPLAY_FILE_WRITE, vec = c->iovcnt > 0;

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		if (shapes[i].nr == c->nr && shapes[i].write == write)
			return shapes[i];
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		if (shapes[i].write == write && shapes[i].vec == vec && shapes[i].pos == c->positional)
			return shapes[i];
	return shapes[0];
}

static int entry_init(struct entry *e, const struct rt_call *c)
{
	e->fd = -1;
	if (c->kind != RT_REPLAY_FILE_READ && c->kind != RT_REPLAY_FILE_WRITE)
		return 0;
	e->shape = shape_of(c);
	e->iovcnt = !e->shape.vec ? 0 : c->iovcnt ? c->iovcnt : 1;
	e->iovcnt = e->iovcnt > IOV_CAP ? IOV_CAP : e->iovcnt;
	if (e->shape.pos || rt_scratch_fd < 0)
		return 0;
	e->fd = open(rt_scratch_path, O_RDWR | O_CLOEXEC);
	if (e->fd < 0) {
		rt_err(errno, "cannot open the scratch file %s", rt_scratch_path);
		return -1;
	}
	return 0;
}

struct rt_replayer *rt_replay_new_for(const struct rt_call *calls, unsigned ncalls)
{
	struct rt_replayer *r = calloc(1, sizeof(*r));

	if (!r || !(r->e = calloc(ncalls ? ncalls : 1, sizeof(*r->e)))) {
		free(r);
		rt_err(ENOMEM, "replay state");
		return NULL;
	}
	r->calls = calls;
	r->ncalls = ncalls;
	snprintf(r->absent, sizeof(r->absent), "%s.absent", rt_scratch_path);
	snprintf(r->notdir, sizeof(r->notdir), "%s/x", rt_scratch_path);
	for (unsigned i = 0; i < ncalls; i++)
		r->e[i].fd = -1;
	for (unsigned i = 0; i < ncalls; i++)
		if (entry_init(&r->e[i], &calls[i])) {
			rt_replay_free(r);
			return NULL;
		}
	return r;
}

struct rt_replayer *rt_replay_new(void)
{
	return rt_replay_new_for(rt_config.calls, rt_config.ncalls);
}

static void close_oldest(struct rt_replayer *r)
{
	if (!r->count)
		return;
	close(r->ring[r->head]);
	r->head = (r->head + 1) % RT_REPLAY_RING;
	r->count--;
}

void rt_replay_free(struct rt_replayer *r)
{
	if (!r)
		return;
	while (r->count)
		close_oldest(r);
	for (unsigned i = 0; i < r->ncalls; i++)
		if (r->e[i].fd >= 0)
			close(r->e[i].fd);
	if (r->region)
		munmap(r->region, REGION_MAX);
	free(r->e);
	free(r->data);
	free(r);
}

/* Offset and size of a file call, inside the file. */
static void place(struct entry *e, const struct rt_call *c, struct rt_rng *rng, uint64_t *off, uint64_t *size)
{
	uint64_t fsize = rt_scratch_size, sz = rt_hist_draw(&c->size, rng), o;
	bool seq = rt_rng_unit(rng) < c->sequential;

	sz = sz > fsize ? fsize : sz;
	sz = sz > DATA_MAX ? DATA_MAX : sz;
	o = seq ? e->next : fsize ? rt_hist_draw(&c->offset, rng) % fsize : 0;
	if (o + sz > fsize)
		o = seq ? 0 : o % (fsize - sz + 1);
	e->next = o + sz;
	*off = o;
	*size = sz;
}

static char *data_buf(struct rt_replayer *r, size_t size)
{
	char *p;

	if (size <= r->cap)
		return r->data;
	p = realloc(r->data, size);
	if (!p)
		return NULL;
	/* written to the file: filler, never uninitialised memory */
	memset(p + r->cap, 'x', size - r->cap);
	r->data = p;
	r->cap = size;
	return p;
}

static void file_data(struct rt_replayer *r, struct entry *e, const struct rt_call *c, struct rt_rng *rng)
{
	uint64_t off, size, part;
	char *buf;
	int fd = e->shape.pos ? rt_scratch_fd : e->fd;
	long ret;

	if (fd < 0)
		return;
	place(e, c, rng, &off, &size);
	buf = data_buf(r, size ? size : 1);
	if (!buf)
		return;
	if (!e->shape.pos && e->pos != off) {
		lseek(fd, (off_t)off, SEEK_SET);
		e->pos = off;
	}
	part = e->iovcnt ? size / e->iovcnt : 0;
	for (unsigned k = 0; k < e->iovcnt; k++) {
		r->iov[k].iov_base = buf + k * part;
		r->iov[k].iov_len = k + 1 < e->iovcnt ? part : size - k * part;
	}
	/* One argument list fits all four shapes; extra arguments are unused
	 * (pos_h and the flags of preadv2/pwritev2 are 0). */
	if (e->shape.vec)
		ret = syscall(e->shape.nr, fd, r->iov, e->iovcnt, (long)off, 0L, 0L);
	else
		ret = syscall(e->shape.nr, fd, buf, (size_t)size, (long)off);
	if (!e->shape.pos && ret > 0)
		e->pos += (uint64_t)ret;
}

/* The call's open form on path. */
static long open_path(const struct rt_call *c, const char *path)
{
	if (c->nr == SYS_open)
		return syscall(SYS_open, path, O_RDONLY | O_CLOEXEC);
	return syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
}

static void do_open(struct rt_replayer *r, const struct rt_call *c)
{
	long fd;

	if (r->count == RT_REPLAY_RING)
		close_oldest(r);
	fd = open_path(c, rt_scratch_path);
	if (fd < 0)
		return;
	r->ring[(r->head + r->count) % RT_REPLAY_RING] = (int)fd;
	r->count++;
}

/* The call's stat form on path (fd for the fstat forms). */
static void do_stat(const struct rt_call *c, const char *path, int fd)
{
	union {
		struct stat st;
		struct statx stx;
	} u;

	switch (c->nr) {
	case SYS_stat:
	case SYS_lstat:
		syscall(c->nr, path, &u.st);
		break;
	case SYS_newfstatat:
		syscall(c->nr, AT_FDCWD, path, &u.st, 0);
		break;
	case SYS_statx:
		syscall(c->nr, AT_FDCWD, path, 0, STATX_BASIC_STATS, &u.stx);
		break;
	default:
		syscall(SYS_fstat, fd, &u.st);
		break;
	}
}

static void do_sleep(const struct rt_call *c, struct rt_rng *rng)
{
	uint64_t ns = rt_hist_draw(&c->size, rng);
	struct timespec ts;

	ns = ns > SLEEP_MAX_NS ? SLEEP_MAX_NS : ns;
	ts.tv_sec = (time_t)(ns / 1000000000ull);
	ts.tv_nsec = (long)(ns % 1000000000ull);
	if (c->nr == SYS_clock_nanosleep)
		syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL);
	else
		syscall(SYS_nanosleep, &ts, NULL);
}

/* Anonymous, or of the scratch file's first bytes (never touched, so a
 * mapping past its end is harmless). */
static void do_mmap(const struct rt_call *c, struct rt_rng *rng)
{
	uint64_t page = 4096, size = rt_hist_draw(&c->size, rng);
	bool file = c->kind == RT_REPLAY_MMAP_FILE && rt_scratch_fd >= 0;
	void *p;

	size = size > MMAP_MAX ? MMAP_MAX : size;
	size = size < page ? page : (size + page - 1) / page * page;
	p = file ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, rt_scratch_fd, 0) :
		   mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			-1, 0);
	if (p != MAP_FAILED)
		munmap(p, size);
}

/*
 * A garbage collector's and an allocator's page work (V8 in node makes
 * about as many mprotect and madvise calls as mmap): on a region of the
 * thread's own, reserved at the first such call and never touched, so
 * that the protection stays what it was and DONTNEED drops nothing.
 */
static void do_page_call(struct rt_replayer *r, const struct rt_call *c, struct rt_rng *rng)
{
	uint64_t page = 4096, size = rt_hist_draw(&c->size, rng);

	if (!r->region) {
		r->region = mmap(NULL, REGION_MAX, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (r->region == MAP_FAILED) {
			r->region = NULL;
			return;
		}
	}
	size = size > REGION_MAX ? REGION_MAX : size;
	size = size < page ? page : (size + page - 1) / page * page;
	if (c->kind == RT_REPLAY_MPROTECT)
		mprotect(r->region, size, PROT_READ | PROT_WRITE);
	else
		madvise(r->region, size, MADV_DONTNEED);
}

/* An open that fails with err; an fd it got all the same is closed. */
static void open_failing(const struct rt_replayer *r, const struct rt_call *c, int err)
{
	long fd;

	switch (err) {
	case EEXIST:	/* created exclusively where the scratch file is */
		fd = c->nr == SYS_open ?
			syscall(SYS_open, rt_scratch_path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC,
				0600) :
			syscall(SYS_openat, AT_FDCWD, rt_scratch_path,
				O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		break;
	case EISDIR:	/* a directory opened for writing */
		fd = c->nr == SYS_open ? syscall(SYS_open, "/", O_WRONLY | O_CLOEXEC) :
					 syscall(SYS_openat, AT_FDCWD, "/", O_WRONLY | O_CLOEXEC);
		break;
	default:
		fd = open_path(c, err == ENOTDIR ? r->notdir : r->absent);
		break;
	}
	if (fd >= 0)
		close((int)fd);
}

/* A file call that fails with err: EINVAL from a bad whence or a negative
 * offset where the call takes one, else EBADF (no descriptor). */
static void file_failing(const struct rt_call *c, int err)
{
	char b;

	if (err == EINVAL && c->kind == RT_REPLAY_LSEEK)
		syscall(SYS_lseek, rt_scratch_fd, 0, 99);
	else if (err == EINVAL && (c->nr == SYS_pread64 || c->nr == SYS_pwrite64))
		syscall(c->nr, rt_scratch_fd, &b, 1, -1L);
	else
		syscall(c->nr, -1, NULL, 0, 0);
}

/* The call as it failed in the original, with its errno (the generator
 * gives each kind only the errnos made here). false: the kind does not
 * fail. */
static bool issue_failing(struct rt_replayer *r, const struct rt_call *c, int err)
{
	switch (c->kind) {
	case RT_REPLAY_OPEN:
		open_failing(r, c, err);
		return true;
	case RT_REPLAY_STAT:
		do_stat(c, err == ENOTDIR ? r->notdir : r->absent, -1);
		return true;
	case RT_REPLAY_FILE_READ:
	case RT_REPLAY_FILE_WRITE:
	case RT_REPLAY_FSYNC:
	case RT_REPLAY_CLOSE:
	case RT_REPLAY_LSEEK:
		file_failing(c, err);
		return true;
	case RT_REPLAY_MMAP_FILE: {
		/* a file mapping of no descriptor: EBADF */
		void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, -1, 0);

		if (p != MAP_FAILED)
			munmap(p, 4096);
		return true;
	}
	default:
		return false;
	}
}

/* Whether this call of entry i fails, and issued so. */
static bool fails(struct rt_replayer *r, unsigned i, const struct rt_call *c)
{
	/* Every errno's share first: one due now defers the others, which
	 * fail on the next calls (the shares sum to at most 1). */
	for (unsigned k = 0; k < RT_FAILS && c->fail[k].err; k++)
		r->e[i].fail_acc[k] += c->fail[k].share;
	for (unsigned k = 0; k < RT_FAILS && c->fail[k].err; k++) {
		if (r->e[i].fail_acc[k] >= 1.0) {
			r->e[i].fail_acc[k] -= 1.0;
			if (issue_failing(r, c, c->fail[k].err))
				return true;
		}
	}
	return false;
}

static void issue(struct rt_replayer *r, unsigned i, struct rt_rng *rng)
{
	const struct rt_call *c = &r->calls[i];
	uint64_t fsize = rt_scratch_size;

	if (fails(r, i, c))
		return;
	switch (c->kind) {
	case RT_REPLAY_FILE_READ:
	case RT_REPLAY_FILE_WRITE:
		file_data(r, &r->e[i], c, rng);
		break;
	case RT_REPLAY_FSYNC:
		syscall(c->nr == SYS_fdatasync ? SYS_fdatasync : SYS_fsync, rt_scratch_fd);
		break;
	case RT_REPLAY_OPEN:
		do_open(r, c);
		break;
	case RT_REPLAY_CLOSE:
		close_oldest(r);
		break;
	case RT_REPLAY_STAT:
		do_stat(c, rt_scratch_path, rt_scratch_fd);
		break;
	case RT_REPLAY_LSEEK:
		lseek(rt_scratch_fd, fsize ? (off_t)(rt_hist_draw(&c->offset, rng) % fsize) : 0, SEEK_SET);
		break;
	case RT_REPLAY_SLEEP:
		do_sleep(c, rng);
		break;
	case RT_REPLAY_YIELD:
		sched_yield();
		break;
	case RT_REPLAY_FUTEX_WAKE:
		syscall(SYS_futex, &r->futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		break;
	case RT_REPLAY_MMAP:
	case RT_REPLAY_MMAP_FILE:
		do_mmap(c, rng);
		break;
	case RT_REPLAY_MPROTECT:
	case RT_REPLAY_MADVISE:
		do_page_call(r, c, rng);
		break;
	case RT_REPLAY_EVENTFD_READ:
	case RT_REPLAY_EVENTFD_WRITE:
		rt_eventfd_call(c->kind == RT_REPLAY_EVENTFD_WRITE);
		break;
	}
}

/* The stop is looked at before each call: a model may ask for any number
 * of calls per request (synth's limit lifted), and a stop must not wait
 * for them. */
void rt_replay_run(struct rt_replayer *r, struct rt_rng *rng)
{
	for (unsigned i = 0; i < r->ncalls && !rt_stopping(); i++) {
		struct entry *e = &r->e[i];

		e->acc += r->calls[i].per_request;
		while (e->acc >= 1.0 && !rt_stopping()) {
			e->acc -= 1.0;
			issue(r, i, rng);
		}
	}
}
