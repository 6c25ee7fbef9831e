/* SPDX-License-Identifier: MIT */
/*
 * What a complete request body becomes in the OTLP receiver: inflated if
 * gzip'd, decoded as protobuf or JSON into the receiver's spans, and the
 * answer the client gets; and the receiver's counters.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "otlp_gzip.h"
#include "otlp_json.h"
#include "otlp_proto.h"
#include "otlp_recv_int.h"

void otlp_count(struct ditto_otlp_receiver *r, uint64_t *field, uint64_t n)
{
	pthread_mutex_lock(&r->stats_lock);
	*field += n;
	pthread_mutex_unlock(&r->stats_lock);
}

static void set_answer(struct otlp_answer *a, int status, const char *msg)
{
	a->status = status;
	a->ctype = "text/plain";
	snprintf(a->body, sizeof(a->body), "%s\n", msg);
}

/* JSON through the file importer's parser; the spans it added are the
 * set's growth (only this thread adds while the receiver runs). */
static int json_body(struct ditto_otlp_receiver *r, const uint8_t *body, size_t len,
		     struct otlp_decode_counts *counts, char *err, size_t errlen)
{
	size_t n0, rej0;
	int rc;

	pthread_mutex_lock(&r->set.lock);
	n0 = r->set.n;
	rej0 = r->set.rejected;
	pthread_mutex_unlock(&r->set.lock);
	rc = otlp_json_parse_buffer((const char *)body, len, &r->set, err, errlen);
	pthread_mutex_lock(&r->set.lock);
	if (rc == 0)
		r->set.files++;	/* one per request, as otlp_proto_parse_buffer() */
	counts->spans = r->set.n - n0;
	counts->rejected = r->set.rejected - rej0;
	pthread_mutex_unlock(&r->set.lock);
	return rc;
}

void otlp_handle_body(struct ditto_otlp_receiver *r, const struct http_head *h,
		      const uint8_t *body, size_t len, struct otlp_answer *a)
{
	struct otlp_decode_counts counts = { 0 };
	uint8_t *inflated = NULL;
	char err[256] = "";
	int rc;

	if (h->gzip) {
		rc = otlp_gunzip(body, len, r->max_body, &inflated, &len);
		if (rc == -E2BIG) {
			snprintf(err, sizeof(err), "gzip body inflates past the %zu-byte limit",
				 r->max_body);
			set_answer(a, 413, err);
			return;
		}
		if (rc) {
			set_answer(a, rc == -ENOMEM ? 503 : 400,
				   rc == -ENOMEM ? "out of memory" : "body is not valid gzip");
			return;
		}
		body = inflated;
	}
	if (h->ctype == HTTP_CT_PROTOBUF)
		rc = otlp_proto_parse_buffer(body, len, &r->set, &counts, err, sizeof(err));
	else
		rc = json_body(r, body, len, &counts, err, sizeof(err));
	free(inflated);
	otlp_count(r, &r->st.spans, counts.spans);
	otlp_count(r, &r->st.spans_rejected, counts.rejected);
	if (rc == 0) {
		/* An empty ExportTraceServiceResponse: no bytes in protobuf. */
		a->status = 200;
		a->ctype = h->ctype == HTTP_CT_PROTOBUF ? "application/x-protobuf"
							: "application/json";
		strcpy(a->body, h->ctype == HTTP_CT_PROTOBUF ? "" : "{}");
		return;
	}
	if (rc == -ENOTSUP)
		set_answer(a, 415, "application/json bodies are not supported by this build; send application/x-protobuf");
	else if (rc == -E2BIG)
		set_answer(a, 413, err);
	else if (rc == -ENOMEM)
		set_answer(a, 503, "out of memory");
	else
		set_answer(a, 400, err[0] ? err : "body does not decode");
	ditto_debug("OTLP receiver on %s: answered %d: %s", r->name, a->status, err);
}
