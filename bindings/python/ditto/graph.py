# SPDX-License-Identifier: MIT
"""The model's RPC graph (graph.nodes, externals, edges, traces), its
comparison between sources or models, and its Graphviz DOT (since 0.5)."""

import os
import shutil
import subprocess
from ctypes import byref, c_void_p

from . import _lib
from ._lib import lib
from .errors import check, null_error
from .model import (Comparison, _Element, _added, _enum_prop, _hist_prop, _set_attrs,
                    _u64_prop, comparison_rows, enum_name, enum_parse)

__all__ = ['Graph', 'Edge', 'graph_compare', 'graph_dot']

SOURCES = ('kernel', 'traces')


class Edge(_Element):
    """graph.edges[]: calls from one node to another as one source saw
    them. The histograms are Hist objects borrowed from the model."""
    mode = _enum_prop('edge', 'mode', 'call_mode')
    order = _enum_prop('edge', 'order', 'call_order')
    calls = _u64_prop('edge', 'calls')
    parent_requests = _u64_prop('edge', 'parent_requests')
    ambiguous = _u64_prop('edge', 'ambiguous')
    unattributed = _u64_prop('edge', 'unattributed')
    fanout = _hist_prop('edge', 'fanout')
    request_bytes = _hist_prop('edge', 'request_bytes')
    response_bytes = _hist_prop('edge', 'response_bytes')
    latency_ns = _hist_prop('edge', 'latency_ns')

    @property
    def from_(self):
        return _lib.decode(lib.ditto_edge_from(self._h))

    @property
    def to(self):
        return _lib.decode(lib.ditto_edge_to(self._h))

    @property
    def source(self):
        return enum_name('edge_source', lib.ditto_edge_source(self._h))

    @property
    def calls_per_request(self):
        """calls / parent_requests, None when no parent request was seen."""
        p = self.parent_requests
        return self.calls / p if p else None

    @property
    def fanout_counts(self):
        """The fan-out histogram as {calls in one parent request: parents}."""
        return {int(lo): int(n) for lo, _hi, n in self.fanout.buckets}

    def _mean(self, h):
        return h.mean if h.total else None

    @property
    def request_bytes_mean(self):
        return self._mean(self.request_bytes)

    @property
    def response_bytes_mean(self):
        return self._mean(self.response_bytes)

    @property
    def latency_p50_ns(self):
        h = self.latency_ns
        return h.quantile(0.5) if h.total else None

    @property
    def latency_p99_ns(self):
        h = self.latency_ns
        return h.quantile(0.99) if h.total else None

    def __repr__(self):
        return '<ditto.Edge %s -> %s (%s)>' % (self.from_, self.to, self.source)


