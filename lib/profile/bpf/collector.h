/* SPDX-License-Identifier: MIT */
/*
 * Layout shared by the BPF collector (collector.bpf.c) and its loader:
 * map keys and values, histogram geometry and the per-syscall argument
 * descriptions that user space copies in from the syscall table.
 */
#ifndef DITTO_BPF_COLLECTOR_H
#define DITTO_BPF_COLLECTOR_H

#define NR_SYSCALLS 512
#define LOG2_BUCKETS 65		/* value 0, then [2^(k-1), 2^k) for k = 1..64 */
#define LAT_PRECISION 2		/* loglin sub-bucket bits of latencies */
#define LAT_BUCKETS 160		/* covers up to 2^40 ns */
#define MAX_FLAGS 8		/* distinct flag values kept per syscall */
#define MAX_ERRNOS 4		/* distinct errno values kept per syscall */
#define MAX_IOV 8		/* iovec entries summed for readv & co */
#define MAX_SOCKOPTS 8		/* distinct socket options kept (level, name, value) */
#define MAX_SERVICES 16		/* services one collector serves (one traced value each) */

/* Syscall description bits (dt_desc.bits): syscall_bits.h, shared with
 * the syscall table of lib/core. */
#include "syscall_bits.h"

/* Kinds of fd, as enum ditto_fd_kind. */
enum fdk { FDK_NONE, FDK_TCP, FDK_UDP, FDK_UNIX, FDK_FILE, FDK_PIPE, FDK_EVENTFD,
	   FDK_TIMERFD, FDK_EPOLL, FDK_OTHER };

/* Thread behaviour bits (dt_thread.bits). */
#define TB_ACCEPTS	0x01	/* accepted connections */
#define TB_CONN_IO	0x02	/* read or wrote accepted connections */
#define TB_EPOLL	0x04
#define TB_POLL		0x08
#define TB_SELECT	0x10
#define TB_CONNECTS	0x20	/* opened outgoing connections */
#define TB_NONBLOCK_IO	0x40	/* connection I/O on O_NONBLOCK sockets */
#define TB_EAGAIN	0x80	/* connection reads that returned EAGAIN */
#define TB_CLIENT_IO	0x100	/* I/O on connections it opened */
#define TB_ASYNC_CONN	0x200	/* connect returned EINPROGRESS */
#define TB_CREATED	0x400	/* created during the window */
#define TB_ACCEPT_WAIT	0x800	/* accepts nothing in the window, waits on a listener */
#define TB_CONN_WAIT	0x1000	/* served connections; at the end waits in an event call
				 * whose set holds no listener (listen_waiters.c) */

struct dt_desc {
	signed char fd_arg, size_arg, iov_arg, iovcnt_arg, flags_arg, offset_arg;
	unsigned short bits;
};

struct dt_stat_key {
	unsigned int tid;
	unsigned short nr;
	unsigned char fd_kind;
	unsigned char side;	/* SIDE_*: whose connection the fd is */
};
/* A socket fd is a connection the service accepted (inbound), one it
 * connected itself (outbound: a call to a back end, never a request or a
 * response), or neither (listening, unconnected, not a socket). */
#define SIDE_NONE 0
#define SIDE_ACCEPTED 1
#define SIDE_OUTBOUND 2

struct dt_stat_val {
	unsigned long long calls, errors, sequential, offsets;
	unsigned long long size[LOG2_BUCKETS];
	unsigned long long ret[LOG2_BUCKETS];
	unsigned long long size_sum, ret_sum;	/* exact totals of size and ret */
	unsigned long long iov_sum;	/* iovecs of vectored calls, summed */
	unsigned long long offset[LOG2_BUCKETS];
	unsigned long long lat[LAT_BUCKETS];
	unsigned long long flag_val[MAX_FLAGS];
	unsigned long long flag_cnt[MAX_FLAGS];
	unsigned long long flag_other;
	/* Failed calls by errno, the first MAX_ERRNOS values seen (the
	 * rest only in errors): a clone fails the same way. */
	unsigned long long errno_val[MAX_ERRNOS];
	unsigned long long errno_cnt[MAX_ERRNOS];
};

struct dt_thread {
	unsigned int tgid;
	unsigned int bits;
	unsigned long long cpu_ns, ctx_switches, wakeups, last_in;
	unsigned long long threads_created, processes_created;
	unsigned long long first_seen_ns, exited_ns;
	/* For the network model of connections that predate the window
	 * (lib/profile/listen_waiters.c): the epoll fd the thread last waited
	 * on, plus one (0: none); the last connection it read or wrote and
	 * how often it moved from one connection to another. */
	unsigned long long conn_sk, conn_moves;
	/* Moves away from a connection still open: the thread held two at
	 * once (an event loop), where a thread that serves one connection at
	 * a time moves only when its connection has closed. */
	unsigned long long conn_interleaves;
	/* The exit time of the last write on an accepted connection (0:
	 * none since the thread's last read or wait). */
	unsigned long long answered_ns;
	int epfd;
	char comm[16];
};

