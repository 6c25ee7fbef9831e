/* SPDX-License-Identifier: MIT */
/*
 * srv_nagle: srv_blocking (thread per connection) that leaves Nagle on
 * (no TCP_NODELAY) and answers every request in two writes. The second
 * write waits for the ACK of the first, which the client delays: a few
 * dozen requests per second per connection. Its clone must not set
 * TCP_NODELAY, or it answers a thousand times faster. Per request on the
 * serving thread: 1 read, 2 writes.
 */
#define GT_KEEP_NAGLE 1
#define GT_WRITES 2
#include "srv_blocking.c"
