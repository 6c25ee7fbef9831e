/* SPDX-License-Identifier: MIT */
/*
 * What one request costs besides its bytes, in the model's order: the
 * body (body.S, its instructions drawn per request) on the process's data
 * regions, then the replayed system calls. Also the per-thread state both
 * need.
 */
#include "rt_int.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

void *rt_regions;
static size_t regions_size;

/*
 * Every line written once at startup, last line first: the first pass of
 * the body over its regions is then no compulsory miss (a measurement
 * that subtracts startup would count it), and what a cache keeps of them
 * is their start, where the small regions are.
 */
static void touch_backwards(char *p, size_t size)
{
	for (size_t off = size; off >= 64; off -= 64)
		p[off - 64] = 0;
}

int rt_regions_map(void)
{
	size_t size = rt_config.body_region_bytes ? (size_t)*rt_config.body_region_bytes : 0;
	void *p;

	if (!rt_config.body || !size)
		return 0;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		rt_err(errno, "cannot map %zu bytes of body regions", size);
		return -1;
	}
	rt_regions = p;
	regions_size = size;
	touch_backwards(p, size);
	if (rt_config.body_warm)
		rt_config.body_warm(p);
	return 0;
}

void rt_regions_unmap(void)
{
	if (rt_regions)
		munmap(rt_regions, regions_size);
	rt_regions = NULL;
}

/* Streams of the threads' hold and wake-up draws, apart from their own. */
#define HOLD_STREAMS (1ull << 62)
#define WAKE_STREAMS (1ull << 59)

int rt_thread_init(struct rt_thread *t, uint64_t stream)
{
	rt_rng_seed(&t->rng, rt_config.seed, stream);
	rt_rng_seed(&t->hold_rng, rt_config.seed, HOLD_STREAMS | stream);
	t->hold = false;
	t->again_acc = 0;
	t->wait_acc = 0;
	t->served = 0;
	t->empty_reads = 0;
	t->after_loops = 0;
	t->after_acc = 0;
	t->wake_loop = t->wake_began = false;
	rt_rng_seed(&t->wake_rng, rt_config.seed, WAKE_STREAMS | stream);
	t->wake_acc = 0;
	t->held = NULL;
	t->nheld = t->heldcap = 0;
	t->parker = NULL;
	t->body_state[0] = 0;
	t->body_state[1] = 0;	/* the body's own; kept between requests */
	t->replay = rt_replay_new();
	return t->replay && !rt_up_thread_init(t, stream) ? 0 : -1;
}

void rt_thread_fini(struct rt_thread *t)
{
	rt_up_thread_fini(t);
	rt_replay_free(t->replay);
	t->replay = NULL;
	free(t->held);
	t->held = NULL;
}

/* Stream numbers of the requests' draws, apart from the threads' (rt_thread_init). */
#define REQUEST_STREAMS (1ull << 63)

static atomic_uint_fast64_t requests, served;

/*
 * Loop iterations for this request: the drawn instruction count over the
 * instructions of one iteration, the remainder rounded up with its
 * probability so that the mean comes out right even when a request is
 * shorter than one iteration (0: the body is not called). The process's
 * n-th request draws from stream n, not from its thread's: N requests
 * then cost the same instructions whichever threads serve them, so a
 * measurement repeats (per-thread draws moved it by 1-3% with the share
 * of requests each thread happened to serve).
 */
static uint64_t loops_of(uint64_t insts, struct rt_rng *r)
{
	uint64_t per = rt_config.body_loop_insts;

	return insts / per + (rt_rng_below(r, per) < insts % per);
}

static uint64_t body_loops(void)
{
	uint64_t n = atomic_fetch_add_explicit(&requests, 1, memory_order_relaxed), insts;
	struct rt_rng r;

	rt_rng_seed(&r, rt_config.seed, REQUEST_STREAMS | n);
	insts = rt_hist_draw(&rt_config.insts_per_request, &r);
	if (rt_config.body_spread > 0) {
		/* a draw near 2^64 (limits lifted) times the factor would not fit */
		double x = (double)insts * rt_rng_spread(&r, rt_config.body_spread);

		insts = x < 0x1p64 ? (uint64_t)x : UINT64_MAX;
	}
	return loops_of(insts, &r);
}

