# SPDX-License-Identifier: MIT
"""The graph through the binding: reading and building it, comparing its
sources, DOT and `ditto graph dot --svg` (Graphviz's dot must parse what we
write, whatever the names hold)."""

import os
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

import ditto

HOSTILE = ['quo"te', 'back\\slash', 'trail\\', 'new\nline', '{brace}', '<html>&amp;',
           'a\\nb', '-> x', 'tab\there', 'ünï', '"]; digraph x {', 'p&amp;q', 'x&lt;y']

needs_dot = pytest.mark.skipif(not shutil.which('dot'), reason="Graphviz's dot not installed")


def build(model, sources=('kernel', 'traces'), calls=(2000, 2000)):
    g = model.graph
    g.add_external('db', address='10.0.0.9', port=5432, framing='postgres')
    for src, n in zip(sources, calls):
        e = g.add_edge('front', 'back', source=src, mode='sync', order='sequential',
                       calls=n, parent_requests=1000)
        e.fanout.add(2, 1000)
        e.request_bytes.add(100, n)
        e.response_bytes.add(900, n)
        e.latency_ns.add(250000, n)
        g.add_edge('back', 'db', source=src, mode='async', order='parallel', calls=10,
                   parent_requests=1000).fanout.add(1, 10)
    g.set_traces(files=1, spans=300, traces=100, sample_ratio=0.5, corrected=True)
    return g


def test_sample_graph_reads_every_field(sample):
    g = sample.graph
    assert g.nodes == ['redis', 'memcached', 'orders-db']
    assert g.externals == [{'name': 'orders-db', 'address': '10.0.0.7', 'port': 5432,
                            'framing': 'postgres'}]
    assert sorted({e.source for e in g.edges}) == ['kernel', 'traces']
    e = g.edge('redis', 'memcached', source='traces')
    assert (e.from_, e.to, e.mode, e.order) == ('redis', 'memcached', 'sync', 'sequential')
    assert e.calls == sum(k * v for k, v in e.fanout_counts.items())
    assert e.parent_requests == sum(e.fanout_counts.values())
    assert e.latency_p50_ns <= e.latency_p99_ns
    assert e.request_bytes_mean > 0 and e.response_bytes_mean > 0
    assert 0 < e.ambiguous < e.calls
    assert g.traces['sample_ratio'] == 0.1 and g.traces['corrected'] is True


def test_build_and_compare_sources():
    m = ditto.Model()
    g = build(m, calls=(2000, 2200))
    m.validate()
    c = ditto.graph_compare(m)
    rows = {r.path: r for r in c}
    calls = rows['graph.edges[front:back:kernel/traces].calls_per_parent_requests']
    assert (calls.a, calls.b) == (2.0, 2.2)
    assert calls.error == pytest.approx(0.1)
    assert rows['graph.edges[back:db:kernel/traces].mode'].error == 0
    assert c.max_error == pytest.approx(0.1, abs=0.02)
    # The traces miss an edge: a row says so.
    g.add_edge('front', 'cache', source='kernel', calls=5, parent_requests=1000)
    rows = {r.path: r for r in ditto.graph_compare(m)}
    assert rows['graph.edges[front:cache:kernel/traces]'].kind == 'only_a'
    # A model without a graph reads as empty and gains none.
    empty = ditto.Model()
    assert empty.graph.nodes == [] and empty.graph.edges == [] and empty.graph.traces is None
    assert 'graph' not in empty.json()


def test_model_diff_compares_graphs():
    a, b = ditto.Model(), ditto.Model()
    build(a)
    build(b, calls=(3000, 3000))
    rows = {r.path: r for r in a.compare(b)}
    assert rows['graph.edges[front:back:kernel].calls_per_parent_requests'].error == \
        pytest.approx(0.5)
    assert rows['graph.edges[front:back:traces].calls_per_parent_requests'].error == \
        pytest.approx(0.5)


