/* SPDX-License-Identifier: MIT */
/* msgpack <-> document tree, and the schema pass that types a decoded tree. */
#ifndef DITTO_CODEC_H
#define DITTO_CODEC_H

#include "dom.h"
#include "schema.h"

struct read_limits {
	size_t max_bytes;
	unsigned max_depth;
};

/* Parse one msgpack value filling all of buf. On error *out is NULL and the
 * message says where (byte offset). */
int msgpack_read(const void *buf, size_t len, const struct read_limits *lim, struct dnode **out);
/* Encode a tree; the buffer is malloc'd. */
int msgpack_write(const struct dnode *root, void **buf, size_t *len);

/* Check the types of known fields under root, normalising numbers and
 * turning histogram maps into DN_HIST nodes. Error names the path. */
int typecheck_model(struct dnode *root);

/* Path text helpers shared by typecheck, validate, merge and compare. */
size_t path_push_field(struct dbuf *p, const char *name);
size_t path_push_index(struct dbuf *p, size_t i);
size_t path_push_label(struct dbuf *p, const struct section *s, const struct dnode *obj);
void path_pop(struct dbuf *p, size_t mark);
const char *path_str(const struct dbuf *p);

/* JSON of one value, appended to out. */
void json_write(struct dbuf *out, const struct dnode *n, bool pretty, int depth);

#endif /* DITTO_CODEC_H */
