// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * The in-kernel half of the profiler: per thread, syscall and fd kind it
 * aggregates counts and argument/return/latency histograms in maps; it
 * follows accepted connections to count requests, and keeps the scheduler
 * view (CPU time, switches, wake-ups, forks). Only processes in `traced`
 * are looked at; forks of traced processes are added in the kernel, so
 * descendants that appear during the window are never missed.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "collector.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define S_IFMT 00170000
#define S_IFSOCK 0140000
#define S_IFREG 0100000
#define S_IFIFO 0010000
#define O_NONBLOCK 00004000
#define AF_UNIX 1
#define AF_INET 2
#define AF_INET6 10
#define SOCK_STREAM 1
#define SOCK_DGRAM 2
#define SOCK_SEQPACKET 5
#define EAGAIN 11
#define EINPROGRESS 115
#define NR_SETSOCKOPT 54
#define SOL_SOCKET 1
#define SO_SNDBUF 7
#define SO_RCVBUF 8
#define SOL_TCP 6
#define TCP_NODELAY 1
#define TCP_CORK 3
#define TCP_NAGLE_OFF 1		/* tcp_sock.nonagle bits */
#define TCP_NAGLE_CORK 2
#define SOCK_SNDBUF_LOCK 1	/* sock.sk_userlocks bits */
#define SOCK_RCVBUF_LOCK 2

struct dt_inflight {
	__u64 ts, size, flags, offset, sk, buf, arg_ptr, iovcnt;
	__u32 nr;
	__s32 fd;
	__s32 so_level, so_name, so_value;	/* setsockopt on a connection */
	__u8 fd_kind, accepted, has_offset, has_flags, has_size, nonblock, active, has_so;
	__u8 outbound;		/* a connection the service opened (outbound.bpf.h) */
	__u8 svc;		/* the service of the task (its traced value) */
};

/*
 * What a task last learned about its fds: the kind and socket behind a
 * struct file, so that the inode and socket are read once per file and not
 * on every call. Keyed by fd (direct-mapped), checked against the file
 * pointer, dropped when the task closes that fd.
 */
#define FD_CACHE 8
struct dt_fd_cache {
	__u64 file, sk;
	__s32 fd;
	__u8 kind;
};

struct dt_task {
	struct dt_inflight cur;
	struct dt_fd_cache fds[FD_CACHE];
};

struct dt_fpos_key {
	__u32 tgid;
	__s32 fd;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NR_SYSCALLS);
	__type(key, __u32);
	__type(value, struct dt_desc);
} descs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);	/* the service's index */
} traced SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct dt_task);
} inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct dt_stat_key);
	__type(value, struct dt_stat_val);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct dt_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct dt_wake_key);
	__type(value, __u64);
} wakes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct dt_conn);
} conns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct dt_fpos_key);
	__type(value, __u64);
} fpos SEC(".maps");

/* Per CPU and service, summed by user space: no atomic operations on the
 * hot path. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_SERVICES);
	__type(key, __u32);
	__type(value, struct dt_req_stats);
} reqs SEC(".maps");

/* Ports the service listens on: connections to them that were accepted
 * before the window count as accepted ones. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_SERVICES * 32);	/* 32 ports per service (session.c) */
	__type(key, __u16);
	__type(value, __u8);
} listen_ports SEC(".maps");

/* Zeroed template to insert large values without building them on the stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_stat_val);
} zero SEC(".maps");

/* Set by user space before attaching (the programs load when a session is
 * made, before it knows how many services it profiles): ordered events
 * for the graph. */
volatile bool graph_events;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);
} events SEC(".maps");

static __always_inline bool is_traced(__u32 tgid)
{
	return bpf_map_lookup_elem(&traced, &tgid) != NULL;
}

/* The service index of a traced process (0 when not traced). */
static __always_inline __u8 svc_of(__u32 tgid)
{
	__u8 *v = bpf_map_lookup_elem(&traced, &tgid);

	return v ? *v : 0;
}

static __always_inline struct dt_req_stats *reqs_of(__u8 svc)
{
	__u32 k = svc;

	return bpf_map_lookup_elem(&reqs, &k);
}

static __always_inline __u32 ilog2(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) r += 1;
	return r;
}

static __always_inline __u32 log2_bucket(__u64 v)
{
	return v ? ilog2(v) + 1 : 0;
}

static __always_inline __u32 lat_bucket(__u64 ns)
{
	__u32 e, idx;

	if (ns < (1 << LAT_PRECISION))
		return ns;
	e = ilog2(ns);
	idx = (1 << LAT_PRECISION) + (e - LAT_PRECISION) * (1 << LAT_PRECISION) +
	      ((ns >> (e - LAT_PRECISION)) & ((1 << LAT_PRECISION) - 1));
	return idx < LAT_BUCKETS ? idx : LAT_BUCKETS - 1;
}

