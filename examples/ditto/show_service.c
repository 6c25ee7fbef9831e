/* SPDX-License-Identifier: MIT */
/*
 * The per-service part of `ditto model show`, read through the typed
 * accessors. Rates are shown per request or per instruction, as the clone
 * reproduces them, rather than as raw counts of one profiling run.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "show.h"

#define TOP_MIX 3

/* A table printed a mean estimated from histogram buckets ("~"): its
 * legend says so once, under the table. */
static bool estimated;

/* "~" before a value estimated from buckets. */
static struct fmt estimate(struct fmt v)
{
	struct fmt f = { "~" };

	/* fmt_bytes() text is short: "~" and all fit in f.s. */
	memcpy(f.s + 1, v.s, sizeof(f.s) - 2);
	f.s[sizeof(f.s) - 1] = '\0';
	return f;
}

/*
 * Mean of a histogram's values: exact from the total at path (printf-style)
 * when the model holds one, else from the buckets' midpoints, marked "~"
 * (a log2 bucket spans a factor of two: 4096-byte calls read as 6.0 KiB).
 */
__attribute__((format(printf, 3, 4)))
static struct fmt mean_bytes(const struct ditto_model *m, struct ditto_hist *h,
			     const char *total_fmt, ...)
{
	double n = (double)ditto_hist_total(h), total;
	char path[256];
	va_list ap;

	if (n == 0)
		return (struct fmt){ "-" };
	va_start(ap, total_fmt);
	vsnprintf(path, sizeof(path), total_fmt, ap);
	va_end(ap);
	if (ditto_model_get_f64(m, path, &total) == 0)
		return fmt_bytes(total / n);
	estimated = true;
	return estimate(fmt_bytes(ditto_hist_mean(h)));
}

static void legend(void)
{
	if (estimated)
		printf("    ~ estimated from histogram buckets (the model holds no exact total)\n");
	estimated = false;
}

static void show_header(struct ditto_service *s)
{
	printf("\nservice %s: framing %s, %" PRIu64 " process%s, ports", ditto_service_name(s),
	       ditto_framing_name(ditto_service_framing(s)), ditto_service_processes(s),
	       ditto_service_processes(s) == 1 ? "" : "es");
	if (ditto_service_port_count(s) == 0)
		printf(" -");
	for (size_t i = 0; i < ditto_service_port_count(s); i++)
		printf("%s %u", i ? "," : "", (unsigned)ditto_service_port(s, i));
	putchar('\n');
}

static void show_woken_by(const struct ditto_thread_class *t)
{
	size_t n = ditto_thread_class_woken_by_count(t);

	if (n == 0)
		printf("-");
	for (size_t i = 0; i < n; i++)
		printf("%s%s", i ? "," : "", ditto_thread_class_woken_by(t, i));
}

static void show_threads(struct ditto_service *s)
{
	printf("  threads:\n    %-12s %6s  %-10s  %-11s %10s %10s %10s  %s\n", "class", "count",
	       "role", "io_model", "cpu_time", "ctx_sw", "wakeups", "woken_by");
	for (size_t i = 0; i < ditto_service_thread_count(s); i++) {
		struct ditto_thread_class *t = ditto_service_thread(s, i);

		printf("    %-12s %6" PRIu64 "  %-10s  %-11s %10s %10" PRIu64 " %10" PRIu64 "  ",
		       ditto_thread_class_name(t), ditto_thread_class_count(t),
		       ditto_role_name(ditto_thread_class_role(t)),
		       ditto_io_model_name(ditto_thread_class_io_model(t)),
		       fmt_ns((double)ditto_thread_class_cpu_ns(t)).s,
		       ditto_thread_class_ctx_switches(t), ditto_thread_class_wakeups(t));
		show_woken_by(t);
		putchar('\n');
	}
}

static const char *yes_no(bool v)
{
	return v ? "yes" : "no";
}

static void show_network(struct ditto_model *m, size_t si)
{
	struct ditto_network *n = ditto_service_network(ditto_model_service(m, si));

	printf("  network: io_model %s, accept dispatch %s, network dispatch %s,\n"
	       "           serial connections %s, master process %s, %s network threads,\n"
	       "           %s processes, client %s connections (%s)\n",
	       ditto_io_model_name(ditto_network_io_model(n)),
	       yes_no(ditto_network_accept_dispatch(n)), yes_no(ditto_network_network_dispatch(n)),
	       yes_no(ditto_network_serial_connections(n)), yes_no(ditto_network_master_process(n)),
	       opt_count(m, "services[%zu].network.network_threads", si).s,
	       opt_count(m, "services[%zu].network.processes", si).s,
	       opt_count(m, "services[%zu].network.client_connections", si).s,
	       ditto_call_mode_name(ditto_network_client_mode(n)));
}

/* The errno most failed calls had, by name, and how many others there
 * were: "ENOENT", "ENOENT+1"; "-" when none was recorded. */
static struct fmt top_errno(struct ditto_syscall *c)
{
	struct ditto_hist *h = ditto_syscall_errnos(c);
	uint64_t lo, hi, n, best = 0, top = 0;
	size_t kinds = 0;
	struct fmt out;
	const char *name;

