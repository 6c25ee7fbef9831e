/* SPDX-License-Identifier: MIT */
/*
 * The report's plot: latency percentiles (p50 solid, p99 dashed; log
 * scale) against the load achieved, original in blue, clone in orange.
 * Plain SVG written by hand: no plotting dependency.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core_int.h"
#include "tune_int.h"

#define W 720
#define H 440
#define L 80	/* left margin */
#define B 60	/* bottom margin */
#define T 40	/* top margin */
#define R 160	/* right margin, for the legend */

struct frame {
	double xmax, ymin, ymax;	/* ymin/ymax are log10 of microseconds */
};

static double px(const struct frame *f, double qps)
{
	return L + (W - L - R) * qps / f->xmax;
}

static double py(const struct frame *f, double ns)
{
	double y = log10(fmax(ns / 1000, 1e-3));

	return H - B - (H - B - T) * (y - f->ymin) / (f->ymax - f->ymin);
}

static void bounds(const struct ditto_tune_report *r, struct frame *f)
{
	double lo = INFINITY, hi = 0, x = 0;

	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < r->ncurve[s]; i++) {
			const struct tune_point *p = &r->curve[s][i];

			x = fmax(x, p->achieved);
			lo = fmin(lo, p->p50);
			hi = fmax(hi, p->p99);
		}
	f->xmax = x > 0 ? x * 1.1 : 1;
	f->ymin = floor(log10(fmax(lo / 1000, 1e-3)));
	f->ymax = ceil(log10(fmax(hi / 1000, 1e-3)));
	if (f->ymax <= f->ymin)
		f->ymax = f->ymin + 1;
}

static void axes(FILE *o, const struct frame *f)
{
	c_fprintf(o, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='black'/>\n", L, H - B, W - R, H - B);
	c_fprintf(o, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='black'/>\n", L, T, L, H - B);
	for (double d = f->ymin; d <= f->ymax; d++) {
		double y = py(f, pow(10, d) * 1000);

		c_fprintf(o, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#ddd'/>\n"
			"<text x='%d' y='%.1f' text-anchor='end'>%g µs</text>\n",
			L, y, W - R, y, L - 6, y + 4, pow(10, d));
	}
	for (int i = 0; i <= 4; i++) {
		double q = f->xmax * i / 4;

		c_fprintf(o, "<text x='%.1f' y='%d' text-anchor='middle'>%.0f</text>\n", px(f, q),
			H - B + 18, q);
	}
	c_fprintf(o, "<text x='%d' y='%d' text-anchor='middle'>achieved load (requests/s)</text>\n",
		(L + W - R) / 2, H - 14);
}

static void line(FILE *o, const struct frame *f, const struct ditto_tune_report *r, int side,
		 bool p99)
{
	const char *color = side ? "#e6740b" : "#1f5fbf";

	if (!r->ncurve[side])
		return;
	c_fprintf(o, "<polyline fill='none' stroke='%s' stroke-width='2'%s points='", color,
		p99 ? " stroke-dasharray='6,4'" : "");
	for (size_t i = 0; i < r->ncurve[side]; i++) {
		const struct tune_point *p = &r->curve[side][i];

		c_fprintf(o, "%.1f,%.1f ", px(f, p->achieved), py(f, p99 ? p->p99 : p->p50));
	}
	fputs("'/>\n", o);
}

static void legend(FILE *o)
{
	static const char *const names[4] = { "original p50", "original p99", "clone p50", "clone p99" };

	for (int i = 0; i < 4; i++) {
		int y = T + 20 * i;

		c_fprintf(o, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='%s' stroke-width='2'%s/>"
			"<text x='%d' y='%d'>%s</text>\n", W - R + 12, y, W - R + 40, y,
			i < 2 ? "#1f5fbf" : "#e6740b", i % 2 ? " stroke-dasharray='6,4'" : "",
			W - R + 46, y + 4, names[i]);
	}
}

DITTO_API int ditto_tune_report_plot_svg(const struct ditto_tune_report *r, const char *path)
{
	struct frame f;
	FILE *o;
	int err = 0;

	if (!r || !path)
		return ditto_err(-EINVAL, "tune: a report and a path are needed");
	if (!r->ncurve[0] && !r->ncurve[1])
		return ditto_err(-DITTO_ENOTFOUND, "tune: the report has no latency points "
				 "(tune with latency measurement on)");
	if (!(o = fopen(path, "w")))
		return ditto_err(-errno, "tune: %s: %s", path, strerror(errno));
	bounds(r, &f);
	c_fprintf(o, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
		"font-family='sans-serif' font-size='12'>\n<rect width='100%%' height='100%%' "
		"fill='white'/>\n<text x='%d' y='24' font-size='15'>latency against load: "
		"original and clone</text>\n", W, H, L);
	axes(o, &f);
	for (int s = 0; s < 2; s++) {
		line(o, &f, r, s, false);
		line(o, &f, r, s, true);
	}
	legend(o);
	fputs("</svg>\n", o);
	if (ferror(o))
		err = -EIO;
	if (fclose(o) && !err)
		err = -errno;
	return err ? ditto_err(err, "tune: writing %s: %s", path, strerror(-err)) : 0;
}
