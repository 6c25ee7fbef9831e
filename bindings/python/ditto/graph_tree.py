# SPDX-License-Identifier: MIT
"""Graph trees: one clone per node of a model's graph, and running them.

    ditto.synth_graph(m, 'shop-clone', keep=['redis-6379=127.0.0.1:6379'])
    ditto.build_graph('shop-clone')
    with ditto.up('shop-clone', max_seconds=60) as g:
        print(g.front)                  # '127.0.0.1:8080'
        g.wait(10)                      # raises TierDiedError if a tier dies
    ditto.down('shop-clone')            # from another process
"""

import json
import os
from ctypes import byref, c_char_p, c_int, c_uint, c_void_p

from . import _lib
from ._lib import lib
from .errors import DittoError, check
from .synth import _knob_map


def synth_graph(model, directory, seed=0, force=False, no_clamp=False, knobs=None, keep=()):
    """Write the graph tree of model into directory (ditto_synth_graph_write):
    directory/<node>/ per node and directory/graph.json. keep: 'NAME=HOST:PORT'
    strings, nodes left to a real service. Returns graph.json as a dict."""
    kv = _knob_map(knobs) if knobs is not None else None
    keep = [_lib.encode(k) for k in keep]
    arr = (c_char_p * max(1, len(keep)))(*keep)
    try:
        o = _lib.make_opts(_lib.SynthGraphOpts, seed=int(seed), force=bool(force),
                           no_clamp=bool(no_clamp), knobs=kv, keep=arr if keep else None,
                           keep_count=len(keep))
        check(lib.ditto_synth_graph_write(model._p, _lib.encode(str(directory)), byref(o)))
    finally:
        if kv:
            lib.ditto_values_free(kv)
    with open(os.path.join(str(directory), 'graph.json')) as f:
        return json.load(f)


def build_graph(directory, cc=None):
    """Build every clone of a graph tree (ditto_synth_graph_build)."""
    o = _lib.make_opts(_lib.BuildOpts, cc=_lib.encode(cc) if cc else None)
    check(lib.ditto_synth_graph_build(_lib.encode(str(directory)), byref(o)))
    return str(directory)


class Up:
    """A running graph (ditto_synth_up). front: the front tier's address;
    tiers: [{name, pid, port}] in start order. stop() stops every tier;
    leaving a with block does too. The tiers die with the thread that
    started them (PR_SET_PDEATHSIG): keep it alive while they run."""

    def __init__(self, directory, port_base=0, max_seconds=0, ready_timeout=0, grace=0):
        o = _lib.make_opts(_lib.SynthUpOpts, port_base=int(port_base),
                           max_seconds=float(max_seconds), ready_timeout_s=float(ready_timeout),
                           grace_s=float(grace))
        p = c_void_p()
        check(lib.ditto_synth_up(_lib.encode(str(directory)), byref(o), byref(p)))
        self._p = p.value
        self.directory = str(directory)
        self.front = _lib.decode(lib.ditto_synth_up_front(self._p))
        self.tiers = self._tiers()

    def _tiers(self):
        out = []
        for i in range(lib.ditto_synth_up_tier_count(self._p)):
            name, pid, port = c_char_p(), c_int(), c_uint()
            check(lib.ditto_synth_up_tier(self._p, i, byref(name), byref(pid), byref(port)))
            out.append({'name': _lib.decode(name.value), 'pid': pid.value, 'port': port.value})
        return out

    def wait(self, seconds):
        """Watch for up to seconds: returns when all still run; raises
        DittoError (code -ECHILD: a tier died, the rest were stopped;
        -ECANCELED: `ditto down` stopped the graph)."""
        check(lib.ditto_synth_up_wait(self._p, float(seconds)))

    def stop(self):
        """Stop every tier (SIGTERM, then SIGKILL after the grace)."""
        if self._p:
            rc = lib.ditto_synth_up_stop(self._p)
            if rc < 0 and rc != -3:     # -ESRCH: stopped already
                check(rc)

    def close(self):
        if self._p:
            lib.ditto_synth_up_free(self._p)
            self._p = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def up(directory, port_base=0, max_seconds=0, ready_timeout=0, grace=0):
    """Start the graph tree in directory on 127.0.0.1 (see Up)."""
    return Up(directory, port_base, max_seconds, ready_timeout, grace)


def down(directory, grace=0):
    """Stop the graph another process started on directory
    (ditto_synth_down); DittoError -ENOENT when nothing is up."""
    o = _lib.make_opts(_lib.SynthUpOpts, grace_s=float(grace))
    check(lib.ditto_synth_down(_lib.encode(str(directory)), byref(o)))


__all__ = ['synth_graph', 'build_graph', 'up', 'down', 'Up', 'DittoError']