	for (size_t i = 0; i < ditto_hist_bucket_count(h); i++) {
		if (ditto_hist_bucket(h, i, &lo, &hi, &n) || !n)
			continue;
		kinds++;
		if (n > best)
			best = n, top = lo;
	}
	if (!kinds)
		return (struct fmt){ "-" };
	name = top < 4096 ? strerrorname_np((int)top) : NULL;
	if (name)
		snprintf(out.s, sizeof(out.s), "%s", name);
	else
		snprintf(out.s, sizeof(out.s), "%llu", (unsigned long long)top);
	if (kinds > 1)
		snprintf(out.s + strlen(out.s), sizeof(out.s) - strlen(out.s), "+%zu", kinds - 1);
	return out;
}

static void show_syscall(struct ditto_model *m, size_t si, size_t i)
{
	struct ditto_service *s = ditto_model_service(m, si);
	struct ditto_syscall *c = ditto_service_syscall(s, i);
	struct ditto_hist *lat = ditto_syscall_latency(c);
	double calls = (double)ditto_syscall_calls(c);

	bool file = ditto_syscall_fd_kind(c) == DITTO_FD_FILE;

	/* Only file accesses have offsets that can be sequential. */
	printf("    %-10s %-14s %-8s %9.3f %7s %-10s %10s %10s %9s %9s %6s\n",
	       ditto_syscall_thread_class(c),
	       ditto_syscall_name(c), ditto_fd_kind_name(ditto_syscall_fd_kind(c)),
	       ditto_service_per_request(s, calls),
	       fmt_pct((double)ditto_syscall_errors(c), calls).s, top_errno(c).s,
	       mean_bytes(m, ditto_syscall_size(c), "services[%zu].syscalls[%zu].size_total", si,
			  i).s,
	       mean_bytes(m, ditto_syscall_ret(c), "services[%zu].syscalls[%zu].ret_total", si,
			  i).s,
	       fmt_ns(ditto_hist_quantile(lat, 0.5)).s, fmt_ns(ditto_hist_quantile(lat, 0.99)).s,
	       file ? fmt_pct((double)ditto_syscall_sequential(c),
			      (double)ditto_hist_total(ditto_syscall_offset(c))).s
		    : "-");
}

static void show_syscalls(struct ditto_model *m, size_t si)
{
	struct ditto_service *s = ditto_model_service(m, si);

	printf("  syscalls:\n    %-10s %-14s %-8s %9s %7s %-10s %10s %10s %9s %9s %6s\n", "class",
	       "call", "fd", "calls/req", "errors", "errno", "mean size", "mean ret", "p50 lat", "p99 lat", "seq");
	for (size_t i = 0; i < ditto_service_syscall_count(s); i++)
		show_syscall(m, si, i);
	legend();
}

static void show_requests(struct ditto_model *m, size_t si)
{
	struct ditto_requests *r = ditto_service_requests(ditto_model_service(m, si));
	struct ditto_hist *svc = ditto_requests_service_ns(r);
	struct ditto_hist *after = ditto_requests_after_response_ns(r);
	double count = (double)ditto_requests_count(r);
	double conns = (double)ditto_requests_connections(r);

	printf("  requests: %" PRIu64 " over %s connections (%s per connection), %s"
	       " pipelined\n",
	       ditto_requests_count(r), opt_count(m, "services[%zu].requests.connections", si).s,
	       fmt_ratio(count, conns).s, fmt_pct((double)ditto_requests_pipelined(r), count).s);
	/* The exact totals when the profiler recorded them, else bucket means. */
	printf("    mean request %s, mean response %s, service time p50 %s, p99 %s\n",
	       mean_bytes(m, ditto_requests_request_bytes(r),
			  "services[%zu].requests.request_bytes_total", si).s,
	       mean_bytes(m, ditto_requests_response_bytes(r),
			  "services[%zu].requests.response_bytes_total", si).s,
	       fmt_ns(ditto_hist_quantile(svc, 0.5)).s, fmt_ns(ditto_hist_quantile(svc, 0.99)).s);
	if (ditto_hist_total(after))
		printf("    after the response: mean %s until the next read or wait\n",
		       fmt_ns(ditto_hist_mean(after)).s);
	legend();
}

/* The TOP_MIX largest classes of the mix, largest first, without sorting
 * the whole map: mixes of real programs have hundreds of classes. */
static size_t top_mix(const struct ditto_counts *mix, const char **keys, uint64_t *counts)
{
	size_t kept = 0;

	for (size_t i = 0; i < ditto_counts_size(mix); i++) {
		const char *key;
		uint64_t n;
		size_t j;

		if (ditto_counts_entry(mix, i, &key, &n) < 0)
			continue;
		if (kept == TOP_MIX && n <= counts[TOP_MIX - 1])
			continue;
		j = kept < TOP_MIX ? kept++ : TOP_MIX - 1;
		for (; j > 0 && counts[j - 1] < n; j--) {
			keys[j] = keys[j - 1];
			counts[j] = counts[j - 1];
		}
		keys[j] = key;
		counts[j] = n;
	}
	return kept;
}

