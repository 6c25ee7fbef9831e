/* SPDX-License-Identifier: MIT */
/*
 * srv_sendfile: srv_blocking (thread per connection) that writes each
 * response's 4-byte header and sends its payload from a file with
 * sendfile(), as static-file servers do. Per request on the serving
 * thread: 1 read, 1 write, 1 sendfile (more on a short send).
 */
#define GT_SENDFILE 1
#include "srv_blocking.c"