/*
 * Plain adds: every counter has one writer at a time. Syscall statistics
 * and thread records are keyed by thread (a thread runs on one CPU at a
 * time), request statistics are per CPU. Only wake-ups, which other
 * threads record, use atomic adds.
 */
#define HIST_ADD(arr, idx, n)                                                 \
	do {                                                                 \
		__u32 _i = (idx);                                            \
		if (_i < sizeof(arr) / sizeof((arr)[0]))                     \
			(arr)[_i] += (n);                                    \
	} while (0)

/* A full map drops what it cannot hold: count it so the model says so. */
static __always_inline void count_lost(void)
{
	__u32 z = 0;
	struct dt_req_stats *r = bpf_map_lookup_elem(&reqs, &z);

	if (r)
		r->dropped++;
}

/*
 * One graph event; a full ring buffer loses it, counted. A global
 * function: the verifier checks it once, not at each of its call sites in
 * the already long syscall exit program.
 */
__noinline int emit_event(__u64 ts, __u64 sk, __u32 type_svc, struct dt_ep_key *ep)
{
	struct dt_event *e;

	if (!ep)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_lost();
		return 0;
	}
	e->ts = ts;
	e->sk = sk;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->type = type_svc & 0xff;
	e->svc = type_svc >> 8;
	e->pad = 0;
	e->ep = *ep;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

static __always_inline void emit(__u8 type, __u8 svc, __u64 ts, __u64 sk,
				 const struct dt_ep_key *ep)
{
	struct dt_ep_key none = {};

	if (!graph_events)
		return;
	if (ep)
		none = *ep;
	emit_event(ts, sk, (__u32)type | (__u32)svc << 8, &none);
}

static __always_inline struct dt_thread *thread_of(__u32 tid, __u32 tgid)
{
	struct dt_thread *t = bpf_map_lookup_elem(&threads, &tid);
	struct dt_thread fresh = {};

	if (t)
		return t;
	fresh.tgid = tgid;
	fresh.first_seen_ns = bpf_ktime_get_ns();
	bpf_map_update_elem(&threads, &tid, &fresh, BPF_NOEXIST);
	t = bpf_map_lookup_elem(&threads, &tid);
	if (!t)
		count_lost();
	if (t && tid == (__u32)bpf_get_current_pid_tgid())
		bpf_get_current_comm(t->comm, sizeof(t->comm));
	return t;
}

static __always_inline void thread_bits(__u32 tid, __u32 tgid, __u32 bits)
{
	struct dt_thread *t = thread_of(tid, tgid);

	if (t)
		t->bits |= bits;
}