static void show_mix(struct ditto_cpu *c)
{
	struct ditto_counts *mix = ditto_cpu_mix(c);
	const char *keys[TOP_MIX] = { NULL };
	uint64_t counts[TOP_MIX] = { 0 };
	size_t n = top_mix(mix, keys, counts);
	double total = (double)ditto_counts_total(mix);

	printf("      mix (%zu classes):", ditto_counts_size(mix));
	for (size_t i = 0; i < n; i++)
		printf("%s %s %s", i ? "," : "", keys[i], fmt_pct((double)counts[i], total).s);
	putchar('\n');
}

static void show_cpu_class(struct ditto_cpu *c)
{
	double insts = (double)ditto_cpu_instructions(c);
	double loads = (double)ditto_cpu_loads(c);

	struct ditto_hist *ipr = ditto_cpu_insts_per_request(c);
	struct fmt per_req = { "-" };

	/* No total exists for it: log2 buckets, an estimate. */
	if (ditto_hist_total(ipr)) {
		snprintf(per_req.s, sizeof(per_req.s), "~%.0f", ditto_hist_mean(ipr));
		estimated = true;
	}
	printf("    %-12s %8" PRIu64 " %13" PRIu64 " %10s %11s %11s %8s %10s\n",
	       ditto_cpu_thread_class(c), ditto_cpu_windows(c), ditto_cpu_instructions(c),
	       per_req.s, fmt_ratio(loads, insts).s,
	       fmt_ratio((double)ditto_cpu_stores(c), insts).s,
	       fmt_pct((double)ditto_cpu_chased_loads(c), loads).s,
	       fmt_pct((double)ditto_cpu_undecoded(c), insts).s);
	show_mix(c);
}

static void show_cpu(struct ditto_service *s)
{
	printf("  cpu:\n    %-12s %8s %13s %10s %11s %11s %8s %10s\n", "class", "windows",
	       "instructions", "insts/req", "loads/inst", "stores/inst", "chased", "undecoded");
	for (size_t i = 0; i < ditto_service_cpu_count(s); i++)
		show_cpu_class(ditto_service_cpu(s, i));
	legend();
}

static void show_counters(const struct ditto_observed *o)
{
	double insts = (double)ditto_observed_counter(o, DITTO_COUNTER_INSTRUCTIONS);
	double cycles = (double)ditto_observed_counter(o, DITTO_COUNTER_CYCLES);

	if (!ditto_observed_counters_available(o)) {
		printf("    hardware counters: not available on the profiling host\n");
		return;
	}
	/* Misses per kilo-instruction, as the paper reports them. */
	printf("    hardware counters: IPC %s, MPKI branch %s, L1i %s, L1d %s, L2 %s, LLC %s\n",
	       fmt_ratio(insts, cycles).s,
	       fmt_ratio(1e3 * (double)ditto_observed_counter(o, DITTO_COUNTER_BRANCH_MISSES), insts).s,
	       fmt_ratio(1e3 * (double)ditto_observed_counter(o, DITTO_COUNTER_L1I_MISSES), insts).s,
	       fmt_ratio(1e3 * (double)ditto_observed_counter(o, DITTO_COUNTER_L1D_MISSES), insts).s,
	       fmt_ratio(1e3 * (double)ditto_observed_counter(o, DITTO_COUNTER_L2_MISSES), insts).s,
	       fmt_ratio(1e3 * (double)ditto_observed_counter(o, DITTO_COUNTER_LLC_MISSES), insts).s);
}

static void show_observed(struct ditto_model *m, size_t si)
{
	struct ditto_observed *o = ditto_service_observed(ditto_model_service(m, si));

	printf("  observed: saturation throughput %s qps\n",
	       opt_rate(m, "services[%zu].observed.throughput_qps", si).s);
	if (ditto_observed_load_count(o))
		printf("    %12s %12s %8s %12s %12s\n", "offered qps", "achieved", "conns",
		       "p50 latency", "p99 latency");
	for (size_t i = 0; i < ditto_observed_load_count(o); i++) {
		struct ditto_load_point *p = ditto_observed_load(o, i);
		struct ditto_hist *lat = ditto_load_point_latency(p);

		printf("    %12.0f %12s %8s %12s %12s\n", ditto_load_point_qps(p),
		       opt_rate(m, "services[%zu].observed.loads[%zu].achieved_qps", si, i).s,
		       opt_count(m, "services[%zu].observed.loads[%zu].connections", si, i).s,
		       fmt_ns(ditto_hist_quantile(lat, 0.5)).s,
		       fmt_ns(ditto_hist_quantile(lat, 0.99)).s);
	}
	show_counters(o);
}

void show_service(struct ditto_model *m, size_t i)
{
	struct ditto_service *s = ditto_model_service(m, i);

	show_header(s);
	show_threads(s);
	show_network(m, i);
	show_syscalls(m, i);
	show_requests(m, i);
	show_outbound(m, i);
	show_cpu(s);
	show_observed(m, i);
}
