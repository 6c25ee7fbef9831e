/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * The collector's outbound half: calls the service makes on connections
 * it opened itself (to a back end, a database, a cache), counted per
 * remote endpoint and kept apart from the requests it serves. Included by
 * collector.bpf.c after its helpers (one BPF object, one set of maps).
 */
#ifndef DITTO_OUTBOUND_BPF_H
#define DITTO_OUTBOUND_BPF_H

#define TCP_CLOSE 7
#define TCP_LISTEN 10

/* Endpoints beyond this many are dropped and counted as lost. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 256);
	__type(key, struct dt_ep_key);
	__type(value, struct dt_ep_val);
} outbound SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct dt_oconn);
} oconns SEC(".maps");

/* Zeroed template: the value is too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_ep_val);
} ep_zero SEC(".maps");

/*
 * A TCP socket that is not an accepted connection (enter_fd tried that
 * first) and neither listens nor sits unconnected is one the service
 * connected: at attach time its connections may already exist, so the
 * connect() call itself need not be seen. A connect call's socket is
 * outbound whatever its state.
 */
static __always_inline bool is_outbound(__u64 skp, __u8 kind, const struct dt_desc *d)
{
	__u8 state;

	/* A Unix client, for the graph only (a plain profile keeps its
	 * local sockets as it always did): one that reached a listener. */
	if (kind == FDK_UNIX && skp && graph_events) {
		__u16 type = BPF_CORE_READ((struct sock *)skp, sk_type);

		if (d->bits & SD_CONNECT)	/* connected at its exit */
			return (type == SOCK_STREAM || type == SOCK_SEQPACKET) && !unix_addr(skp);
		return unix_connected(skp) && !unix_addr(skp) && unix_peer_addr(skp);
	}
	if (kind != FDK_TCP || !skp)
		return false;
	if (d->bits & SD_CONNECT)
		return true;
	state = BPF_CORE_READ((struct sock *)skp, __sk_common.skc_state);
	return state != TCP_LISTEN && state != TCP_CLOSE;
}

/* The first buffer a send passes, for the callee's framing: the plain
 * buffer of write/send/sendto (size in arg 2), else the first iovec. */
static __always_inline __u64 send_buf(const struct dt_desc *d, struct pt_regs *regs)
{
	struct iovec v = {};
	struct user_msghdr m = {};

	if (d->iov_arg >= 0) {
		bpf_probe_read_user(&v, sizeof(v), (void *)arg_of(regs, d->iov_arg));
		return (__u64)v.iov_base;
	}
	if ((d->bits & SD_MSGHDR) && !(d->bits & SD_MMSG)) {
		bpf_probe_read_user(&m, sizeof(m), (void *)arg_of(regs, d->size_arg));
		bpf_probe_read_user(&v, sizeof(v), m.msg_iov);
		return (__u64)v.iov_base;
	}
	/* sendmmsg's arg 1 is its message vector, not bytes. */
	return d->size_arg == 2 && !(d->bits & SD_MMSG) ? arg_of(regs, 1) : 0;
}

