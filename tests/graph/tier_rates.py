# SPDX-License-Identifier: MIT
"""Per-tier rates of a graph model, for comparing an original graph with
its clone (tests/graph/test_graph_clone.py, bench/graph_accuracy.py):
system calls per served request by kind and socket bytes per request in
and out.

A kind is a system call's name, its thread classes and fd kinds summed
(a clone's threads are named apart from the original's), except that
the calls a server blocks in waiting for its sockets are one kind,
'wait': node waits in epoll_pwait, nginx in epoll_wait, and the clone's
runtime in epoll_wait for its clients and poll for its children's
replies; they are one mechanism per request, spelled differently."""

WAITS = frozenset(('epoll_wait', 'epoll_pwait', 'epoll_pwait2', 'poll', 'ppoll', 'select',
                   'pselect6'))
# Kinds below this many calls per request on both sides are start-up or
# housekeeping calls a short window catches by chance (a setsockopt, an
# accept4 of the first connection): not rates.
FLOOR = 0.05


# The event loop's wake-ups between its own threads (libuv's pool
# completions on an eventfd, signals through a pipe, timers): calls on
# these fds follow the loop's pace, not its requests, and are kinds of
# their own ('read:eventfd'), apart from the socket reads and writes of
# the requests and calls.
LOOP_FDS = frozenset(('eventfd', 'pipe', 'timerfd', 'signalfd'))


def kind(name, fd_kind=None):
    if name in WAITS:
        return 'wait'
    return '%s:%s' % (name, fd_kind) if fd_kind in LOOP_FDS else name


def syscalls(service):
    """{kind: calls per served request} of a model service (JSON)."""
    n = service['requests']['count'] or 1
    out = {}
    for c in service.get('syscalls', []):
        k = kind(c['name'], c.get('fd_kind'))
        out[k] = out.get(k, 0.0) + c['calls'] / n
    return out


def served_bytes(service):
    """(bytes in, bytes out) per served request, from the profiler's
    exact totals: responses over the responses the histogram holds (the
    last response of a connection may end after the window)."""
    req = service['requests']
    n = req['count'] or 1
    nresp = req.get('response_bytes', {}).get('total') or n
    return req.get('request_bytes_total', 0) / n, req.get('response_bytes_total', 0) / nresp


def called_bytes(model, port):
    """(bytes sent, bytes received) per call to 127.0.0.1:port as its
    callers in the model saw them: what an external node served."""
    calls = sent = got = 0
    for s in model['services']:
        for o in s.get('outbound', []):
            if o.get('port') == port:
                calls += o['calls']
                sent += o.get('request_bytes_total', 0)
                got += o.get('response_bytes_total', 0)
    return (sent / calls, got / calls) if calls else (None, None)


def services(model, rename=None):
    rename = rename or {}
    return {rename.get(s['name'], s['name']): s for s in model['services']}


def rel(a, b):
    """|b - a| / a (0 when both are 0, 1 when only a is)."""
    if a == 0:
        return 0.0 if b == 0 else 1.0
    return abs(b - a) / abs(a)


def syscall_rows(orig, orig2, clone, tiers):
    """[(tier, kind, original, original again, clone)] for every kind
    the original or the clone makes at FLOOR or more per request (0.0
    where a side lacks it); the second profile of the original is the
    noise it carries, not a side."""
    rows = []
    for t in tiers:
        a, a2, c = syscalls(orig[t]), syscalls(orig2[t]), syscalls(clone[t])
        for k in sorted(set(a) | set(c)):
            va, va2, vc = a.get(k, 0.0), a2.get(k, 0.0), c.get(k, 0.0)
            if max(va, vc) >= FLOOR:
                rows.append((t, k, va, va2, vc))
    return rows


# Kinds whose count follows the pace of the service (its event loop's
# turns, its allocator's and garbage collector's rhythm, the span
# exporter's connections re-armed in epoll every batch), not its
# requests: a second profile of the original moves them by more than 5%.
# Kinds of one group follow one rhythm (the memory kinds the garbage
# collector's): two profiles are one sample of its spread per kind, so a
# group's spread is its largest kind's (back's madvise moved 5.7% while
# its munmap moved 37% in one pair of profiles, 57% and 47% in another).
GROUPS = (frozenset(('wait',)), frozenset(('epoll_ctl',)), frozenset(('futex',)),
          frozenset(('mmap', 'munmap', 'mprotect', 'madvise', 'brk')))
PACED = frozenset().union(*GROUPS)


def group_of(k):
    """The kinds that follow one rhythm with k (the loop's wake-ups on
    one fd kind are one group), or None for a per-request kind."""
    if ':' in k:
        return frozenset((k.split(':', 1)[1],))
    return next((g for g in GROUPS if k in g), None)
SYSCALL_BOUND = 0.05
BYTES_BOUND = 0.01
SPREAD_FACTOR = 3


def group_spread(rows, t, k):
    """The original's own spread for kind k of tier t: the largest over
    the kinds of k's group among rows (syscall_rows())."""
    group = group_of(k)
    return max([rel(a, a2) for rt, rk, a, a2, _ in rows
                if rt == t and (group_of(rk) == group)] or [0.0])


def syscall_bound(rows, t, k, calls=None):
    """The error allowed the clone on tier t's kind k: 5%, or for a
    PACED kind 3 times the original's own spread when that is larger,
    or 3 standard errors of a count of `calls` (the original's calls of
    the kind in its window: 20 calls move by 22% from window to window
    whatever the clone does)."""
    if group_of(k) is None:
        return SYSCALL_BOUND
    counting = SPREAD_FACTOR / calls ** 0.5 if calls else 0.0
    return max(SYSCALL_BOUND, SPREAD_FACTOR * group_spread(rows, t, k), counting)


# (The node tiers' futex rows were known clone defects, passed within a
# factor of 3, until the node pool's wake-ups were paced by requests
# served (bg_pacing.c) and an epoll loop made its async calls itself
# (rt_park.c): now within 3%. docs/graph.md, "Per-tier accuracy".)


def syscall_verdict(rows, t, k, a, c, a2=None, calls=None):
    """('ok' | 'OUT', bound) of tier t's kind k among rows
    (syscall_rows()): original a (and a2, its second profile), clone c.
    Both profiles are the original under the same load: a clone within
    the bound of either is within what the original does (the profiler
    has counted a tier's reads per request 1.68 in one window and 1.00 in
    the next)."""
    bound = syscall_bound(rows, t, k, calls)
    if rel(a, c) <= bound or (a2 is not None and rel(a2, c) <= bound):
        return 'ok', bound
    return 'OUT', bound


def bytes_rows(orig_model, orig, clone, tiers, externals):
    """[(tier, in, out, clone in, clone out)] per request: profiled tiers
    against their originals, externals ({tier: port}) against what the
    original's callers sent them and got back."""
    rows = [(t,) + served_bytes(orig[t]) + served_bytes(clone[t]) for t in tiers]
    for t, port in sorted(externals.items()):
        rows.append((t,) + called_bytes(orig_model, port) + served_bytes(clone[t]))
    return rows