static __always_inline struct file *fd_file(int fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct file *f = NULL;

	if (fd < 0 || (unsigned int)fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	bpf_core_read(&f, sizeof(f), &fds[fd]);
	return f;
}

static __always_inline __u8 anon_kind(struct file *f)
{
	const unsigned char *name = BPF_CORE_READ(f, f_path.dentry, d_name.name);
	char b[12] = {};

	bpf_probe_read_kernel_str(b, sizeof(b), name);
	if (b[0] != '[')
		return FDK_OTHER;
	if (b[1] == 'e' && b[5] == 't' && b[6] == 'f')
		return FDK_EVENTFD;
	if (b[1] == 'e' && b[5] == 't' && b[6] == 'p')
		return FDK_EPOLL;
	if (b[1] == 't' && b[2] == 'i')
		return FDK_TIMERFD;
	return FDK_OTHER;
}

/* Kind of an open file, and for sockets the struct sock address. */
static __always_inline __u8 file_kind(struct file *f, __u64 *sk_out)
{
	struct socket *sock;
	struct sock *sk;
	__u16 mode, family, type;

	mode = BPF_CORE_READ(f, f_inode, i_mode);
	switch (mode & S_IFMT) {
	case S_IFREG:
		return FDK_FILE;
	case S_IFIFO:
		return FDK_PIPE;
	case S_IFSOCK:
		break;
	default:
		return anon_kind(f);
	}
	sock = BPF_CORE_READ(f, private_data);
	sk = BPF_CORE_READ(sock, sk);
	*sk_out = (__u64)sk;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	type = BPF_CORE_READ(sk, sk_type);
	if (family == AF_UNIX)
		return FDK_UNIX;
	if (family == AF_INET || family == AF_INET6)
		return type == SOCK_STREAM ? FDK_TCP : type == SOCK_DGRAM ? FDK_UDP : FDK_OTHER;
	return FDK_OTHER;
}

/* Kind of fd, the struct sock behind it, and whether it is non-blocking;
 * cache (may be NULL) remembers the kind per file. */
static __always_inline __u8 fd_kind_cached(int fd, __u64 *sk_out, __u8 *nonblock,
					   struct dt_fd_cache *cache)
{
	struct dt_fd_cache *e;
	struct file *f;
	__u8 kind;

	if (fd < 0)
		return FDK_NONE;	/* mmap(-1), AT_FDCWD-style arguments */
	f = fd_file(fd);
	if (!f)
		return FDK_OTHER;
	*nonblock = (BPF_CORE_READ(f, f_flags) & O_NONBLOCK) != 0;
	e = cache ? &cache[fd & (FD_CACHE - 1)] : NULL;
	if (e && e->fd == fd && e->file == (__u64)f) {
		*sk_out = e->sk;
		return e->kind;
	}
	kind = file_kind(f, sk_out);
	if (e) {
		e->fd = fd;
		e->file = (__u64)f;
		e->sk = *sk_out;
		e->kind = kind;
	}
	return kind;
}

static __always_inline __u8 fd_kind(int fd, __u64 *sk_out, __u8 *nonblock)
{
	return fd_kind_cached(fd, sk_out, nonblock, NULL);
}

/*
 * A connected Unix stream socket and the bound address of its listener.
 * The kernel gives the socket accept() returns its listener's address (one
 * shared struct unix_address), while a client that connected without
 * binding has none: so a socket with an address is the serving end, and a
 * client's peer names the listener it reached by that same pointer, which
 * user space matches to the service that served it (edges_store.c). A
 * socketpair has no address at either end: neither serves.
 */
static __always_inline bool unix_connected(__u64 skp)
{
	struct sock *sk = (struct sock *)skp;
	__u16 type = BPF_CORE_READ(sk, sk_type);

	return (type == SOCK_STREAM || type == SOCK_SEQPACKET) &&
	       BPF_CORE_READ(sk, __sk_common.skc_state) == 1 /* TCP_ESTABLISHED */;
}

static __always_inline __u64 unix_addr(__u64 skp)
{
	return (__u64)BPF_CORE_READ((struct unix_sock *)skp, addr);
}

/* The listener's address a client socket reached (0: none, or not one). */
static __always_inline __u64 unix_peer_addr(__u64 skp)
{
	struct sock *peer = BPF_CORE_READ((struct unix_sock *)skp, peer);

	return peer ? unix_addr((__u64)peer) : 0;
}

/* A connection accepted before the window began, on a listening TCP port
 * of the service or on a bound Unix socket: track it from now on. */
static __always_inline bool adopt_conn(__u64 skp, __u8 kind)
{
	struct sock *sk = (struct sock *)skp;
	struct dt_conn fresh = {};
	__u16 port;

	if (kind == FDK_UNIX && unix_connected(skp) && unix_addr(skp)) {
		bpf_map_update_elem(&conns, &skp, &fresh, BPF_NOEXIST);
		return true;
	}
	if (kind != FDK_TCP)
		return false;
	port = BPF_CORE_READ(sk, __sk_common.skc_num);
	if (!bpf_map_lookup_elem(&listen_ports, &port))
		return false;
	/* A listening socket itself is not a connection. */
	if (BPF_CORE_READ(sk, __sk_common.skc_state) == 10 /* TCP_LISTEN */)
		return false;
	bpf_map_update_elem(&conns, &skp, &fresh, BPF_NOEXIST);
	return true;
}

static __always_inline __u64 iov_bytes(const struct iovec *iov, __u64 cnt)
{
	__u64 sum = 0;

	for (int i = 0; i < MAX_IOV; i++) {
		struct iovec v;

		if (i >= cnt)
			break;
		if (bpf_probe_read_user(&v, sizeof(v), &iov[i]))
			break;
		sum += v.iov_len;
	}
	return sum;
}

static __always_inline __u64 arg_of(struct pt_regs *regs, int i)
{
	switch (i) {
	case 0: return BPF_CORE_READ(regs, di);
	case 1: return BPF_CORE_READ(regs, si);
	case 2: return BPF_CORE_READ(regs, dx);
	case 3: return BPF_CORE_READ(regs, r10);
	case 4: return BPF_CORE_READ(regs, r8);
	case 5: return BPF_CORE_READ(regs, r9);
	}
	return 0;
}

#include "outbound.bpf.h"

static __always_inline void enter_size(struct dt_inflight *s, const struct dt_desc *d,
				       struct pt_regs *regs)
{
	if (d->iov_arg >= 0 && d->iovcnt_arg >= 0) {
		s->iovcnt = arg_of(regs, d->iovcnt_arg);
		s->size = iov_bytes((const struct iovec *)arg_of(regs, d->iov_arg), s->iovcnt);
	} else if (d->size_arg < 0) {
		return;
	} else if (d->bits & SD_MSGHDR) {
		struct user_msghdr m = {};

		bpf_probe_read_user(&m, sizeof(m), (void *)arg_of(regs, d->size_arg));
		s->iovcnt = m.msg_iovlen;
		s->size = iov_bytes((const struct iovec *)m.msg_iov, m.msg_iovlen);
	} else if (d->bits & SD_TIMESPEC) {
		struct __kernel_timespec t = {};

		bpf_probe_read_user(&t, sizeof(t), (void *)arg_of(regs, d->size_arg));
		s->size = t.tv_sec * 1000000000ull + t.tv_nsec;
	} else {
		s->size = arg_of(regs, d->size_arg);
	}
	s->has_size = 1;
}

static __always_inline void enter_fd(struct dt_inflight *s, const struct dt_desc *d,
				     struct pt_regs *regs, struct dt_fd_cache *cache)
{
	if (d->fd_arg < 0) {
		s->fd = -1;
		s->fd_kind = FDK_NONE;
		return;
	}
	s->fd = (int)arg_of(regs, d->fd_arg);
	s->fd_kind = fd_kind_cached(s->fd, &s->sk, &s->nonblock, cache);
	/* A closed fd may come back as another file at the same address. */
	if ((d->bits & SD_CLOSE) && s->fd >= 0)
		cache[s->fd & (FD_CACHE - 1)].fd = -1;
	if (s->sk && (bpf_map_lookup_elem(&conns, &s->sk) || adopt_conn(s->sk, s->fd_kind)))
		s->accepted = 1;
	else
		s->outbound = is_outbound(s->sk, s->fd_kind, d);
	if (d->offset_arg >= 0) {
		s->offset = arg_of(regs, d->offset_arg);
		s->has_offset = 1;
	} else if ((d->bits & SD_FILE_POS) && s->fd_kind == FDK_FILE) {
		struct file *f = fd_file(s->fd);

		/* A plain variable: CO-RE must not relocate our own struct. */
		s->offset = BPF_CORE_READ(f, f_pos);
		s->has_offset = 1;
	}
}

/* Adds to the slot of (level, name, value), taking a free one if new. */
static __always_inline void sockopt_add(struct dt_req_stats *r, int level, int name, int value,
					__u64 conns, __u64 calls)
{
	for (int i = 0; i < MAX_SOCKOPTS; i++) {
		struct dt_sockopt *o = &r->sockopts[i];

		if (o->used && (o->level != level || o->name != name || o->value != value))
			continue;
		o->used = 1;
		o->level = level;
		o->name = name;
		o->value = value;
		o->conns += conns;
		o->calls += calls;
		return;
	}
	r->sockopt_other++;
}

/*
 * The options a connection has at its first I/O in the window, read from
 * the socket rather than from setsockopt calls: the server set them right
 * after accept, mostly before the window opened, or the listener passed
 * them on. The kernel keeps twice a buffer size asked for.
 */
static __always_inline void conn_opts(struct dt_req_stats *r, struct dt_conn *c, __u64 skp)
{
	struct tcp_sock *tp = (struct tcp_sock *)skp;
	struct sock *sk = (struct sock *)skp;
	__u8 nonagle, locks;

	if (c->opts_read)
		return;
	c->opts_read = 1;
	r->sockopt_conns++;
	nonagle = BPF_CORE_READ_BITFIELD_PROBED(tp, nonagle);
	locks = BPF_CORE_READ(sk, sk_userlocks);
	if (nonagle & TCP_NAGLE_OFF)
		sockopt_add(r, SOL_TCP, TCP_NODELAY, 1, 1, 0);
	if (nonagle & TCP_NAGLE_CORK)
		sockopt_add(r, SOL_TCP, TCP_CORK, 1, 1, 0);
	if (locks & SOCK_SNDBUF_LOCK)
		sockopt_add(r, SOL_SOCKET, SO_SNDBUF, (int)((__u32)BPF_CORE_READ(sk, sk_sndbuf) >> 1), 1, 0);
	if (locks & SOCK_RCVBUF_LOCK)
		sockopt_add(r, SOL_SOCKET, SO_RCVBUF, (int)((__u32)BPF_CORE_READ(sk, sk_rcvbuf) >> 1), 1, 0);
}

/* setsockopt's int argument at entry, on a connection the service accepted. */
static __always_inline void enter_sockopt(struct dt_inflight *s, struct pt_regs *regs)
{
	int v = 0;

	if (s->nr != NR_SETSOCKOPT || !s->accepted || (int)arg_of(regs, 4) < (int)sizeof(v))
		return;
	if (bpf_probe_read_user(&v, sizeof(v), (void *)arg_of(regs, 3)))
		return;
	s->so_level = (int)arg_of(regs, 1);
	s->so_name = (int)arg_of(regs, 2);
	s->so_value = v;
	s->has_so = 1;
}

static __always_inline void sockopt_call(struct dt_inflight *s, long ret, struct dt_req_stats *r)
{
	if (!s->has_so || ret != 0)
		return;
	sockopt_add(r, s->so_level, s->so_name, s->so_value, 0, 1);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs *regs, long id)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct dt_inflight *s;
	struct dt_task *task;
	struct dt_desc *d;
	__u32 nr = id;

	__u32 tgid = pid_tgid >> 32;
	__u8 *svc = bpf_map_lookup_elem(&traced, &tgid);

	if (!svc)
		return 0;
	task = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!task)
		return 0;
	s = &task->cur;
	__builtin_memset(s, 0, sizeof(*s));
	s->svc = *svc;
	s->nr = nr;
	s->active = 1;
	d = bpf_map_lookup_elem(&descs, &nr);
	if (d && (d->bits & SD_KNOWN)) {
		enter_fd(s, d, regs, task->fds);
		enter_size(s, d, regs);
		enter_sockopt(s, regs);
		if (d->flags_arg >= 0) {
			s->flags = arg_of(regs, d->flags_arg);
			s->has_flags = 1;
		}
		/* Plain buffers only: the first request's bytes tell the framing. */
		if ((d->bits & SD_RECV) && d->iov_arg < 0 && !(d->bits & (SD_MSGHDR | SD_MMSG)))
			s->buf = arg_of(regs, 1);
		if (d->bits & SD_MMSG)
			s->arg_ptr = arg_of(regs, 1);
		if (s->outbound && (d->bits & SD_SEND))
			s->buf = send_buf(d, regs);
	}
	/* The epoll set a thread waits on: user space reads its members
	 * (/proc/PID/fdinfo) to see who waits on the listening socket. */
	if (nr == 232 || nr == 281 || nr == 441) {
		struct dt_thread *t = thread_of((__u32)pid_tgid, pid_tgid >> 32);

		if (t)
			t->epfd = (int)arg_of(regs, 0) + 1;
	}
	s->ts = bpf_ktime_get_ns();
	return 0;
}

