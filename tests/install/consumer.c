/* A program built only against the installed headers and library (through
 * pkg-config), shared or fully static: checks the version, builds a small
 * model and round-trips it, then calls into each stage so that a static
 * link pulls in every private dependency (profile: libbpf, libelf,
 * libunwind, libdwarf, capstone; synth: the embedded runtime; tune: libpfm4).
 * Prints the library's version last, for install-test.sh to compare. */
#include <ditto/ditto.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "consumer: %s:%d: %s failed: %s\n",  \
				__FILE__, __LINE__, #cond, ditto_last_error()); \
			return 1;                                            \
		}                                                            \
	} while (0)

static int build(struct ditto_model **out)
{
	struct ditto_model *m = ditto_model_new();
	CHECK(m != NULL);
	*out = m;
	struct ditto_service *s = ditto_model_add_service(m, "kv");
	CHECK(s != NULL);
	CHECK(ditto_service_set_framing(s, DITTO_FRAMING_RESP) == 0);
	CHECK(ditto_service_add_port(s, 6379) == 0);
	struct ditto_thread_class *t = ditto_service_add_thread(s, "main");
	CHECK(t != NULL);
	CHECK(ditto_thread_class_set_role(t, DITTO_ROLE_MAIN) == 0);
	CHECK(ditto_thread_class_set_io_model(t, DITTO_IO_EPOLL) == 0);
	CHECK(ditto_requests_set_count(ditto_service_requests_ensure(s), 1000) == 0);
	struct ditto_syscall *c = ditto_service_add_syscall(s, "main", "read", DITTO_FD_TCP);
	CHECK(c != NULL);
	CHECK(ditto_syscall_set_calls(c, 1000) == 0);
	CHECK(ditto_hist_add(ditto_syscall_size_ensure(c), 16384, 1000) == 0);
	CHECK(ditto_hist_add(ditto_syscall_ret_ensure(c), 40, 990) == 0);
	CHECK(ditto_hist_add(ditto_syscall_ret_ensure(c), 0, 10) == 0);
	return 0;
}

/* Profile: a session with options, then freed. Loading BPF programs needs
 * root or CAP_BPF and a kernel with BTF; their documented refusals still
 * prove the code is linked and runs. */
static int profile_stage(void)
{
	DITTO_OPTS(ditto_profile_opts, opts, .duration_s = 1, .sample_hz = -1, .cpu_windows = -1);
	struct ditto_profile *p = NULL;
	int err = ditto_profile_new(&opts, &p);

	CHECK(err == 0 || err == -EPERM || err == -EOPNOTSUPP);
	ditto_profile_free(p);
	printf("consumer: profile: ditto_profile_new: %s\n", err ? ditto_strerror(err) : "ok");
	return 0;
}

/* Synth: the clone tree of the small model, into a scratch directory. */
static int synth_stage(struct ditto_model *m)
{
	char tmp[] = "/tmp/ditto-consumer-XXXXXX", dir[64], path[96];

	CHECK(mkdtemp(tmp) != NULL);
	snprintf(dir, sizeof(dir), "%s/clone", tmp);
	DITTO_OPTS(ditto_synth_opts, opts, .seed = 7);
	int err = ditto_synth_write(m, dir, &opts);
	snprintf(path, sizeof(path), "%s/Makefile", dir);
	int found = access(path, R_OK) == 0;
	char cmd[96];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	CHECK(system(cmd) == 0);
	CHECK(err == 0);
	CHECK(found);
	printf("consumer: synth: clone tree written\n");
	return 0;
}

/* Tune: a metrics set (what ditto_measure() fills) and the hardware
 * counter probe, neither of which needs a running service. */
static int tune_stage(void)
{
	struct ditto_metrics *mt = NULL;
	double v = 0;

	CHECK(ditto_metrics_new(&mt) == 0);
	CHECK(ditto_metrics_set(mt, "ipc", 1.5) == 0);
	CHECK(ditto_metrics_get(mt, "ipc", &v) == 0 && v == 1.5);
	CHECK(ditto_metrics_count(mt) == 1);
	ditto_metrics_free(mt);
	printf("consumer: tune: metrics ok, hardware counters %s\n",
	       ditto_counters_available() ? "available" : "not available");
	return 0;
}

int main(void)
{
	struct ditto_model *m = NULL, *back = NULL;
	void *buf = NULL, *buf2 = NULL;
	size_t len = 0, len2 = 0;

	CHECK(strcmp(ditto_version(), DITTO_VERSION_STRING) == 0);
	CHECK(ditto_version_number() == DITTO_VERSION_NUMBER);
	CHECK(build(&m) == 0);
	/* A model records the version of the library that made it. */
	CHECK(strcmp(ditto_meta_tool_version(ditto_model_meta(m)), ditto_version()) == 0);
	CHECK(ditto_model_validate(m, NULL) == 0);
	CHECK(ditto_model_encode(m, &buf, &len) == 0);
	CHECK(ditto_model_decode(buf, len, NULL, &back) == 0);
	CHECK(ditto_model_service_count(back) == 1);
	uint64_t calls = 0;
	CHECK(ditto_model_get_u64(back, "services[kv].syscalls[main:read:tcp].calls", &calls) == 0);
	CHECK(calls == 1000);
	CHECK(ditto_model_encode(back, &buf2, &len2) == 0);
	CHECK(len == len2 && memcmp(buf, buf2, len) == 0);
	printf("consumer: %zu-byte model round-trips\n", len);

	CHECK(profile_stage() == 0);
	CHECK(synth_stage(m) == 0);
	CHECK(tune_stage() == 0);

	ditto_free(buf);
	ditto_free(buf2);
	ditto_model_free(m);
	ditto_model_free(back);
	printf("%s\n", ditto_version());
	return 0;
}
