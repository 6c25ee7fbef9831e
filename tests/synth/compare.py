# SPDX-License-Identifier: MIT
"""Original vs. clone under the same load: profile the original while a
bounded load runs (`ditto clone` does it and writes the clone), start the
clone, run the same load against it while `ditto profile` records it, and
compare the two models. Shared by the tests and bench/clone-compare."""

import json
import os
import subprocess
import time

import ditto as d
from harness import ditto

# What "the same" means per metric family (see the bounds).
SYSCALL_BOUND = 0.05
BYTES_BOUND = 0.05


def under_load(load_argv, fn):
    """fn() while load_argv runs (stopped afterwards if still running)."""
    load = subprocess.Popen(load_argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(0.5)
        return fn()
    finally:
        if load.poll() is None:
            load.terminate()
        load.communicate(timeout=30)


def clone_service(pid, tree, load_argv, duration=3, windows=4):
    """ditto clone of pid under load; returns the original's model path."""
    model = str(tree) + '.msgpack'
    under_load(load_argv, lambda: ditto('clone', '--pid', pid, '-o', tree, '--duration',
                                        duration, '--cpu-windows', windows, '--quiet'))
    return model


def profile_clone(clone, name, out, load_argv, duration=3, windows=4):
    under_load(load_argv, lambda: ditto('profile', '--pid', clone.pid, '--name', name,
                                        '--duration', duration, '--cpu-windows', windows,
                                        '--quiet', '-o', out))
    return out


def children(pid):
    """Direct children of pid, from the ppid field of /proc/*/stat."""
    kids = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry) as f:
                stat = f.read()
        except OSError:
            continue
        # comm may hold spaces: the fields after its closing parenthesis
        if int(stat[stat.rindex(')') + 2:].split()[1]) == pid:
            kids.append(int(entry))
    return kids


def threads(pid):
    return len(os.listdir('/proc/%d/task' % pid))


def tree(pid):
    """(threads of pid, sorted thread counts of its children)."""
    return threads(pid), sorted(threads(k) for k in children(pid))



def tree_while(load_argv, pid):
    """The process tree of pid while load_argv's connections are open."""
    load = subprocess.Popen(load_argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(1.0)
        return tree(pid)
    finally:
        load.terminate()
        load.communicate(timeout=30)

def diff(a, b):
    # 1: the models differ beyond the bound, the usual case for a clone.
    r = ditto('model', 'diff', '--json', a, b, check=False)
    assert r.returncode in (0, 1), r.stderr
    return {m['path']: m for m in json.loads(r.stdout)}


def classes(model):
    """Thread classes as comparable tuples (role, count, io model)."""
    m = d.Model.load(model)
    return sorted((t['role'], t['count'], t['io_model'])
                  for t in m.get('services[0].threads'))


def woken_by(model, role):
    """Roles of the classes that wake the classes of role (sorted)."""
    ts = d.Model.load(model).get('services[0].threads')
    roles = {t['name']: t['role'] for t in ts}
    return sorted({roles[w] for t in ts if t['role'] == role for w in t.get('woken_by', [])
                   if w in roles})


def network(model):
    """The network section as a shape: of the socket options, those most
    connections had (how many connections the window read is the load's)."""
    net = d.Model.load(model).get('services[0].network')
    conns = net.pop('sockopt_connections', 0)
    if 'sockopts' in net:
        net['sockopts'] = sorted((o['level'], o['name'], o['value']) for o in net['sockopts']
                                 if 2 * o['connections'] > conns)
    return net


def per_request(model):
    """{(class, call, fd): calls per request} and request/response bytes."""
    m = d.Model.load(model)
    req = m.get('services[0].requests')
    n = req['count'] or 1
    calls = {(s['thread_class'], s['name'], s['fd_kind']): s['calls'] / n
             for s in m.get('services[0].syscalls')}

    def mean(what):
        # the exact total when the profiler counted it, else bucket means
        total = req.get(what + '_total', 0)
        path = 'services[0].requests.' + what
        return total / n if total else (m.hist(path).mean if m.has(path) else 0.0)
    return calls, mean('request_bytes'), mean('response_bytes')


def cpu_shape(model):
    """The serving class's CPU windows: mix shares by class key, share of
    chased loads, share of RAW dependency distances of 1024 or more."""
    cpu = [c for c in d.Model.load(model).get('services[0].cpu') if c['loads']]
    c = max(cpu, key=lambda c: c['instructions'])
    total = sum(c['mix'].values())
    raw = c['raw']
    tail = sum(b['count'] for b in raw['buckets'] if b['lo'] >= 1024) / max(raw['total'], 1)
    return {k: v / total for k, v in c['mix'].items()}, c['chased_loads'] / c['loads'], tail


def mix_distance(a, b):
    """Total-variation distance of two mixes (0 same, 1 disjoint)."""
    return sum(abs(a.get(k, 0) - b.get(k, 0)) for k in set(a) | set(b)) / 2


def rel(a, b):
    return abs(a - b) / a if a else abs(b)


def socket_calls(model):
    """Calls per request on TCP sockets, by (class, call)."""
    calls, _, _ = per_request(model)
    return {(c, n): v for (c, n, fd), v in calls.items() if fd == 'tcp'}


def assert_requests_match(orig, cm):
    """Socket calls per request by kind within SYSCALL_BOUND, response
    bytes within BYTES_BOUND (printed first)."""
    so, sc = socket_calls(orig), socket_calls(cm)
    _, _, resp_o = per_request(orig)
    _, _, resp_c = per_request(cm)
    print('  socket calls per request: %s vs %s' % (so, sc))
    print('  response bytes per request: %.1f vs %.1f' % (resp_o, resp_c))
    assert so.keys() == sc.keys(), (so, sc)
    for k in so:
        assert rel(so[k], sc[k]) <= SYSCALL_BOUND, (k, so[k], sc[k])
    assert rel(resp_o, resp_c) <= BYTES_BOUND, ('response bytes', resp_o, resp_c)
