/* SPDX-License-Identifier: MIT */
/*
 * The load generator never fails silently (issue 17): a service that never
 * answers, one that resets every connection and a port nobody listens on,
 * through the public API, on 127.0.0.1 at free ports; each run is bounded
 * to about half a second.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ditto/model.h>
#include <ditto/tune.h>

#include "tu.h"

/* A listener on 127.0.0.1 at a free port. Connections complete in its
 * backlog whether or not it accepts them. */
static int listener(unsigned *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(fd, 64), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* Accepts, reads a request and resets the connection (SO_LINGER 0),
 * until stop is set. */
struct resetter {
	int fd;
	volatile int stop;
	pthread_t tid;
};

static void *reset_main(void *arg)
{
	struct resetter *s = arg;
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	char buf[4096];

	while (!s->stop) {
		struct pollfd p = { .fd = s->fd, .events = POLLIN };
		int c;

		if (poll(&p, 1, 20) <= 0 || (c = accept(s->fd, NULL, NULL)) < 0)
			continue;
		p = (struct pollfd){ .fd = c, .events = POLLIN };
		if (poll(&p, 1, 1000) > 0)
			(void)!recv(c, buf, sizeof(buf), 0);
		setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(c);
	}
	return NULL;
}

static void load_opts(struct ditto_loadgen_opts *o, unsigned port)
{
	memset(o, 0, sizeof(*o));
	o->sz = sizeof(*o);
	o->port = port;
	o->framing = DITTO_FRAMING_RESP;
	o->connections = 2;
}

START_TEST(never_answered_is_eio_with_timeouts)
{
	struct ditto_loadgen_opts o;
	struct ditto_load_result *r = NULL;
	unsigned port;
	int fd = listener(&port);

	load_opts(&o, port);
	o.duration_s = 0.5;
	/* the default answer timeout shrinks to the run: no silent zeros */
	ck_assert_int_eq(ditto_load_run(&o, &r), -EIO);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(ditto_load_result_completed(r), 0);
	ck_assert_uint_eq(ditto_load_result_errors_by(r, DITTO_LOAD_ERR_TIMEOUT), 2);
	ck_assert_uint_eq(ditto_load_result_errors(r), 2);
	tu_assert_err_has("no request to 127.0.0.1:");
	tu_assert_err_has("timeout 2");
	ditto_load_result_free(r);
	close(fd);
}
END_TEST

START_TEST(requests_without_duration_end_at_the_deadline)
{
	struct ditto_loadgen_opts o;
	struct ditto_load_result *r = NULL;
	unsigned port;
	int fd = listener(&port);
	char *json = NULL;

	load_opts(&o, port);
	o.requests = 100;
	o.deadline_s = 0.5;
	ck_assert_int_eq(ditto_load_run(&o, &r), -ETIMEDOUT);
	ck_assert_ptr_nonnull(r);
	/* the requests outstanding at the deadline are its timeouts */
	ck_assert_uint_eq(ditto_load_result_errors_by(r, DITTO_LOAD_ERR_TIMEOUT), 2);
	ck_assert(ditto_load_result_elapsed_s(r) < 1);
	tu_assert_err_has("deadline of 0.5 s passed with 0 of 100 requests");
	tu_assert_err_has("timeout 2");
	ck_assert_int_eq(ditto_load_result_to_json(r, &json), 0);
	ck_assert_ptr_nonnull(strstr(json, "\"errors_by_kind\": {\"refused\": 0, \"reset\": 0, "
					   "\"closed\": 0, \"timeout\": 2,"));
	ditto_free(json);
	ditto_load_result_free(r);
	close(fd);
}
END_TEST

START_TEST(resets_are_counted_as_reset)
{
	struct ditto_loadgen_opts o;
	struct ditto_load_result *r = NULL;
	struct resetter s = { 0 };
	unsigned port;

	s.fd = listener(&port);
	ck_assert_int_eq(pthread_create(&s.tid, NULL, reset_main, &s), 0);
	load_opts(&o, port);
	o.requests = 10;
	o.deadline_s = 5;
	ck_assert_int_eq(ditto_load_run(&o, &r), -EIO);
	s.stop = 1;
	pthread_join(s.tid, NULL);
	close(s.fd);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(ditto_load_result_errors_by(r, DITTO_LOAD_ERR_RESET), 10);
	ck_assert_uint_eq(ditto_load_result_errors(r), 10);
	tu_assert_err_has("(10 failed: reset 10)");
	ditto_load_result_free(r);
}
END_TEST

START_TEST(nothing_listening_is_refused_without_a_result)
{
	struct ditto_loadgen_opts o;
	struct ditto_load_result *r = (struct ditto_load_result *)1;
	unsigned port;

	close(listener(&port));
	load_opts(&o, port);
	ck_assert_int_eq(ditto_load_run(&o, &r), -ECONNREFUSED);
	ck_assert_ptr_null(r);
	tu_assert_err_has("refused");
}
END_TEST

START_TEST(error_kinds_have_stable_names)
{
	static const char *const want[] = { NULL, "refused", "reset", "closed", "timeout",
					    "unparseable", "error_reply", "other" };

	for (int k = 1; k < 8; k++)
		ck_assert_str_eq(ditto_load_error_name((enum ditto_load_error)k), want[k]);
	ck_assert_ptr_null(ditto_load_error_name((enum ditto_load_error)0));
	ck_assert_ptr_null(ditto_load_error_name((enum ditto_load_error)8));
	ck_assert_int_eq(DITTO_LOAD_ERR_REFUSED, 1);
	ck_assert_int_eq(DITTO_LOAD_ERR_OTHER, 7);
	ck_assert_uint_eq(ditto_load_result_errors_by(NULL, DITTO_LOAD_ERR_TIMEOUT), 0);
}
END_TEST

START_TEST(a_bad_deadline_is_einval)
{
	struct ditto_loadgen_opts o;
	struct ditto_load_result *r = NULL;

	load_opts(&o, 1);
	o.deadline_s = -1;
	ck_assert_int_eq(ditto_load_run(&o, &r), -EINVAL);
	ck_assert_ptr_null(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("load");
	TCase *tc = tu_tcase("failures");

	tcase_add_test(tc, never_answered_is_eio_with_timeouts);
	tcase_add_test(tc, requests_without_duration_end_at_the_deadline);
	tcase_add_test(tc, resets_are_counted_as_reset);
	tcase_add_test(tc, nothing_listening_is_refused_without_a_result);
	tcase_add_test(tc, error_kinds_have_stable_names);
	tcase_add_test(tc, a_bad_deadline_is_einval);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
