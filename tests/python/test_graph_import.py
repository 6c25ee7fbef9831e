# SPDX-License-Identifier: MIT
"""ditto.import_traces(), Model.graph_edges() and `ditto graph import` on
the hand-made scenario of tests/unit/traces (make_exports.py): the same
graph from each format, sampling corrected or not, and errors that name
the file and the place."""

import os
import subprocess

import pytest

import ditto

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'unit', 'traces')
FILES = {'otlp-json': 'scenario.otlp.jsonl', 'jaeger-json': 'scenario.jaeger.json',
         'zipkin-json': 'scenario.zipkin.json'}


def data(name):
    return os.path.join(DATA, name)


def by_ends(model):
    return {(e['from'], e['to']): e for e in model.graph_edges() if e['source'] == 'traces'}


@pytest.mark.parametrize('fmt', sorted(FILES))
def test_same_graph_from_each_format(fmt):
    m = ditto.import_traces(data(FILES[fmt]), format=fmt, uncorrected=True)
    edges = by_ends(m)
    assert set(edges) == {('front', 'back'), ('front', 'audit'), ('front', 'redis-6379'),
                          ('back', 'memcached-11211')}
    fb = edges[('front', 'back')]
    assert (fb['calls'], fb['parent_requests'], fb['mode'], fb['order']) == \
        (7, 3, 'sync', 'sequential')
    assert fb['fanout'] == {2: 2, 3: 1}
    assert edges[('front', 'audit')]['mode'] == 'async'
    mc = edges[('back', 'memcached-11211')]
    assert (mc['calls'], mc['unattributed'], mc['order']) == (10, 1, 'parallel')
    assert mc['fanout'] == {0: 1, 1: 3, 2: 3}
    assert m.get('graph.traces.orphan_spans') == 1
    assert m.get('graph.traces.corrected') is False


def test_sampling_correction_scales_totals_only():
    m = ditto.import_traces(data(FILES['jaeger-json']))
    fb = by_ends(m)[('front', 'back')]
    assert (fb['calls'], fb['parent_requests']) == (14, 6)   # 50% declared
    assert fb['fanout'] == {2: 2, 3: 1}                        # rates unchanged
    assert m.get('graph.traces.sample_ratio') == 0.5
    assert m.get('graph.traces.corrected') is True


def test_into_an_existing_model():
    m = ditto.Model()
    m.add_service('front')
    services = len(m.services)
    out = ditto.import_traces([data(FILES['zipkin-json'])], into=m)
    assert out is m and len(m.services) == services
    assert ('front', 'back') in by_ends(m)
    with pytest.raises(ditto.DittoError):     # one import per model
        ditto.import_traces([data(FILES['zipkin-json'])], into=m)


def test_wrong_format_names_what_it_is():
    with pytest.raises(ditto.CorruptError) as e:
        ditto.import_traces(data(FILES['zipkin-json']), format='otlp-json')
    assert 'scenario.zipkin.json:1: not OTLP JSON' in str(e.value)
    assert 'Zipkin v2 span list' in str(e.value)


def test_bad_value_names_the_path(tmp_path):
    p = tmp_path / 't.json'
    p.write_text('{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"1","spanId":"2",'
                 '"startTimeUnixNano":[1],"endTimeUnixNano":2}]}]}]}')
    with pytest.raises(ditto.CorruptError) as e:
        ditto.import_traces(str(p))
    assert 'resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano: not a number' \
        in str(e.value)
    with pytest.raises(ditto.DittoError):
        ditto.import_traces(str(p), format='protobuf')


def cli():
    path = os.environ.get('DITTO_CLI')
    if not path:
        pytest.skip('DITTO_CLI not set (run through meson test)')
    return path


def test_cli_graph_import(tmp_path):
    out = tmp_path / 'g.model'
    r = subprocess.run([cli(), 'graph', 'import', '-o', str(out), data(FILES['otlp-json'])],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 0, r.stderr
    line = r.stdout.decode()
    assert line.startswith('traces: 39 spans, 3 traces, 4 edges, 2 externals, 1 orphan spans')
    assert 'sampling ratio 0.5 (totals corrected)' in line
    m = ditto.Model.load(str(out))
    assert by_ends(m)[('front', 'back')]['calls'] == 14

    r = subprocess.run([cli(), 'graph', 'import', '--uncorrected', '--format', 'zipkin-json',
                        '-o', str(out), data(FILES['otlp-json'])],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 1
    assert b'looks like OTLP JSON' in r.stderr

    r = subprocess.run([cli(), 'graph', 'import', '--format', 'xml', '-o', str(out), 'x'],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 2
