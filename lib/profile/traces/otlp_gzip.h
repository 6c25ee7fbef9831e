/* SPDX-License-Identifier: MIT */
/* A gzip body (Content-Encoding: gzip) inflated with a bound on its size:
 * a small body can expand a thousandfold. */
#ifndef DITTO_OTLP_GZIP_H
#define DITTO_OTLP_GZIP_H

#include <stddef.h>
#include <stdint.h>

/* 0 with *out (malloc'd, free()) of *outlen bytes; -E2BIG when the
 * inflated body would pass max_out (inflating stops there), -EBADMSG
 * when in is not one complete gzip stream, -ENOMEM. */
int otlp_gunzip(const uint8_t *in, size_t len, size_t max_out, uint8_t **out, size_t *outlen);

#endif
