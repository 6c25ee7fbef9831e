# SPDX-License-Identifier: MIT
"""Graph trees for the deployment tests, written as the fixed layout says
(DIR/<node>/ a clone tree per node, DIR/graph.json) from the model of
`ditto model sample` (redis calling memcached) with an HTTP service 'web'
added through the binding (its sections left to the synthesizer's
defaults): each node's tree by `ditto synth MODEL --service S -o
DIR/<node>`, graph.json by the test (until `ditto synth` writes graph
trees of multi-service models)."""

import json
import os
import random
import socket
import subprocess

CLI = os.environ.get('DITTO_CLI', 'ditto')

# Clones and the CLI's children are plain programs: no sanitizer runtime.
for _var in ('LD_PRELOAD', 'ASAN_OPTIONS', 'UBSAN_OPTIONS'):
    os.environ.pop(_var, None)


def ditto(*args, check=True, timeout=300):
    r = subprocess.run([CLI] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError('ditto %s failed (%d):\n%s%s' % (' '.join(map(str, args)),
                                                           r.returncode, r.stdout, r.stderr))
    return r


def free_port():
    """A port free now on 127.0.0.1, below the ephemeral range (29500+:
    tests/profile takes 21000-29000, tests/synth picks at random too)."""
    for _ in range(200):
        port = random.randint(30000, 32000)
        with socket.socket() as s:
            try:
                s.bind(('127.0.0.1', port))
                return port
            except OSError:
                continue
    raise RuntimeError('no free port')


def env_name(name):
    return 'DITTO_UPSTREAM_' + ''.join(c if c.isascii() and c.isalnum() else '_'
                                       for c in name.upper())


def sample_model(tmp):
    path = os.path.join(str(tmp), 'sample.msgpack')
    if not os.path.exists(path):
        import ditto as pyditto
        ditto('model', 'sample', '-o', path)
        m = pyditto.Model.load(path)
        m.add_service('web', framing='http1')
        m.save(path)
    return path


def node(name, port, framing, upstreams=(), kind='clone', address=None, processes=1,
         threads=1, cpu_millicores=0):
    n = {'name': name, 'kind': kind, 'port': port, 'framing': framing, 'env': env_name(name),
         'processes': processes, 'threads': threads, 'cpu_millicores': cpu_millicores,
         'upstreams': list(upstreams)}
    if kind == 'clone':
        n['dir'] = name
    else:
        n['address'] = address
    return n


def write_graph(directory, nodes, front, start_order, edges=()):
    doc = {'schema': 1, 'front': front, 'start_order': list(start_order), 'nodes': nodes,
           'edges': list(edges)}
    with open(os.path.join(str(directory), 'graph.json'), 'w') as f:
        json.dump(doc, f)
    return doc


def make_tree(tmp, names=('front', 'cache'), kept=None, build=False):
    """A graph tree: names[0] (a clone of the model's web, HTTP/1.1) calls
    names[1] (its memcached, memcache text) and, with kept=(name, addr),
    a real service left as an address. Returns (dir, graph doc)."""
    model = sample_model(tmp)
    d = os.path.join(str(tmp), 'graph')
    os.makedirs(d, exist_ok=True)
    front, leaf = names
    for name, service in ((front, 'web'), (leaf, 'memcached')):
        ditto('synth', model, '--service', service, '-o', os.path.join(d, name), '-q',
              *(() if build else ('-n',)))
    p_front, p_leaf = free_port(), free_port()
    while p_leaf == p_front:
        p_leaf = free_port()
    nodes = [node(front, p_front, 'http1', [leaf] + ([kept[0]] if kept else []), threads=5,
                  cpu_millicores=250),
             node(leaf, p_leaf, 'memcache-text', threads=4)]
    if kept:
        nodes.append(node(kept[0], 0, 'postgres', kind='kept', address=kept[1], processes=0,
                          threads=0))
    edges = [{'from': front, 'to': leaf, 'calls_per_request': 1.0, 'mode': 'sync',
              'order': 'sequential', 'framing': 'memcache-text'}]
    return d, write_graph(d, nodes, front, [leaf, front], edges)
