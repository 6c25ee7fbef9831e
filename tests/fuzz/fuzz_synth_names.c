/* Fuzz the names a model hands the synthesizer: the input is up to four
 * NUL-separated names (service, serving class, background class, a
 * syscall of the background class). A name breaking the model's rule must
 * fail validation and, for the service, config_generate() too; valid ones
 * must give a clone_config.c that re-lexes to the same tokens as the one
 * of a model with plain names ("n0", "n1", ...), apart from the contents
 * of string literals, every literal well escaped and decoding back. */
#include <ditto/ditto.h>

#include <stdio.h>
#include <string.h>

#include "core_int.h"
#include "fuzz.h"
#include "synth_int.h"

#define NNAMES 4

struct tok {
	char kind;		/* 's' string literal, 'c' comment, '#' directive, 'w' other */
	const char *p;
	size_t len;
};

/* Decodes the literal at *p (after its opening quote) into out; false
 * when it holds anything c_literal() never writes (a raw control byte, a
 * raw '?', a short or unknown escape, no closing quote). */
static bool decode_literal(const char **p, const char *end, struct dbuf *out)
{
	const char *s = *p;

	for (; s < end && *s != '"'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c >= 0x7f || c == '?')
			return false;
		if (c != '\\') {
			dbuf_putc(out, (char)c);
			continue;
		}
		if (++s >= end)
			return false;
		switch (*s) {
		case 'n': dbuf_putc(out, '\n'); break;
		case 't': dbuf_putc(out, '\t'); break;
		case '"': case '\\': case '?': dbuf_putc(out, *s); break;
		default:
			if (end - s < 3 || s[0] < '0' || s[0] > '3' || s[1] < '0' || s[1] > '7' ||
			    s[2] < '0' || s[2] > '7')
				return false;
			dbuf_putc(out, (char)((s[0] - '0') << 6 | (s[1] - '0') << 3 | (s[2] - '0')));
			s += 2;
		}
	}
	if (s >= end)
		return false;
	*p = s + 1;
	return true;
}

/* Next token of generated C at *p; decoded literals are appended to lits
 * (NUL-separated). False at the end; aborts on a malformed literal. */
static bool next_token(const char **p, const char *end, struct tok *t, struct dbuf *lits)
{
	const char *s = *p;

	while (s < end && (*s == ' ' || *s == '\t' || *s == '\n'))
		s++;
	if (s >= end)
		return false;
	t->p = s;
	if (end - s >= 2 && s[0] == '/' && s[1] == '*') {
		const char *e = memmem(s + 2, (size_t)(end - s - 2), "*/", 2);

		FUZZ_ASSERT(e);
		t->kind = 'c';
		s = e + 2;
	} else if (*s == '#') {
		t->kind = '#';
		while (s < end && *s != '\n' && *s != '"')
			s++;
	} else if (*s == '"') {
		s++;
		t->kind = 's';
		FUZZ_ASSERT(decode_literal(&s, end, lits));
		dbuf_putc(lits, '\0');
	} else {
		t->kind = 'w';
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		    *s == '_' || *s == '.')
			while (s < end && ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
					   (*s >= '0' && *s <= '9') || *s == '_' || *s == '.'))
				s++;
		else
			s++;
	}
	t->len = (size_t)(s - t->p);
	*p = s;
	return true;
}

static struct ditto_model *build(char names[NNAMES][300])
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_service *s = m ? ditto_model_add_service(m, names[0]) : NULL;
	struct ditto_thread_class *serve, *bg;
	struct ditto_syscall *c;

	if (!s)
		return m;
	ditto_service_set_framing(s, DITTO_FRAMING_RESP);
	ditto_requests_set_count(ditto_service_requests_ensure(s), 1000);
	if ((serve = ditto_service_add_thread(s, names[1]))) {
		ditto_thread_class_set_role(serve, DITTO_ROLE_NETWORK);
		if ((c = ditto_service_add_syscall(s, names[1], "read", DITTO_FD_TCP)))
			ditto_syscall_set_calls(c, 1000);
		if ((c = ditto_service_add_syscall(s, names[1], "write", DITTO_FD_TCP)))
			ditto_syscall_set_calls(c, 1000);
	}
	if ((bg = ditto_service_add_thread(s, names[2]))) {
		ditto_thread_class_set_role(bg, DITTO_ROLE_BACKGROUND);
		ditto_thread_class_set_wakeups(bg, 10);
		ditto_thread_class_set_cpu_ns(bg, 1000);
	}
	if ((c = ditto_service_add_syscall(s, names[2], names[3], DITTO_FD_FILE)))
		ditto_syscall_set_calls(c, 500);
	return m;
}