static __always_inline struct dt_stat_val *stat_of(struct dt_stat_key *k)
{
	__u32 z = 0;
	struct dt_stat_val *v = bpf_map_lookup_elem(&stats, k), *tmpl;

	if (v)
		return v;
	tmpl = bpf_map_lookup_elem(&zero, &z);
	if (!tmpl)
		return NULL;
	bpf_map_update_elem(&stats, k, tmpl, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&stats, k);
	if (!v)
		count_lost();
	return v;
}

static __always_inline void add_flags(struct dt_stat_val *v, __u64 flags)
{
	for (int i = 0; i < MAX_FLAGS; i++) {
		if (v->flag_cnt[i] && v->flag_val[i] == flags) {
			v->flag_cnt[i]++;
			return;
		}
		if (!v->flag_cnt[i]) {
			/* Racing threads of one key cannot happen: keys are per thread. */
			v->flag_val[i] = flags;
			v->flag_cnt[i]++;
			return;
		}
	}
	v->flag_other++;
}

static __always_inline void add_errno(struct dt_stat_val *v, __u64 err)
{
	for (int i = 0; i < MAX_ERRNOS; i++) {
		if (v->errno_cnt[i] && v->errno_val[i] == err) {
			v->errno_cnt[i]++;
			return;
		}
		if (!v->errno_cnt[i]) {
			v->errno_val[i] = err;	/* keys are per thread: no race */
			v->errno_cnt[i]++;
			return;
		}
	}
}

