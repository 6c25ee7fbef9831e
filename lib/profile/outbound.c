/* SPDX-License-Identifier: MIT */
/*
 * Outbound traffic: the per-endpoint counts the collector kept for
 * connections the service opened (bpf/outbound.bpf.h), summed over CPUs
 * and written to services[].outbound, apart from the requests it serves.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "profile_int.h"

/* The counters of dt_ep_val, ahead of first_bytes, add across CPUs. */
static void ep_add(struct dt_ep_val *dst, const struct dt_ep_val *src)
{
	size_t n = offsetof(struct dt_ep_val, first_bytes) / sizeof(uint64_t);
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *s = (const uint64_t *)src;

	for (size_t i = 0; i < n; i++)
		d[i] += s[i];
	if (!dst->first_len && src->first_len) {
		memcpy(dst->first_bytes, src->first_bytes, sizeof(dst->first_bytes));
		dst->first_len = src->first_len;
	}
}

static int push(struct snapshot *out, const struct dt_ep_key *k, const struct dt_ep_val *per,
		int ncpu)
{
	struct outbound_rec *r, *p = realloc(out->outbound, (out->noutbound + 1) * sizeof(*p));

	if (!p)
		return ditto_err(-ENOMEM, "out of memory");
	out->outbound = p;
	r = &p[out->noutbound++];
	memset(r, 0, sizeof(*r));
	r->key = *k;
	for (int cpu = 0; cpu < ncpu; cpu++)
		ep_add(&r->val, &per[cpu]);
	return 0;
}

int outbound_read(int fd, struct snapshot *out)
{
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	struct dt_ep_key key, next, *prev = NULL;
	struct dt_ep_val *per;

	if (ncpu <= 0)
		return ditto_err(ncpu ? ncpu : -EINVAL, "cannot count CPUs");
	/* 8-byte aligned values, one per possible CPU: the struct is. */
	_Static_assert(sizeof(struct dt_ep_val) % 8 == 0, "dt_ep_val");
	per = calloc((size_t)ncpu, sizeof(*per));
	if (!per)
		return ditto_err(-ENOMEM, "out of memory");
	while (!err && bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (bpf_map_lookup_elem(fd, &next, per) == 0)
			err = push(out, &next, per, ncpu);
		key = next;
		prev = &key;
	}
	free(per);
	return err;
}

/* The peer as inet_ntop() writes it; false for a family we do not name. */
static bool endpoint_name(const struct dt_ep_key *k, char *buf, size_t len)
{
	if (k->family == AF_INET)
		return inet_ntop(AF_INET, k->addr, buf, (socklen_t)len) != NULL;
	if (k->family == AF_INET6)
		return inet_ntop(AF_INET6, k->addr, buf, (socklen_t)len) != NULL;
	return false;
}

static int fill_one(struct ditto_outbound *o, const struct dt_ep_val *v)
{
	unsigned char first[16];
	int err;

	memcpy(first, v->first_bytes, sizeof(first));
	if ((err = ditto_outbound_set_framing(o, framing_detect(first, v->first_len))) ||
	    (err = ditto_outbound_set_connections(o, v->connects)) ||
	    (err = ditto_outbound_set_calls(o, v->calls)) ||
	    (err = ditto_outbound_set_sends(o, v->sends)) ||
	    (err = ditto_outbound_set_receives(o, v->recvs)) ||
	    (err = ditto_outbound_set_request_bytes_total(o, v->bytes_sent)) ||
	    (err = ditto_outbound_set_response_bytes_total(o, v->bytes_recv)) ||
	    (err = hist_add_log2(ditto_outbound_request_bytes_ensure(o), v->req_bytes,
				 LOG2_BUCKETS)))
		return err;
	return hist_add_log2(ditto_outbound_response_bytes_ensure(o), v->resp_bytes, LOG2_BUCKETS);
}

int outbound_store(struct ditto_service *svc, const struct snapshot *s)
{
	char addr[INET6_ADDRSTRLEN];
	int err = 0;

	for (size_t i = 0; i < s->noutbound && !err; i++) {
		const struct outbound_rec *r = &s->outbound[i];
		struct ditto_outbound *o;

		/* An endpoint known only by a connect() that failed, or by a
		 * family we cannot name, tells the graph nothing. */
		if (!r->key.port || !endpoint_name(&r->key, addr, sizeof(addr)) ||
		    !(r->val.calls || r->val.connects || r->val.bytes_recv))
			continue;
		o = ditto_service_add_outbound(svc, addr, r->key.port);
		err = o ? fill_one(o, &r->val) : -ENOMEM;
	}
	return err;
}