/*
 * Instructions of one call of the body at most: a request is run in
 * slices with a look at the stop between them, so that a clone whose
 * model asks for 10^12 instructions per request (with synth's limits
 * lifted) still stops within a second. The body keeps its own state
 * between calls, so slices change nothing but a call's few instructions
 * of entry and exit per slice.
 */
#define BODY_SLICE_INSTS (1ull << 24)

static void run_body(struct rt_thread *t, uint64_t loops)
{
	uint64_t per = rt_config.body_loop_insts;
	uint64_t slice = BODY_SLICE_INSTS / per ? BODY_SLICE_INSTS / per : 1;

	while (loops && !rt_stopping()) {
		uint64_t n = loops < slice ? loops : slice;

		t->body_state[0] = n;
		rt_config.body(rt_regions, t->body_state);
		loops -= n;
	}
}

/* The share of the body a thread runs per wake-up, not per request:
 * only an event loop's (rt_request_wake_loop()). */
static double wake_share(const struct rt_thread *t)
{
	double s = rt_config.net.wake_share;

	return t->wake_loop && s > 0 && rt_config.body_loop_insts ? (s < 1 ? s : 1) : 0;
}

/* Loops of the request's own share: the rest of its draw is the
 * wake-up's, drawn at its end; the fraction is carried. */
static uint64_t request_loops(struct rt_thread *t, uint64_t loops)
{
	double s = wake_share(t);

	t->wake_began = true;
	if (!s)
		return loops;
	t->wake_acc += (double)loops * (1 - s);
	loops = (uint64_t)t->wake_acc;
	t->wake_acc -= (double)loops;
	return loops;
}

void rt_request_wake_loop(struct rt_thread *t)
{
	t->wake_loop = true;
}

/* A draw of its own per wake-up that began requests, at the share:
 * the same mean as a request's share at one request per wake-up. */
void rt_request_wake_end(struct rt_thread *t)
{
	double s = wake_share(t);
	uint64_t insts;

	if (!t->wake_began)
		return;
	t->wake_began = false;
	if (!s)
		return;
	insts = (uint64_t)((double)rt_hist_draw(&rt_config.insts_per_request, &t->wake_rng) * s);
	run_body(t, loops_of(insts, &t->wake_rng));
}

/* The request's footprint and body, their shares before the response,
 * then the replayed calls. */
static void request_begin(struct rt_thread *t)
{
	rt_footprint_walk_before();
	if (rt_config.body && !rt_config.body_loop_insts) {
		t->body_state[0] = 0;	/* the body's built-in count */
		rt_config.body(rt_regions, t->body_state);
	} else if (rt_config.body) {
		uint64_t loops = request_loops(t, body_loops());

		/* carried, not drawn: the thread's streams stay as they were;
		 * none after a response this wake-up holds (it goes out later,
		 * after all of them) */
		t->after_acc += t->hold ? 0 : (double)loops * rt_config.net.after_response_share;
		t->after_loops = (uint64_t)t->after_acc;
		if (t->after_loops > loops)
			t->after_loops = loops;
		t->after_acc -= (double)t->after_loops;
		run_body(t, loops - t->after_loops);
	}
	rt_replay_run(t->replay, &t->rng);
}

static void request_counted(struct rt_thread *t)
{
	rt_background_served();
	if (rt_opts.stats)	/* a shared counter is work the original did not do */
		atomic_fetch_add_explicit(&served, 1, memory_order_relaxed);
	t->served++;
}

void rt_request_work(struct rt_thread *t)
{
	request_begin(t);
	if (rt_config.nupstreams)
		rt_up_calls(t, false);	/* the response waits for the sync calls */
	request_counted(t);
}

bool rt_request_work_parked(struct rt_thread *t, struct rt_conn *c, const struct rt_req *req,
			    long len, const char *base)
{
	bool parked;

	request_begin(t);
	parked = rt_park_request(t->parker, c, req, len, base);
	request_counted(t);
	return parked;
}

/* The async calls, once the response was handed over, then the
 * footprint's and the body's shares after the response; the request's
 * server span ends last. */
void rt_request_after(struct rt_thread *t)
{
	uint64_t n = t->after_loops;

	if (rt_config.nupstreams)
		rt_up_calls(t, true);
	rt_footprint_walk_after();
	t->after_loops = 0;
	if (n)
		run_body(t, n);
	rt_trace_end(t);
}

uint64_t rt_served(void)
{
	return atomic_load(&served);
}