static __always_inline void file_offset(struct dt_stat_val *v, struct dt_inflight *s, __u32 tgid,
					long ret)
{
	struct dt_fpos_key k = { tgid, s->fd };
	__u64 *next = bpf_map_lookup_elem(&fpos, &k), end;

	v->offsets++;
	HIST_ADD(v->offset, log2_bucket(s->offset), 1);
	if (next && *next == s->offset)
		v->sequential++;
	end = s->offset + (ret > 0 ? ret : 0);
	bpf_map_update_elem(&fpos, &k, &end, BPF_ANY);
}

static __always_inline __u64 mmsg_bytes(__u64 ptr, long n)
{
	__u64 sum = 0;

	for (int i = 0; i < MAX_IOV; i++) {
		unsigned int len = 0;

		if (i >= n)
			break;
		bpf_probe_read_user(&len, sizeof(len),
				    (void *)(ptr + i * sizeof(struct mmsghdr) +
					     __builtin_offsetof(struct mmsghdr, msg_len)));
		sum += len;
	}
	return sum;
}

/* The first read of a connection's first request in the window. */
static __always_inline void first_request(struct dt_conn *c, __u64 buf, long n)
{
	unsigned long long bytes[2] = {};

	if (c->requests || !buf || n <= 0)
		return;
	c->first_len = n > 16 ? 16 : (__u32)n;
	bpf_probe_read_user(bytes, n >= 16 ? 16 : (n >= 8 ? 8 : (n >= 4 ? 4 : 0)), (void *)buf);
	c->first[0] = bytes[0];
	c->first[1] = bytes[1];
}

/*
 * A first request read as a 4-byte header, then the rest, as MySQL and
 * MariaDB servers read a packet: the next read of that socket gives the
 * 12 bytes after the header (little-endian words: bytes 4..7 go in the
 * high half of the first).
 */
static __always_inline void first_request_more(struct dt_conn *c, __u64 buf, long n)
{
	unsigned long long more[2] = {};
	__u32 add = n >= 12 ? 12 : (n >= 8 ? 8 : (n >= 4 ? 4 : 0));

	if (c->requests != 1 || c->first_len != 4 || !buf || !add)
		return;
	bpf_probe_read_user(more, add == 12 ? 12 : (add == 8 ? 8 : 4), (void *)buf);
	c->first[0] = (c->first[0] & 0xffffffffull) | more[0] << 32;
	c->first[1] = more[0] >> 32 | more[1] << 32;
	c->first_len = 4 + add;
}