def test_dot_of_hostile_names_parses(tmp_path):
    m = ditto.Model()
    g = m.graph
    for x, y in zip(HOSTILE, HOSTILE[1:]):
        g.add_edge(x, y, calls=3, parent_requests=1)
    g.add_external('ext"\\\n', address='::1', port=6379, framing='resp')
    g.add_edge(HOSTILE[0], 'ext"\\\n', source='traces', calls=1, parent_requests=1)
    m.validate()
    text = ditto.graph_dot(m)
    assert text == ditto.graph_dot(m)
    if not shutil.which('dot'):
        pytest.skip("Graphviz's dot not installed")
    # dot reads it back: canonical output lists every node by its name.
    r = subprocess.run(['dot', '-Tcanon'], input=text.encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    assert b'Warning' not in r.stderr and b'Error' not in r.stderr, r.stderr.decode()
    svg = tmp_path / 'g.svg'
    ditto.graph_dot(m, path=tmp_path / 'g.dot', svg=svg)
    assert (tmp_path / 'g.dot').read_text() == text
    # Each node's drawn label is its name exactly (an external's is
    # followed by its address and framing): no escape or entity leaks.
    labels = svg_node_labels(svg)
    services = [n for n in g.nodes if n != 'ext"\\\n']
    assert len(labels) == len(g.nodes)
    for name in services:
        assert name in labels, (name, labels)
    assert any(lab.startswith('ext"\\\n[::1]:6379\nresp') for lab in labels), labels


def svg_node_labels(path):
    """The text of each node of an SVG, its lines joined by newlines."""
    ns = {'s': 'http://www.w3.org/2000/svg'}
    root = ET.parse(path).getroot()
    return ['\n'.join(t.text or '' for t in gr.findall('s:text', ns))
            for gr in root.iter('{http://www.w3.org/2000/svg}g') if gr.get('class') == 'node']


def svg_node_titles(path):
    ns = {'s': 'http://www.w3.org/2000/svg'}
    root = ET.parse(path).getroot()
    return {gr.find('s:title', ns).text for gr in root.iter('{http://www.w3.org/2000/svg}g')
            if gr.get('class') == 'node'}


@needs_dot
def test_cli_graph_dot_svg_names_every_node(tmp_path, sample_path):
    cli = os.environ['DITTO_CLI']
    svg = tmp_path / 'sample.svg'
    dot = tmp_path / 'sample.dot'
    r = subprocess.run([cli, 'graph', 'dot', str(sample_path), '-o', str(dot), '--svg', str(svg)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout == b''
    assert svg_node_titles(svg) == {'redis', 'memcached', 'orders-db'}
    text = svg.read_text()
    assert 'postgres' in text and 'calls/req' in text and 'async, parallel' in text
    assert dot.read_text() == ditto.graph_dot(ditto.Model.load(sample_path))
    # Without dot on PATH: a clear error, exit 1, no SVG left behind.
    r = subprocess.run([cli, 'graph', 'dot', str(sample_path), '--svg', str(tmp_path / 'x.svg')],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
                       env=dict(os.environ, PATH=str(tmp_path)))
    assert r.returncode == 1
    assert b"'dot' is not on PATH" in r.stderr
    assert not list(tmp_path.glob('x.svg*'))


def test_cli_show_and_compare(sample_path):
    cli = os.environ['DITTO_CLI']
    out = subprocess.run([cli, 'model', 'show', str(sample_path)], stdout=subprocess.PIPE,
                         check=True, timeout=60).stdout.decode()
    graph = out[out.index('\ngraph:'):]
    assert 'orders-db  external  10.0.0.7:5432 postgres' in graph
    assert 'memcached -> orders-db' in graph and 'async' in graph and 'parallel' in graph
    assert 'sampling ratio 0.1, call counts corrected' in graph
    r = subprocess.run([cli, 'graph', 'compare', '--json', str(sample_path)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    # The sample's two sources differ: exit 1 with rows for both edges.
    assert r.returncode == 1, r.stderr.decode()
    assert b'graph.edges[redis:memcached:kernel/traces].calls_per_parent_requests' in r.stdout