struct dt_wake_key {
	unsigned int waker, wakee;
};

/* Per accepted connection, keyed by the socket's struct sock address. */
struct dt_conn {
	unsigned long long requests, req_bytes, resp_bytes, req_start_ns;
	unsigned long long first[2];	/* its first request's first 16 bytes */
	unsigned int first_len;
	unsigned char state;	/* CONN_IDLE, CONN_READING, CONN_WRITING */
	unsigned char opts_read;	/* its socket options were looked at */
};
#define CONN_IDLE 0
#define CONN_READING 1
#define CONN_WRITING 2

/*
 * A socket option of the serving connections: `conns` connections had it
 * set to value when first read or written in the window (read from the
 * socket, so options set before the window or inherited from the
 * listener count too); `calls` setsockopt calls set it in the window.
 */
struct dt_sockopt {
	int level, name, value, used;
	unsigned long long conns, calls;
};

/*
 * The first bytes of the first request one connection made in the window,
 * for the framing. Several connections are sampled: a window that opens
 * between a header's read and its payload's sees the payload first, on
 * that connection only.
 */
#define FIRST_SAMPLES 8
struct dt_first {
	unsigned long long bytes[2];
	unsigned int len, pad;
};

/* Whole-service request statistics (one array entry, atomically added). */
struct dt_req_stats {
	unsigned long long requests, connections, closed, pipelined;
	unsigned long long req_bytes[LOG2_BUCKETS];
	unsigned long long resp_bytes[LOG2_BUCKETS];
	unsigned long long per_conn[LOG2_BUCKETS];
	unsigned long long service_ns[LAT_BUCKETS];
	/* From a response's last write to the serving thread's next read,
	 * multiplexing wait or futex wait: the work a server does after it
	 * has answered (Apache's logging and clean-up). */
	unsigned long long after_response_ns[LAT_BUCKETS];
	unsigned long long syscalls, dropped;
	unsigned long long req_bytes_sum, resp_bytes_sum;	/* exact totals */
	/* Connections whose options were read at their first I/O, and
	 * options that found no free slot in sockopts. */
	unsigned long long sockopt_conns, sockopt_other;
	struct dt_first firsts[FIRST_SAMPLES];	/* not summed: collected */
	unsigned int nfirst, pad;
	/* Not summed as counters: user space merges the slots by key. */
	struct dt_sockopt sockopts[MAX_SOCKOPTS];
};

/*
 * A remote endpoint the service connected to, as its socket names the
 * peer: the address in network order (IPv4 in the first 4 bytes), the port
 * in host order. No implicit padding: the struct is a hash key.
 */
struct dt_ep_key {
	unsigned long long addr[2];
	unsigned short port, family;
	unsigned int svc;	/* the calling service's index */
};

/*
 * Outbound traffic to one endpoint, per CPU (summed by user space). A call
 * is a send that follows nothing or a receive on that connection; its
 * request is what is sent until the first receive, its response what is
 * received until the next send or the close. first_bytes: the start of the
 * first call's request, for the callee's framing.
 */
struct dt_ep_val {
	unsigned long long calls, sends, recvs, connects, bytes_sent, bytes_recv;
	unsigned long long req_bytes[LOG2_BUCKETS];
	unsigned long long resp_bytes[LOG2_BUCKETS];
	unsigned long long first_bytes[2];
	unsigned int first_len, pad;
};

/* Per outbound connection, keyed by struct sock address. */
struct dt_oconn {
	struct dt_ep_key ep;
	unsigned int state;	/* CONN_IDLE, CONN_READING (response), CONN_WRITING (request) */
	unsigned long long req_bytes, resp_bytes;
};

/*
 * Ordered events for the graph (a ring buffer, only when user space asks
 * for them): a request begins on an accepted connection (its first read)
 * and is answered (the first write after it); a call begins on a
 * connection the service opened (its first send) and is answered (the
 * first read after it). User space attributes each call to the request
 * its thread was serving (lib/profile/edges.c).
 */
enum dt_event_type { EV_REQ_BEGIN = 1, EV_REQ_RESPOND, EV_CALL_BEGIN, EV_CALL_END };

struct dt_event {
	unsigned long long ts, sk;
	unsigned int tid;
	unsigned char type, svc;
	unsigned short pad;
	struct dt_ep_key ep;	/* EV_CALL_BEGIN: the callee */
};

#endif /* DITTO_BPF_COLLECTOR_H */