/* The connection's first request is read: its bytes become a sample. */
static __always_inline void first_sample(struct dt_req_stats *r, const struct dt_conn *c)
{
	__u32 i = r->nfirst;

	if (c->requests != 1 || !c->first_len || i >= FIRST_SAMPLES)
		return;
	r->firsts[i].bytes[0] = c->first[0];
	r->firsts[i].bytes[1] = c->first[1];
	r->firsts[i].len = c->first_len;
	r->nfirst = i + 1;
}

/* A response is complete: its size goes to the histogram and the total. */
static __always_inline void resp_done(struct dt_req_stats *r, const struct dt_conn *c)
{
	HIST_ADD(r->resp_bytes, log2_bucket(c->resp_bytes), 1);
	r->resp_bytes_sum += c->resp_bytes;
}

/* A request begins: on a Unix socket the event names the listener's
 * address, so that user space knows whom a client's calls reach. */
static __always_inline void req_begin_event(const struct dt_inflight *s)
{
	struct dt_ep_key k = {};

	if (!graph_events)
		return;
	if (s->fd_kind == FDK_UNIX) {
		k.family = AF_UNIX;
		k.svc = s->svc;
		k.addr[0] = unix_addr(s->sk);
	}
	emit(EV_REQ_BEGIN, s->svc, s->ts, s->sk, &k);
}

/* r: the service's request statistics (looked up once per call, by the
 * caller: a lookup per helper multiplied the verifier's paths). */
__noinline int conn_recv(struct dt_inflight *s, __u64 bytes, struct dt_req_stats *r)
{
	struct dt_conn *c;
	__u64 sk;

	if (!s || !r)
		return 0;
	/* A map key from the stack: before Linux 6.2 the verifier takes no
	 * argument memory (PTR_TO_MEM) as a key. */
	sk = s->sk;
	if (!(c = bpf_map_lookup_elem(&conns, &sk)))
		return 0;
	conn_opts(r, c, s->sk);
	if (c->state == CONN_READING) {
		c->req_bytes += bytes;
		first_request_more(c, s->buf, bytes);
		return 0;
	}
	if (c->state == CONN_WRITING)
		resp_done(r, c);
	first_request(c, s->buf, bytes);
	c->state = CONN_READING;
	c->requests++;
	c->req_bytes = bytes;
	c->req_start_ns = s->ts;
	r->requests++;
	req_begin_event(s);
	return 0;
}

__noinline int conn_send(struct dt_inflight *s, __u64 bytes, __u64 now, struct dt_req_stats *r)
{
	struct dt_conn *c;
	__u64 sk;

	if (!s || !r)
		return 0;
	sk = s->sk;	/* a stack key, as in conn_recv() */
	if (!(c = bpf_map_lookup_elem(&conns, &sk)))
		return 0;
	conn_opts(r, c, s->sk);
	if (c->state == CONN_READING) {
		first_sample(r, c);
		HIST_ADD(r->req_bytes, log2_bucket(c->req_bytes), 1);
		r->req_bytes_sum += c->req_bytes;
		HIST_ADD(r->service_ns, lat_bucket(now - c->req_start_ns), 1);
		emit(EV_REQ_RESPOND, s->svc, s->ts, s->sk, NULL);
		c->state = CONN_WRITING;
		c->resp_bytes = 0;
	}
	c->resp_bytes += bytes;
	return 0;
}

static __always_inline void conn_close(struct dt_inflight *s, struct dt_req_stats *r)
{
	struct dt_conn *c = bpf_map_lookup_elem(&conns, &s->sk);

	if (!c)
		return;
	if (c->state == CONN_WRITING)
		resp_done(r, c);
	if (c->state == CONN_READING)	/* never answered: a sample all the same */
		first_sample(r, c);
	HIST_ADD(r->per_conn, log2_bucket(c->requests), 1);
	r->closed++;
	bpf_map_delete_elem(&conns, &s->sk);
}

/* Returns the thread bits to set. */
static __always_inline __u32 on_accept(long ret, struct dt_req_stats *r)
{
	struct dt_conn fresh = {};
	__u8 nb = 0;
	__u64 sk = 0;

	if (ret < 0)
		return 0;
	fd_kind(ret, &sk, &nb);
	if (!sk)
		return 0;
	bpf_map_update_elem(&conns, &sk, &fresh, BPF_ANY);
	r->connections++;
	return TB_ACCEPTS;
}

