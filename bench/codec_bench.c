/* Codec benchmark: msgpack encode and decode against JSON export of the
 * same models, sample models grown to increasing sizes, with ratios taken
 * from times measured in this run. Not a test: run bench/run-codec.sh. */
#include <ditto/ditto.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sample_model.h"

static double min_time = 0.2; /* seconds per measurement */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

_Noreturn static void die(const char *what, int err)
{
	fprintf(stderr, "codec_bench: %s: %s: %s\n", what, ditto_strerror(err), ditto_last_error());
	exit(1);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
	return *s;
}

static void fill(struct ditto_hist *h, uint64_t *s, int buckets, int bits)
{
	for (int i = 0; i < buckets; i++) {
		int err = ditto_hist_add(h, rnd(s) >> (64 - bits), rnd(s) % 1000 + 1);
		if (err)
			die("hist_add", err);
	}
}

/* Add a synthetic service shaped like a real one: threads, syscalls with
 * all their histograms, requests and a CPU profile. */
static void add_service(struct ditto_model *m, int idx, uint64_t *s)
{
	static const char *calls[] = { "read", "write", "epoll_wait", "sendmsg", "recvfrom",
				       "futex", "openat", "pread64" };
	char name[32];
	snprintf(name, sizeof(name), "svc-%d", idx);
	struct ditto_service *svc = ditto_model_add_service(m, name);
	if (!svc)
		die("add_service", -1);
	ditto_service_set_framing(svc, DITTO_FRAMING_HTTP1);
	ditto_service_add_port(svc, (uint16_t)(10000 + idx));
	ditto_graph_add_node(ditto_model_graph_ensure(m), name);
	struct ditto_requests *rq = ditto_service_requests_ensure(svc);
	ditto_requests_set_count(rq, 100000);
	fill(ditto_requests_request_bytes_ensure(rq), s, 12, 16);
	fill(ditto_requests_response_bytes_ensure(rq), s, 12, 20);
	fill(ditto_requests_service_ns_ensure(rq), s, 40, 24);
	const char *threads[] = { "main", "worker" };
	for (int t = 0; t < 2; t++) {
		struct ditto_thread_class *tc = ditto_service_add_thread(svc, threads[t]);
		ditto_thread_class_set_role(tc, t ? DITTO_ROLE_WORKER : DITTO_ROLE_MAIN);
		ditto_thread_class_set_io_model(tc, DITTO_IO_EPOLL);
		ditto_thread_class_set_count(tc, t ? 8 : 1);
		for (size_t c = 0; c < sizeof(calls) / sizeof(calls[0]); c++) {
			struct ditto_syscall *sc =
				ditto_service_add_syscall(svc, threads[t], calls[c], DITTO_FD_TCP);
			ditto_syscall_set_calls(sc, 100000 + rnd(s) % 1000);
			fill(ditto_syscall_size_ensure(sc), s, 10, 20);
			fill(ditto_syscall_ret_ensure(sc), s, 10, 20);
			fill(ditto_syscall_flags_ensure(sc), s, 4, 4);
			fill(ditto_syscall_latency_ensure(sc), s, 30, 20);
		}
		struct ditto_cpu *cpu = ditto_service_add_cpu(svc, threads[t]);
		ditto_cpu_set_instructions(cpu, 1u << 30);
		for (int k = 0; k < 64; k++) {
			char cls[32];
			snprintf(cls, sizeof(cls), "alu.op%d.w64", k);
			ditto_counts_add(ditto_cpu_mix_ensure(cpu), cls, rnd(s) % 100000 + 1);
		}
		for (int b = 0; b < 40; b++) /* key taken_bin * 16 + transition_bin */
			ditto_hist_add(ditto_cpu_branches_ensure(cpu), rnd(s) % 9 * 16 + rnd(s) % 9,
				       rnd(s) % 1000 + 1);
		fill(ditto_cpu_dws_ensure(cpu), s, 30, 32);
		fill(ditto_cpu_iws_ensure(cpu), s, 20, 24);
		fill(ditto_cpu_raw_ensure(cpu), s, 12, 10);
		fill(ditto_cpu_war_ensure(cpu), s, 12, 10);
		fill(ditto_cpu_waw_ensure(cpu), s, 12, 10);
	}
}