static __always_inline void ep_key_of(__u64 skp, __u8 svc, struct dt_ep_key *k)
{
	struct sock *sk = (struct sock *)skp;
	__u32 a4;

	k->svc = svc;
	k->family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (k->family == AF_UNIX) {
		k->addr[0] = unix_peer_addr(skp);	/* port 0: no port */
		return;
	}
	k->port = __builtin_bswap16(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (k->family == AF_INET6) {
		BPF_CORE_READ_INTO(&k->addr, sk, __sk_common.skc_v6_daddr);
	} else {
		a4 = BPF_CORE_READ(sk, __sk_common.skc_daddr);
		__builtin_memcpy(k->addr, &a4, sizeof(a4));
	}
}

/* A peer to name: a port, or a Unix listener's address. */
static __always_inline bool ep_named(const struct dt_ep_key *k)
{
	return k->port || (k->family == AF_UNIX && k->addr[0]);
}

static __always_inline struct dt_ep_val *ep_of(const struct dt_ep_key *k)
{
	__u32 z = 0;
	struct dt_ep_val *v = bpf_map_lookup_elem(&outbound, k), *tmpl;

	if (v)
		return v;
	tmpl = bpf_map_lookup_elem(&ep_zero, &z);
	if (!tmpl)
		return NULL;
	bpf_map_update_elem(&outbound, k, tmpl, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&outbound, k);
	if (!v)
		count_lost();
	return v;
}

static __always_inline bool ep_same(const struct dt_ep_key *a, const struct dt_ep_key *b)
{
	return a->port == b->port && a->family == b->family && a->addr[0] == b->addr[0] &&
	       a->addr[1] == b->addr[1];
}

/* The connection's record, for the endpoint its socket names now: a
 * struct sock freed without the close being seen (the process exited)
 * may come back as another connection, whose calls start afresh. */
static __always_inline struct dt_oconn *oconn_of(__u64 skp, const struct dt_ep_key *k)
{
	struct dt_oconn *c = bpf_map_lookup_elem(&oconns, &skp);
	struct dt_oconn fresh = { .ep = *k };

	if (c && ep_same(&c->ep, k))
		return c;
	bpf_map_update_elem(&oconns, &skp, &fresh, BPF_ANY);
	return bpf_map_lookup_elem(&oconns, &skp);
}

/* The call in progress on c is over: its request and response sizes. */
static __always_inline void call_done(struct dt_ep_val *v, struct dt_oconn *c)
{
	if (c->state == CONN_WRITING)
		HIST_ADD(v->req_bytes, log2_bucket(c->req_bytes), 1);
	if (c->state == CONN_READING)
		HIST_ADD(v->resp_bytes, log2_bucket(c->resp_bytes), 1);
}

static __always_inline void out_first(struct dt_ep_val *v, __u64 buf, __u64 n)
{
	unsigned long long bytes[2] = {};

	if (v->first_len || !buf || !n)
		return;
	v->first_len = n > 16 ? 16 : (__u32)n;
	bpf_probe_read_user(bytes, n >= 16 ? 16 : (n >= 8 ? 8 : 0), (void *)buf);
	v->first_bytes[0] = bytes[0];
	v->first_bytes[1] = bytes[1];
}

static __always_inline void out_send(struct dt_inflight *s, struct dt_ep_val *v,
				     struct dt_oconn *c, __u64 buf, __u64 bytes)
{
	v->bytes_sent += bytes;
	if (c->state != CONN_WRITING) {
		/* A response read before is complete; a new call starts. */
		if (c->state == CONN_READING)
			HIST_ADD(v->resp_bytes, log2_bucket(c->resp_bytes), 1);
		out_first(v, buf, bytes);
		v->calls++;
		emit(EV_CALL_BEGIN, s->svc, s->ts, s->sk, &c->ep);
		c->state = CONN_WRITING;
		c->req_bytes = 0;
	}
	c->req_bytes += bytes;
}

static __always_inline void out_recv(struct dt_inflight *s, struct dt_ep_val *v,
				     struct dt_oconn *c, __u64 bytes, __u64 now)
{
	v->bytes_recv += bytes;
	if (c->state == CONN_WRITING) {
		emit(EV_CALL_END, s->svc, now, s->sk, NULL);
		HIST_ADD(v->req_bytes, log2_bucket(c->req_bytes), 1);
		c->state = CONN_READING;
		c->resp_bytes = 0;
	}
	c->resp_bytes += bytes;
}

/* Account one finished syscall on an outbound socket. A global function:
 * verified once, apart from the syscall exit program it is called from,
 * whose paths it would otherwise multiply. */
__noinline int outbound_call(struct dt_inflight *s, const struct dt_desc *d, long ret,
			     __u64 bytes)
{
	struct dt_ep_key k = {};
	struct dt_ep_val *v;
	struct dt_oconn *c;

	if (!s || !d)
		return 0;
	if (d->bits & SD_CONNECT) {
		ep_key_of(s->sk, s->svc, &k);
		if ((ret == 0 || ret == -EINPROGRESS) && ep_named(&k) && (v = ep_of(&k)))
			v->connects++;
		return 0;
	}
	if (d->bits & SD_CLOSE) {
		__u64 sk = s->sk;	/* a stack key (see conn_recv()) */

		c = bpf_map_lookup_elem(&oconns, &sk);
		if (c && ret == 0 && (v = ep_of(&c->ep)))
			call_done(v, c);
		if (c && ret == 0)
			bpf_map_delete_elem(&oconns, &sk);
		return 0;
	}
	if (!(d->bits & (SD_SEND | SD_RECV)))
		return 0;
	/* Unconnected (a UDP-style send on TCP fails): no endpoint to name. */
	ep_key_of(s->sk, s->svc, &k);
	if (!ep_named(&k) || !(c = oconn_of(s->sk, &k)) || !(v = ep_of(&k)))
		return 0;
	if (d->bits & SD_SEND) {
		v->sends++;
		if (ret > 0)
			out_send(s, v, c, s->buf, bytes);
	} else {
		v->recvs++;
		if (ret > 0)
			out_recv(s, v, c, bytes, bpf_ktime_get_ns());
	}
	return 0;
}

#endif /* DITTO_OUTBOUND_BPF_H */