static __always_inline __u32 io_bits(struct dt_inflight *s, const struct dt_desc *d, long ret)
{
	__u32 bits = 0;

	if (s->accepted && (d->bits & (SD_RECV | SD_SEND))) {
		bits |= TB_CONN_IO;
		if (s->nonblock)
			bits |= TB_NONBLOCK_IO;
		if (ret == -EAGAIN)
			bits |= TB_EAGAIN;
	} else if (!s->accepted && s->fd_kind == FDK_TCP && (d->bits & (SD_RECV | SD_SEND))) {
		bits |= TB_CLIENT_IO;
	}
	if ((d->bits & SD_CONNECT) && (ret == 0 || ret == -EINPROGRESS))
		bits |= TB_CONNECTS | (ret == -EINPROGRESS ? TB_ASYNC_CONN : 0);
	return bits;
}

static __always_inline __u32 mux_bits(__u32 nr)
{
	/* epoll_wait, epoll_pwait, epoll_pwait2; poll, ppoll; select, pselect6 */
	if (nr == 232 || nr == 281 || nr == 441)
		return TB_EPOLL;
	if (nr == 7 || nr == 271)
		return TB_POLL;
	if (nr == 23 || nr == 270)
		return TB_SELECT;
	return 0;
}

/*
 * The work after a response: from the exit of a write on an accepted
 * connection to the entry of the thread's next read on one, multiplexing
 * wait, accept or futex (a pool's wait for its next connection; also a
 * wake or a lock, which makes the time short rather than long), so that a
 * clone can do its share of the body after it has answered. An event
 * loop's next read on another connection ends it too: its gap is the
 * loop's own.
 */
static __always_inline void after_response(const struct dt_inflight *s, const struct dt_desc *d,
					   struct dt_thread *t, struct dt_req_stats *r, long ret,
					   __u64 now)
{
	bool reads = s->accepted && d && (d->bits & SD_RECV);

	if (t->answered_ns && (reads || mux_bits(s->nr) || s->nr == 202 || s->nr == 43 ||
				    s->nr == 288)) {
		HIST_ADD(r->after_response_ns, lat_bucket(s->ts - t->answered_ns), 1);
		t->answered_ns = 0;
	}
	if (s->accepted && d && (d->bits & SD_SEND) && ret > 0)
		t->answered_ns = now;
}

/* Account one finished syscall; returns the thread bits it implies. */
static __always_inline __u32 record(struct dt_inflight *s, const struct dt_desc *d, __u32 tid,
				    __u32 tgid, long ret, __u64 now, struct dt_req_stats *r)
{
	struct dt_stat_key k = { .tid = tid, .nr = s->nr, .fd_kind = s->fd_kind,
			      .side = s->accepted ? SIDE_ACCEPTED :
				      s->outbound ? SIDE_OUTBOUND : SIDE_NONE };
	struct dt_stat_val *v = stat_of(&k);
	__u64 count = ret > 0 ? ret : 0;

	if (!v)
		return 0;
	v->calls++;
	if (ret < 0) {
		v->errors++;
		add_errno(v, (__u64)-ret);
	}
	HIST_ADD(v->lat, lat_bucket(now - s->ts), 1);
	if (!d)
		return 0;
	if (s->has_size) {
		HIST_ADD(v->size, log2_bucket(s->size), 1);
		v->size_sum += s->size;
		v->iov_sum += s->iovcnt;
	}
	if ((d->bits & SD_MMSG) && ret > 0)
		count = mmsg_bytes(s->arg_ptr, ret);
	if ((d->bits & SD_RET_COUNT) && ret >= 0) {
		HIST_ADD(v->ret, log2_bucket(count), 1);
		v->ret_sum += count;
	}
	if (s->has_flags)
		add_flags(v, s->flags);
	if (s->has_offset)
		file_offset(v, s, tgid, ret);
	sockopt_call(s, ret, r);
	if (s->outbound)
		outbound_call(s, d, ret, count);
	else if (s->accepted && ret > 0 && (d->bits & SD_RECV))
		conn_recv(s, count, r);
	else if (s->accepted && ret > 0 && (d->bits & SD_SEND))
		conn_send(s, count, now, r);
	else if (s->accepted && (d->bits & SD_CLOSE) && ret == 0)
		conn_close(s, r);
	return (d->bits & SD_ACCEPT ? on_accept(ret, r) : 0) | io_bits(s, d, ret);
}

/*
 * A read blocked when the window opened, on a connection that predates it,
 * returns in the window with the first request the window sees on that
 * connection: count the request (its call was not entered in the window,
 * so it has no latency and is not in the syscall statistics). The
 * arguments are still in regs at exit (only ax holds the return value).
 */