static int generate(struct ditto_model *m, struct dbuf *out)
{
	struct config_in in = { .seed = 1, .window_s = 1 };

	return ditto_model_service_count(m) ? config_generate(ditto_model_service(m, 0), &in, out) : -1;
}

/* Whether the NUL-separated list holds name. */
static bool holds(const struct dbuf *lits, const char *name)
{
	for (size_t i = 0; i < lits->len; i += strlen(lits->data + i) + 1)
		if (!strcmp(lits->data + i, name))
			return true;
	return false;
}

static void compare(const struct dbuf *hostile, const struct dbuf *plain, const char *service)
{
	const char *a = hostile->data, *b = plain->data;
	const char *ae = a + hostile->len, *be = b + plain->len;
	struct dbuf la, lb;
	struct tok x, y;
	bool more;

	dbuf_init(&la);
	dbuf_init(&lb);
	while ((more = next_token(&a, ae, &x, &la))) {
		FUZZ_ASSERT(next_token(&b, be, &y, &lb));
		FUZZ_ASSERT(x.kind == y.kind);
		FUZZ_ASSERT(x.kind == 's' || (x.len == y.len && !memcmp(x.p, y.p, x.len)));
	}
	FUZZ_ASSERT(!next_token(&b, be, &y, &lb));
	FUZZ_ASSERT(holds(&la, service));
	dbuf_free(&la);
	dbuf_free(&lb);
}

static bool bad_name(const char *s)
{
	return name_problem(s, strlen(s)) != NULL;
}

/* Whether a name the model really holds breaks the rule (the API refuses
 * some of the input's names: empty ones, repeated classes). */
static bool model_has_bad_name(struct ditto_service *s)
{
	bool bad = bad_name(ditto_service_name(s));

	for (size_t i = 0; i < ditto_service_thread_count(s); i++)
		bad |= bad_name(ditto_thread_class_name(ditto_service_thread(s, i)));
	for (size_t i = 0; i < ditto_service_syscall_count(s); i++) {
		struct ditto_syscall *c = ditto_service_syscall(s, i);

		bad |= bad_name(ditto_syscall_name(c)) || bad_name(ditto_syscall_thread_class(c));
	}
	return bad;
}

static void quiet(enum ditto_log_level level, const char *msg, void *user)
{
	(void)level, (void)msg, (void)user;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char names[NNAMES][300] = { "s", "serve", "bg", "pread64" }, plain[NNAMES][300];
	struct ditto_model *h, *p;
	struct dbuf hc, pc;
	bool bad = false;
	size_t at = 0;

	ditto_set_log(quiet, NULL, DITTO_LOG_DEBUG);
	for (int i = 0; i < NNAMES && at < size; i++) {
		const uint8_t *start = data + at, *nul = memchr(start, 0, size - at);
		size_t len = nul ? (size_t)(nul - start) : size - at;

		at += len + 1;
		/* An empty name would not be added (the API refuses it): the
		 * default stays, so every name checked below is in the model. */
		if (!len)
			continue;
		if (len >= sizeof(names[i]))
			len = sizeof(names[i]) - 1;
		memcpy(names[i], start, len);
		names[i][len] = '\0';
	}
	/* Plain names equal where the hostile ones are, so both models have
	 * the same classes and references. */
	for (int i = 0; i < NNAMES; i++) {
		snprintf(plain[i], sizeof(plain[i]), "n%d", i);
		for (int j = 0; j < i; j++)
			if (!strcmp(names[i], names[j]))
				memcpy(plain[i], plain[j], sizeof(plain[i]));
	}
	/* The syscall's name picks its replay entry: kept as it is (a name
	 * the replay table knows is plain text anyway). */
	memcpy(plain[3], names[3], sizeof(plain[3]));
	h = build(names);
	p = build(plain);
	dbuf_init(&hc);
	dbuf_init(&pc);
	if (h && p && ditto_model_service_count(h) && ditto_model_service_count(p)) {
		int herr = generate(h, &hc);

		bad = model_has_bad_name(ditto_model_service(h, 0));

		if (bad)
			FUZZ_ASSERT(ditto_model_validate(h, NULL) != 0);
		if (name_problem(names[0], strlen(names[0])))
			FUZZ_ASSERT(herr == -DITTO_EINVALID);
		if (!bad && !herr && !hc.oom) {
			FUZZ_ASSERT(generate(p, &pc) == 0);
			compare(&hc, &pc, names[0]);
		}
	}
	dbuf_free(&hc);
	dbuf_free(&pc);
	ditto_model_free(h);
	ditto_model_free(p);
	return 0;
}
