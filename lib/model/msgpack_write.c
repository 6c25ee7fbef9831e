/* SPDX-License-Identifier: MIT */
/*
 * Document tree -> msgpack through msgpack-c's packer. Histograms are
 * written as {"kind", "precision" (loglin only), "buckets": [[lo, count]...]}
 * with lo the smallest value of each bucket, so that other readers need
 * not know our bucket numbering.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "codec.h"

static int pack_cstr(msgpack_packer *pk, const char *s)
{
	size_t n = strlen(s);

	return msgpack_pack_str(pk, n) || msgpack_pack_str_body(pk, s, n);
}

static int pack_hist(msgpack_packer *pk, const struct ditto_hist *h)
{
	bool loglin = h->kind == DITTO_HIST_LOGLIN;
	int err;

	err = msgpack_pack_map(pk, loglin ? 3 : 2) || pack_cstr(pk, "kind") ||
	      pack_cstr(pk, hist_kind_name(h->kind));
	if (!err && loglin)
		err = pack_cstr(pk, "precision") || msgpack_pack_uint32(pk, h->precision);
	err = err || pack_cstr(pk, "buckets") || msgpack_pack_array(pk, h->n);
	for (size_t i = 0; i < h->n && !err; i++) {
		uint64_t lo, hi;

		hist_key_range(h, h->keys[i], &lo, &hi);
		err = msgpack_pack_array(pk, 2) || msgpack_pack_uint64(pk, lo) ||
		      msgpack_pack_uint64(pk, h->counts[i]);
	}
	return err;
}

static int pack_node(msgpack_packer *pk, const struct dnode *n)
{
	int err = 0;

	switch (n->type) {
	case DN_NIL: return msgpack_pack_nil(pk);
	case DN_BOOL: return n->b ? msgpack_pack_true(pk) : msgpack_pack_false(pk);
	case DN_INT: return msgpack_pack_int64(pk, n->i);
	case DN_UINT: return msgpack_pack_uint64(pk, n->u);
	case DN_FLOAT: return msgpack_pack_double(pk, n->f);
	case DN_STR:
		return msgpack_pack_str(pk, n->s.len) || msgpack_pack_str_body(pk, n->s.p, n->s.len);
	case DN_BIN:
		return msgpack_pack_bin(pk, n->s.len) || msgpack_pack_bin_body(pk, n->s.p, n->s.len);
	case DN_EXT:
		return msgpack_pack_ext(pk, n->s.len, n->ext_type) ||
		       msgpack_pack_ext_body(pk, n->s.p, n->s.len);
	case DN_ARR:
		err = msgpack_pack_array(pk, n->a.n);
		for (size_t i = 0; i < n->a.n && !err; i++)
			err = pack_node(pk, n->a.items[i]);
		return err;
	case DN_MAP:
		err = msgpack_pack_map(pk, n->m.n);
		for (size_t i = 0; i < n->m.n && !err; i++)
			err = pack_cstr(pk, n->m.m[i].key) || pack_node(pk, n->m.m[i].val);
		return err;
	case DN_HIST:
		return pack_hist(pk, n->h);
	}
	return -1;
}

int msgpack_write(const struct dnode *root, void **buf, size_t *len)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	if (pack_node(&pk, root)) {
		msgpack_sbuffer_destroy(&sb);
		return ditto_err(-ENOMEM, "msgpack: out of memory while encoding");
	}
	*len = sb.size;
	*buf = msgpack_sbuffer_release(&sb);
	if (!*buf) {
		/* An empty buffer is never produced: a model is at least a map. */
		return ditto_err(-ENOMEM, "msgpack: out of memory while encoding");
	}
	return 0;
}