static __always_inline void early_recv(struct pt_regs *regs, long nr, __u32 tid, __u32 tgid,
				       long ret)
{
	struct dt_req_stats *r;
	struct dt_inflight e = {};
	__u32 k = (__u32)nr;
	struct dt_desc *d = bpf_map_lookup_elem(&descs, &k);

	if (!d || !(d->bits & SD_KNOWN) || !(d->bits & SD_RECV) || (d->bits & (SD_MMSG | SD_MSGHDR)) ||
	    d->iov_arg >= 0 || d->fd_arg < 0)
		return;
	e.fd = (int)arg_of(regs, d->fd_arg);
	e.fd_kind = fd_kind(e.fd, &e.sk, &e.nonblock);
	if (!e.sk || !(bpf_map_lookup_elem(&conns, &e.sk) || adopt_conn(e.sk, e.fd_kind)))
		return;
	e.ts = bpf_ktime_get_ns();
	e.buf = arg_of(regs, 1);
	e.svc = svc_of(tgid);
	r = reqs_of(e.svc);
	if (!r)
		return;
	conn_recv(&e, (__u64)ret, r);
	thread_bits(tid, tgid, TB_CONN_IO | (e.nonblock ? TB_NONBLOCK_IO : 0));
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now;
	__u32 tid = pid_tgid, tgid = pid_tgid >> 32;
	struct dt_inflight *s;
	struct dt_task *task;
	struct dt_req_stats *r;
	struct dt_thread *t;
	struct dt_desc *d;
	__u32 bits;

	/* Only traced tasks have storage: no need to look tgid up again. */
	task = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0, 0);
	s = task ? &task->cur : NULL;
	if (!s || !s->active) {
		if (!is_traced(tgid))
			return 0;
		/* Entered before the window: an accept blocked at attach time
		 * still hands us a connection. */
		long nr = BPF_CORE_READ(regs, orig_ax);

		if ((nr == 43 || nr == 288) && (r = reqs_of(svc_of(tgid))))
			thread_bits(tid, tgid, on_accept(ret, r));
		else if (ret > 0)
			early_recv(regs, nr, tid, tgid, ret);
		return 0;
	}
	s->active = 0;
	now = bpf_ktime_get_ns();
	d = bpf_map_lookup_elem(&descs, &s->nr);
	r = reqs_of(s->svc);
	if (!r)
		return 0;
	r->syscalls++;
	if (d && !(d->bits & SD_KNOWN))
		d = NULL;
	/* One thread lookup per syscall: its bits are gathered first. */
	bits = mux_bits(s->nr) | record(s, d, tid, tgid, ret, now, r);
	t = thread_of(tid, tgid);
	if (!t)
		return 0;
	t->bits |= bits;
	after_response(s, d, t, r, ret, now);
	/* Which connections a thread serves (where bytes moved: a read that
	 * found nothing serves none): one all window is the mark of a thread
	 * per connection whose threads predate the window. */
	if (s->accepted && s->sk && d && (d->bits & (SD_RECV | SD_SEND)) && ret > 0 &&
	    t->conn_sk != s->sk) {
		if (t->conn_sk)
			t->conn_moves++;
		if (t->conn_sk && bpf_map_lookup_elem(&conns, &t->conn_sk))
			t->conn_interleaves++;
		t->conn_sk = s->sk;
	}
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 ptid = prev->pid, ptgid = prev->tgid, ntid = next->pid, ntgid = next->tgid;
	struct dt_thread *t;

	if (is_traced(ptgid) && (t = thread_of(ptid, ptgid))) {
		t->ctx_switches++;
		if (t->last_in)
			t->cpu_ns += now - t->last_in;
		t->last_in = 0;
	}
	if (is_traced(ntgid) && (t = thread_of(ntid, ntgid)))
		t->last_in = now;
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(on_wakeup, struct task_struct *p)
{
	__u32 tid = p->pid, tgid = p->tgid;
	__u64 cur = bpf_get_current_pid_tgid(), one = 1, *n;
	struct dt_wake_key k;
	struct dt_thread *t;

	if (!is_traced(tgid) || !(t = thread_of(tid, tgid)))
		return 0;
	__sync_fetch_and_add(&t->wakeups, 1);
	if (!is_traced(cur >> 32))
		return 0;
	k.waker = (__u32)cur;
	k.wakee = tid;
	n = bpf_map_lookup_elem(&wakes, &k);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&wakes, &k, &one, BPF_NOEXIST);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid, ctid = child->pid;
	struct dt_thread *t;
	__u8 *svc = bpf_map_lookup_elem(&traced, &ptgid), csvc;

	if (!svc)
		return 0;
	csvc = *svc;	/* a child serves its parent's service */
	t = thread_of(parent->pid, ptgid);
	if (ctgid != ptgid) {
		bpf_map_update_elem(&traced, &ctgid, &csvc, BPF_ANY);
		if (t)
			t->processes_created++;
	} else if (t) {
		t->threads_created++;
	}
	t = thread_of(ctid, ctgid);
	if (t) {
		bpf_probe_read_kernel_str(t->comm, sizeof(t->comm), child->comm);
		t->bits |= TB_CREATED;
	}
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 tid = p->pid;
	struct dt_thread *t;

	if (!is_traced(p->tgid))
		return 0;
	t = bpf_map_lookup_elem(&threads, &tid);
	if (t)
		t->exited_ns = bpf_ktime_get_ns();
	return 0;
}