/* Seconds per run of body: repeated until min_time has passed, best of 3. */
#define TIME_IT(result, body)                                               \
	do {                                                                \
		double best_ = 1e30;                                        \
		for (int rep_ = 0; rep_ < 3; rep_++) {                      \
			long n_ = 0;                                        \
			double t0_ = now(), t_;                             \
			do {                                                \
				body;                                       \
				n_++;                                       \
			} while ((t_ = now() - t0_) < min_time / 3);        \
			if (t_ / (double)n_ < best_)                        \
				best_ = t_ / (double)n_;                    \
		}                                                           \
		(result) = best_;                                           \
	} while (0)

static void bench(const char *label, const struct ditto_model *m)
{
	void *buf;
	size_t len;
	char *json;
	int err;
	struct ditto_model *back;
	DITTO_OPTS(ditto_load_opts, raw, .no_validate = true);

	if ((err = ditto_model_encode(m, &buf, &len)) || (err = ditto_model_to_json(m, NULL, &json)))
		die("encode", err);
	size_t json_len = strlen(json);
	ditto_free(json);

	double t_enc, t_dec, t_raw, t_json;
	TIME_IT(t_enc, {
		void *b;
		size_t l;
		if ((err = ditto_model_encode(m, &b, &l)))
			die("encode", err);
		ditto_free(b);
	});
	TIME_IT(t_dec, {
		if ((err = ditto_model_decode(buf, len, NULL, &back)))
			die("decode", err);
		ditto_model_free(back);
	});
	TIME_IT(t_raw, {
		if ((err = ditto_model_decode(buf, len, &raw, &back)))
			die("decode", err);
		ditto_model_free(back);
	});
	TIME_IT(t_json, {
		if ((err = ditto_model_to_json(m, NULL, &json)))
			die("to_json", err);
		ditto_free(json);
	});
	ditto_free(buf);

	printf("%-14s %10zu %10zu %7.2f %10.1f %10.1f %10.1f %10.1f %7.2f %7.2f %7.2f\n", label,
	       len, json_len, (double)json_len / (double)len, t_enc * 1e6, t_dec * 1e6,
	       t_raw * 1e6, t_json * 1e6, t_dec / t_enc, t_raw / t_enc, t_json / t_enc);
}

int main(int argc, char **argv)
{
	int max_extra = 256;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			min_time = 0.03;
			max_extra = 16;
		} else {
			fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
			return 2;
		}
	}
	printf("libditto %s codec benchmark (times per call, best of 3; ratios from this run)\n",
	       ditto_version());
	printf("%-14s %10s %10s %7s %10s %10s %10s %10s %7s %7s %7s\n", "model", "msgpack_B",
	       "json_B", "json/mp", "enc_us", "dec_us", "dec_nv_us", "json_us", "dec/enc",
	       "dnv/enc", "json/enc");
	for (int extra = 0; extra <= max_extra; extra = extra ? extra * 4 : 1) {
		struct ditto_model *m;
		int err = sample_model_build(1, &m);
		if (err)
			die("sample_model_build", err);
		uint64_t s = 0x9e3779b97f4a7c15u;
		for (int i = 0; i < extra; i++)
			add_service(m, i, &s);
		if ((err = ditto_model_validate(m, NULL)))
			die("validate", err);
		char label[32];
		snprintf(label, sizeof(label), "sample+%d", extra);
		bench(label, m);
		ditto_model_free(m);
	}
	printf("dec: decode with validation; dec_nv: decode with no_validate; "
	       "json: ditto_model_to_json (compact)\n");
	return 0;
}
