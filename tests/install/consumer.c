/* A program built only against the installed headers and library (through
 * pkg-config): checks the version, then builds a small model, encodes it,
 * decodes it and encodes it again, expecting the same bytes. */
#include <ditto/ditto.h>

#include <stdio.h>
#include <string.h>

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
	CHECK(ditto_requests_set_count(ditto_service_requests(s), 1000) == 0);
	struct ditto_syscall *c = ditto_service_add_syscall(s, "main", "read", DITTO_FD_TCP);
	CHECK(c != NULL);
	CHECK(ditto_syscall_set_calls(c, 1000) == 0);
	CHECK(ditto_hist_add(ditto_syscall_size(c), 16384, 1000) == 0);
	CHECK(ditto_hist_add(ditto_syscall_ret(c), 40, 990) == 0);
	CHECK(ditto_hist_add(ditto_syscall_ret(c), 0, 10) == 0);
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
	CHECK(ditto_model_validate(m, NULL) == 0);
	CHECK(ditto_model_encode(m, &buf, &len) == 0);
	CHECK(ditto_model_decode(buf, len, NULL, &back) == 0);
	CHECK(ditto_model_service_count(back) == 1);
	uint64_t calls = 0;
	CHECK(ditto_model_get_u64(back, "services[kv].syscalls[main:read:tcp].calls", &calls) == 0);
	CHECK(calls == 1000);
	CHECK(ditto_model_encode(back, &buf2, &len2) == 0);
	CHECK(len == len2 && memcmp(buf, buf2, len) == 0);

	ditto_free(buf);
	ditto_free(buf2);
	ditto_model_free(m);
	ditto_model_free(back);
	printf("consumer: libditto %s: %zu-byte model round-trips\n", ditto_version(), len);
	return 0;
}
