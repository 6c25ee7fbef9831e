/* SPDX-License-Identifier: MIT */
/*
 * Test helpers for the OTLP/HTTP receiver: ExportTraceServiceRequest
 * bodies built with the protobuf-c code the build generates, and a plain
 * blocking HTTP/1.1 client over a real socket.
 */
#ifndef DITTO_TESTS_OTLP_CLIENT_H
#define DITTO_TESTS_OTLP_CLIENT_H

#include <stddef.h>
#include <stdint.h>

/* A request of two services: "front" (a SERVER span and its CLIENT
 * child to back:8081 with sizes) and "back" (a SERVER span under the
 * old instrumentation_library_spans field), plus one span whose trace id
 * is 3 bytes long (to be rejected). malloc'd; *len its size. */
uint8_t *otlp_sample_request(size_t *len);

/* Connect to 127.0.0.1:port (blocking, 5 s receive timeout): the fd. */
int otlp_connect(uint16_t port);
/* Send all of buf. */
void otlp_send_all(int fd, const void *buf, size_t len);
/* POST /v1/traces on fd with content type ctype, extra header lines
 * (each ending in \r\n, or "") and the body; the status of the answer,
 * its body copied to rbody (rsize bytes at most), or -1 when the
 * connection closed without one. */
int otlp_post(int fd, const char *ctype, const char *extra, const void *body, size_t len,
	      char *rbody, size_t rsize);
/* Read one answer: its status or -1. */
int otlp_read_answer(int fd, char *rbody, size_t rsize);

#endif
