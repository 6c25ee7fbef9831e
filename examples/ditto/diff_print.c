/* SPDX-License-Identifier: MIT */
/* Printing a comparison (diff_print.h). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "diff_print.h"

/* A name on one line: tab and newline (the only control characters a
 * valid name holds) as \xNN, as the library's messages show them. */
void diff_print_name(FILE *f, const char *name)
{
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
}

/* Bytes a name takes once shown by diff_print_name(). */
static size_t shown_len(const char *name)
{
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		n += *p < 0x20 || *p == 0x7f ? 4 : 1;
	return n;
}

/* The names ditto_comparison_to_json() uses, so both outputs read alike. */
static const char *kind_name(enum ditto_metric_kind kind)
{
	switch (kind) {
	case DITTO_METRIC_SCALAR:
		return "scalar";
	case DITTO_METRIC_DISTRIBUTION:
		return "distribution";
	case DITTO_METRIC_ONLY_A:
		return "only_a";
	case DITTO_METRIC_ONLY_B:
		return "only_b";
	}
	return "?";
}

/* Width of the path column: the longest path, so that columns line up. */
static int path_width(const struct ditto_comparison *cmp)
{
	size_t width = strlen("path");

	for (size_t i = 0; i < ditto_comparison_count(cmp); i++) {
		const char *path = NULL;

		if (ditto_comparison_metric(cmp, i, &path, NULL, NULL, NULL, NULL) == 0 && path &&
		    shown_len(path) > width)
			width = shown_len(path);
	}
	return (int)width;
}

/* A side that lacks the element shows "-" rather than a made-up 0. */
static void print_side(double v, bool present)
{
	if (present)
		printf("  %14.6g", v);
	else
		printf("  %14s", "-");
}

static void print_row(const struct ditto_comparison *cmp, size_t i, int width)
{
	const char *path = NULL;
	enum ditto_metric_kind kind = DITTO_METRIC_SCALAR;
	double a = 0, b = 0, error = 0;

	if (ditto_comparison_metric(cmp, i, &path, &kind, &a, &b, &error) < 0)
		return;
	/* Paths hold the model's names: shown escaped, padded by hand. */
	path = path ? path : "?";
	diff_print_name(stdout, path);
	printf("%*s  %-12s", width - (int)shown_len(path), "", kind_name(kind));
	print_side(a, kind != DITTO_METRIC_ONLY_B);
	print_side(b, kind != DITTO_METRIC_ONLY_A);
	printf("  %8.4f\n", error);
}

static int print_table(const struct ditto_comparison *cmp)
{
	size_t n = ditto_comparison_count(cmp);
	int width = path_width(cmp);

	printf("%-*s  %-12s  %14s  %14s  %8s\n", width, "path", "kind", "a", "b", "error");
	for (size_t i = 0; i < n; i++)
		print_row(cmp, i, width);
	printf("%zu metric%s, max error %.4f\n", n, n == 1 ? "" : "s",
	       ditto_comparison_max_error(cmp));
	return CLI_OK;
}

static int print_json(const struct ditto_comparison *cmp)
{
	char *text = NULL;
	int rc = ditto_comparison_to_json(cmp, &text);

	if (rc < 0)
		return cli_fail("comparison", rc);
	puts(text);
	ditto_free(text);
	return CLI_OK;
}


int diff_print(const struct ditto_comparison *cmp, bool json)
{
	return json ? print_json(cmp) : print_table(cmp);
}

void diff_worst(const struct ditto_comparison *all, double *worst, char *path, size_t n)
{
	*worst = 0;
	snprintf(path, n, "-");
	for (size_t i = 0; i < ditto_comparison_count(all); i++) {
		const char *p = NULL;
		double e = 0;

		if (!ditto_comparison_metric(all, i, &p, NULL, NULL, NULL, &e) && e > *worst) {
			*worst = e;
			snprintf(path, n, "%s", p ? p : "?");
		}
	}
}

void diff_verdict(const char *what, double bound, double worst, const char *where)
{
	printf("%s %s the bound %g: max error %.4f at ", what,
	       worst > bound ? "differ beyond" : "within", bound, worst);
	diff_print_name(stdout, where);
	putchar('\n');
}