class Graph:
    """graph of a model: reading an absent one adds nothing; the first
    add_ or set creates it."""

    def __init__(self, model):
        self._model = model

    def _g(self):
        return lib.ditto_model_graph(self._model._p)

    def _gw(self):
        g = lib.ditto_model_graph_ensure(self._model._p)
        if not g:
            raise null_error()
        return g

    @property
    def nodes(self):
        g = self._g()
        return [_lib.decode(lib.ditto_graph_node(g, i))
                for i in range(lib.ditto_graph_node_count(g))]

    def add_node(self, name):
        check(lib.ditto_graph_add_node(self._gw(), _lib.encode(name)))

    @property
    def externals(self):
        """externals as dicts (copies): name, address, port, framing."""
        g = self._g()
        out = []
        for i in range(lib.ditto_graph_external_count(g)):
            x = lib.ditto_graph_external(g, i)
            out.append({'name': _lib.decode(lib.ditto_external_name(x)),
                        'address': _lib.decode(lib.ditto_external_address(x)),
                        'port': lib.ditto_external_port(x),
                        'framing': enum_name('framing', lib.ditto_external_framing(x))})
        return out

    def add_external(self, name, address=None, port=None, framing=None):
        """Add an external (and its node, which it must have)."""
        self.add_node(name)
        g = self._gw()
        exists = bool(lib.ditto_graph_find_external(g, _lib.encode(name)))
        x = _added(lib.ditto_graph_add_external(g, _lib.encode(name)), exists, name)
        if address is not None:
            check(lib.ditto_external_set_address(x, _lib.encode(address)))
        if port is not None:
            check(lib.ditto_external_set_port(x, int(port)))
        if framing is not None:
            check(lib.ditto_external_set_framing(x, enum_parse('framing', framing)))

    @property
    def edges(self):
        g = self._g()
        return [Edge(self._model, lib.ditto_graph_edge(g, i))
                for i in range(lib.ditto_graph_edge_count(g))]

    def edge(self, from_, to, source='kernel'):
        """The edge from_ -> to of that source, or None."""
        ptr = lib.ditto_graph_find_source_edge(self._g(), enum_parse('edge_source', source),
                                               _lib.encode(from_), _lib.encode(to))
        return Edge(self._model, ptr) if ptr else None

    def add_edge(self, from_, to, source='kernel', **fields):
        """Add the edge (and both nodes); keyword fields (mode, order,
        calls, parent_requests, ambiguous, unattributed) are set on it."""
        self.add_node(from_)
        self.add_node(to)
        src = enum_parse('edge_source', source)
        g = self._gw()
        exists = bool(lib.ditto_graph_find_source_edge(g, src, _lib.encode(from_),
                                                       _lib.encode(to)))
        ptr = _added(lib.ditto_graph_add_source_edge(g, src, _lib.encode(from_),
                                                     _lib.encode(to)), exists, from_, to)
        return _set_attrs(Edge(self._model, ptr), fields)

    @property
    def traces(self):
        """graph.traces as a dict (a copy), or None when absent."""
        t = lib.ditto_graph_traces(self._g())
        if not t:
            return None
        return {k: getattr(lib, 'ditto_traces_' + k)(t)
                for k in ('files', 'spans', 'traces', 'orphan_spans', 'rejected_spans',
                          'sample_ratio', 'corrected')}

    def set_traces(self, **fields):
        t = lib.ditto_graph_traces_ensure(self._gw())
        if not t:
            raise null_error()
        for k, v in fields.items():
            fn = getattr(lib, 'ditto_traces_set_' + k, None)
            if fn is None or k not in ('files', 'spans', 'traces', 'orphan_spans',
                                       'rejected_spans', 'sample_ratio', 'corrected'):
                raise AttributeError('graph.traces has no field %r' % k)
            check(fn(t, v))

    def __repr__(self):
        return '<ditto.Graph %d nodes, %d edges>' % (len(self.nodes), len(self.edges))


def graph_compare(a, b=None, source_a='kernel', source_b='traces', min_error=0.0):
    """Edges of source_a in model a against those of source_b in model b
    (a itself when b is None): a Comparison of Metric rows named
    graph.edges[FROM:TO:A/B]... (model.h, ditto_graph_compare)."""
    b = a if b is None else b
    out = c_void_p()
    o = _lib.make_opts(_lib.CompareOpts, min_error=float(min_error))
    check(lib.ditto_graph_compare(a._p, enum_parse('edge_source', source_a), b._p,
                                  enum_parse('edge_source', source_b), byref(o), byref(out)))
    try:
        return comparison_rows(out.value, Comparison())
    finally:
        lib.ditto_comparison_free(out.value)


def graph_dot(model, path=None, svg=None, source='all'):
    """The graph as Graphviz DOT text (returned); written to path when
    given; rendered to svg with Graphviz's `dot -Tsvg` when given
    (FileNotFoundError when dot is not installed)."""
    sources = 0 if source == 'all' else 1 << enum_parse('edge_source', source)
    o = _lib.make_opts(_lib.DotOpts, sources=sources)
    out = c_void_p()
    check(lib.ditto_graph_write_dot(model._p, byref(o), byref(out)))
    text = _lib.take_string(out.value).decode('utf-8', 'surrogateescape')
    if path is not None:
        with open(path, 'w', encoding='utf-8', errors='surrogateescape') as f:
            f.write(text)
    if svg is not None:
        dot = shutil.which('dot')
        if not dot:
            raise FileNotFoundError("Graphviz's 'dot' is not on PATH (Debian: graphviz)")
        subprocess.run([dot, '-Tsvg', '-o', os.fspath(svg)], input=text.encode(
            'utf-8', 'surrogateescape'), check=True, timeout=120)
    return text
