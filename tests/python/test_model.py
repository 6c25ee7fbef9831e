# SPDX-License-Identifier: MIT
"""ditto.Model over libditto: codec, JSON, path access, merge, compare."""

import errno
import gc
import json
import os

import pytest

import ditto
from ditto import Hist, Model

import mpack
from conftest import first_with

HIST_KEYS = {'kind', 'total', 'buckets'}
# JSON key -> attribute of ditto.Syscall
SYSCALL_HISTS = {'size': 'size', 'ret': 'ret', 'flags': 'flags', 'offset': 'offset',
                 'latency_ns': 'latency'}


def is_hist(v):
    return isinstance(v, dict) and HIST_KEYS <= set(v)


def iter_hists(node, path=''):
    if is_hist(node):
        yield path, node
    elif isinstance(node, dict):
        for k, v in node.items():
            yield from iter_hists(v, '%s.%s' % (path, k) if path else k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from iter_hists(v, '%s[%d]' % (path, i))


def jbuckets(h):
    return [(b['lo'], b['hi'], b['count']) for b in h['buckets']]


def busy_service(j):
    """Index and JSON of a service with requests and a syscall with calls."""
    return first_with(j['services'],
                      lambda s: s['requests']['count'] > 0
                      and any(c['calls'] > 0 for c in s['syscalls']),
                      'service with requests and syscall calls')


# --- basics -----------------------------------------------------------------

def test_version():
    v = ditto.version()
    parts = v.split('.')
    assert len(parts) == 3 and all(p.isdigit() for p in parts), v
    major, minor, patch = map(int, parts)
    assert ditto.version_number() == major * 10000 + minor * 100 + patch


def test_new_model():
    m = Model()
    assert m.schema == ditto.MODEL_SCHEMA
    assert m.services == []
    j = m.json()
    assert j['schema'] == ditto.MODEL_SCHEMA
    assert j['meta']['tool_version'] == ditto.version()
    assert m.meta.tool_version == ditto.version()
    assert m.meta.created > 0
    assert m.meta.sources == 1
    assert m.get('schema') == ditto.MODEL_SCHEMA
    m.validate()
    assert m.problems() == []
    b = m.to_bytes()
    assert Model.from_bytes(b).to_bytes() == b


def test_closed_model():
    m = Model()
    m.close()
    m.close()
    with pytest.raises(ValueError):
        m.to_bytes()
    with Model() as m2:
        assert m2.schema == ditto.MODEL_SCHEMA
    with pytest.raises(ValueError):
        m2.services


def test_sample_loads(sample, sample_json):
    assert sample.schema == ditto.MODEL_SCHEMA
    assert sample.services
    assert sample.services == [s['name'] for s in sample_json['services']]
    sample.validate()
    assert sample.problems() == []
    assert sample.is_valid()


def test_mpack_helper_agrees(sample, sample_bytes):
    """The tests' own msgpack codec reads what libditto writes, and back."""
    d = mpack.unpackb(sample_bytes)
    assert d['schema'] == ditto.MODEL_SCHEMA
    assert Model.from_bytes(mpack.packb(d)).json() == sample.json()


# --- codec ------------------------------------------------------------------

def test_bytes_round_trip(sample, sample_bytes):
    b = sample.to_bytes()
    assert isinstance(b, bytes) and b
    assert bytes(sample) == b
    m2 = Model.from_bytes(b)
    assert m2.to_bytes() == b
    assert m2.json() == sample.json()
    assert Model.from_bytes(sample_bytes).json() == sample.json()
    assert Model.from_bytes(bytearray(b)).to_bytes() == b
    assert Model.from_bytes(memoryview(b)).to_bytes() == b
    assert Model.from_bytes(b, validate=False).to_bytes() == b


def test_copy(sample):
    c = sample.copy()
    assert c.to_bytes() == sample.to_bytes()
    c.service(0).requests.count += 1
    assert c.to_bytes() != sample.to_bytes()


def test_save_load(sample, tmp_path):
    p = tmp_path / 'out.model'
    sample.save(p)
    assert os.listdir(tmp_path) == ['out.model']  # the temporary file is gone
    assert p.read_bytes() == sample.to_bytes()
    assert Model.load(p).to_bytes() == sample.to_bytes()
    assert Model.load(str(p), validate=False).to_bytes() == sample.to_bytes()
    Model().save(str(p))  # replaces it
    assert Model.load(p).services == []
    assert os.listdir(tmp_path) == ['out.model']


def test_save_to_missing_dir(tmp_path):
    with pytest.raises(ditto.DittoError) as ei:
        Model().save(tmp_path / 'nodir' / 'x.model')
    assert ei.value.code == -errno.ENOENT
    assert ei.value.message


def test_load_missing_file(tmp_path):
    p = tmp_path / 'missing.model'
    with pytest.raises(ditto.DittoError) as ei:
        Model.load(p)
    assert ei.value.code == -errno.ENOENT
    assert 'missing.model' in ei.value.message


# --- JSON -------------------------------------------------------------------

def test_to_json(sample):
    compact = sample.to_json()
    pretty = sample.to_json(pretty=True)
    assert '\n' not in compact.strip()
    assert '\n  "' in pretty
    assert json.loads(compact) == json.loads(pretty) == sample.json()
    j = sample.json()
    for key in ('schema', 'meta', 'services', 'graph', 'tuning'):
        assert key in j, key
    assert isinstance(j['services'], list) and j['services']
    assert [s['name'] for s in j['services']] == sample.services
    assert json.loads(sample.get_json('')) == j
    assert json.loads(sample.get_json('', pretty=True)) == j


def test_json_histograms(sample_json):
    hists = list(iter_hists(sample_json))
    assert hists
    assert any(h['total'] > 0 for _, h in hists)
    for path, h in hists:
        assert h['kind'] in ('log2', 'exact', 'loglin'), path
        assert h['total'] == sum(b['count'] for b in h['buckets']), path
        los = [b['lo'] for b in h['buckets']]
        assert los == sorted(set(los)), path
        for b in h['buckets']:
            assert b['lo'] <= b['hi'] and b['count'] > 0, path


# --- path access ------------------------------------------------------------

def test_get_scalars(sample, sample_json):
    s0 = sample_json['services'][0]
    name = s0['name']
    assert sample.get('schema') == ditto.MODEL_SCHEMA
    assert sample.get('services[0].name') == name
    assert sample.get('services[%s].name' % name) == name
    assert sample.get('services[0].framing') == s0['framing']
    count = sample.get('services[0].requests.count')
    assert isinstance(count, int) and count == s0['requests']['count']
    w = sample.get('meta.window_s')
    assert isinstance(w, float) and w == pytest.approx(sample_json['meta']['window_s'])
    ad = sample.get('services[0].network.accept_dispatch')
    assert isinstance(ad, bool) and ad == s0['network']['accept_dispatch']
    assert sample.get('meta.host.cores') == sample_json['meta']['host']['cores']
    assert sample.get('meta.host.cpu_model') == sample_json['meta']['host']['cpu_model']


def test_get_containers(sample, sample_json):
    s0 = sample_json['services'][0]
    assert sample.get('services[0].threads') == s0['threads']
    assert sample.get('meta') == sample_json['meta']
    assert sample.get('services') == sample_json['services']
    assert sample.get_len('services') == len(sample_json['services'])
    assert sample.get_len('services[0].name') == len(s0['name'].encode())
    assert sample.get_type('services') == ditto._lib.VALUE_ARRAY
    assert sample.get_type('meta') == ditto._lib.VALUE_MAP


def test_get_by_key(sample, sample_json):
    s0 = sample_json['services'][0]
    th = s0['threads'][0]
    assert sample.get('services[0].threads[%s].count' % th['name']) == th['count']
    assert sample.get('services[%s].threads[%s].role' % (s0['name'], th['name'])) == th['role']
    sc = s0['syscalls'][0]
    key = '%s:%s:%s' % (sc['thread_class'], sc['name'], sc['fd_kind'])
    assert sample.get('services[0].syscalls[%s].calls' % key) == sc['calls']
    assert sample.get('services[0].syscalls[0].name') == sc['name']


def test_get_quoted_map_key(sample, sample_json):
    si, s = first_with(sample_json['services'],
                       lambda s: any(c.get('mix') for c in s['cpu']), 'cpu with a mix')
    ci, cpu = first_with(s['cpu'], lambda c: c.get('mix'), 'cpu with a mix')
    k, v = next(iter(cpu['mix'].items()))
    assert sample.get('services[%d].cpu[%d].mix["%s"]' % (si, ci, k)) == v
    assert sample.get('services[%d].cpu[%s].mix["%s"]' % (si, cpu['thread_class'], k)) == v
    assert sample.get('services[%d].cpu[%d].mix' % (si, ci)) == cpu['mix']


def test_get_hist(sample, sample_json):
    si, s = first_with(sample_json['services'],
                       lambda s: s['requests']['request_bytes']['total'] > 0,
                       'service with request_bytes')
    path = 'services[%d].requests.request_bytes' % si
    jh = s['requests']['request_bytes']
    h = sample.get(path)
    assert h['kind'] == jh['kind'] == 'log2'
    assert h['total'] == jh['total']
    assert h['buckets'] == jbuckets(jh)
    assert sample.get_type(path) == ditto._lib.VALUE_HIST
    owned = sample.hist(path)
    assert isinstance(owned, Hist) and not owned.borrowed
    assert owned.kind == 'log2' and owned.total == jh['total']
    owned.add(1)  # a copy: the model does not change
    assert sample.get(path)['total'] == jh['total']
    # every histogram of the JSON export is reachable by its path
    for p, jh in iter_hists(sample_json):
        got = sample.get(p)
        assert (got['kind'], got['total'], got['buckets']) == (jh['kind'], jh['total'],
                                                              jbuckets(jh)), p


def test_get_errors(sample):
    for path in ('nosuch', 'services[99999].name', 'services[nosuch].name',
                 'meta.nosuch', 'services[0].threads[nosuch].count'):
        with pytest.raises(ditto.NotFoundError) as ei:
            sample.get(path)
        assert ei.value.message, path
        assert path not in sample
    assert 'schema' in sample
    for path in ('services[0', 'services[0]..name', 'meta.', '.meta', 'services[]',
                 'services[0].cpu[0].mix["a'):
        with pytest.raises(ditto.DittoError) as ei:
            sample.get(path)
        assert ei.value.code == -errno.EINVAL, (path, ei.value)
    with pytest.raises(ditto.DittoTypeError):
        sample.hist('schema')


# --- typed conveniences -----------------------------------------------------

def test_typed_access(sample, sample_json):
    sj = sample_json['services'][0]
    s = sample.service(0)
    assert s == sample.service(sj['name'])
    assert s.name == sj['name']
    assert s.framing == sj['framing']
    assert s.processes == sj['processes']
    assert s.ports == sj['ports']
    assert [t.name for t in s.threads] == [t['name'] for t in sj['threads']]
    for t, tj in zip(s.threads, sj['threads']):
        assert (t.count, t.role, t.io_model) == (tj['count'], tj['role'], tj['io_model'])
    assert s.thread(sj['threads'][0]['name']) == s.threads[0]
    assert len(s.syscalls) == len(sj['syscalls'])
    for c, cj in zip(s.syscalls, sj['syscalls']):
        assert (c.thread_class, c.name, c.fd_kind) == (cj['thread_class'], cj['name'],
                                                      cj['fd_kind'])
        assert (c.calls, c.errors, c.nr) == (cj['calls'], cj['errors'], cj['nr'])
        for hk, attr in SYSCALL_HISTS.items():
            assert getattr(c, attr).buckets == jbuckets(cj[hk]), hk
        assert s.syscall(c.thread_class, c.name, c.fd_kind) == c
    r = s.requests
    assert r.count == sj['requests']['count']
    assert r.request_bytes.buckets == jbuckets(sj['requests']['request_bytes'])
    assert r.request_bytes.borrowed
    assert s.per_request(r.count) == (1.0 if r.count else 0.0)
    with pytest.raises(ditto.NotFoundError):
        sample.service('no such service')
    with pytest.raises(ditto.NotFoundError):
        sample.service(len(sample.services))
    with pytest.raises(ditto.NotFoundError):
        s.thread('no such thread')


def test_build_model():
    m = Model()
    s = m.add_service('echo', framing='raw', processes=1)
    s.add_port(7000)
    s.add_port(7000)
    assert s.ports == [7000]
    with pytest.raises(ditto.DittoError) as ei:
        s.add_port(0)
    assert ei.value.code == -errno.EINVAL
    s.add_thread('main', count=1, role='main', io_model='epoll')
    s.add_thread('worker', count=4, role='worker', io_model='blocking')
    c = s.add_syscall('main', 'read', 'tcp', nr=0, calls=100, errors=2)
    c.size.add(512, 100)
    c.ret.add(512, 98)
    c.latency.add(1500, 100)
    assert c.latency.kind == 'loglin' and c.size.kind == 'log2' and c.flags.kind == 'exact'
    r = s.requests
    r.count = 50
    r.request_bytes.add(100, 50)
    assert m.services == ['echo']
    j = m.json()
    sj = j['services'][0]
    assert sj['framing'] == 'raw' and sj['ports'] == [7000] and sj['processes'] == 1
    assert [(t['name'], t['count'], t['role'], t['io_model']) for t in sj['threads']] == [
        ('main', 1, 'main', 'epoll'), ('worker', 4, 'worker', 'blocking')]
    cj = sj['syscalls'][0]
    assert (cj['thread_class'], cj['name'], cj['fd_kind'], cj['calls'], cj['errors']) == (
        'main', 'read', 'tcp', 100, 2)
    assert jbuckets(cj['size']) == [(512, 1023, 100)]
    assert m.get('services[echo].syscalls[main:read:tcp].calls') == 100
    assert m.get('services[echo].requests.count') == 50
    assert s.per_request(c.calls) == 2.0
    assert m.problems() == []
    m.validate()
    assert Model.from_bytes(m.to_bytes()).json() == j
    with pytest.raises(ditto.NotFoundError):
        s.framing = 'smtp'
    with pytest.raises(ditto.NotFoundError):
        s.add_syscall('main', 'write', 'bogus-fd')
    for add, code in ((lambda: m.add_service('echo'), errno.EEXIST),
                      (lambda: m.add_service(''), errno.EINVAL),
                      (lambda: s.add_thread('main'), errno.EEXIST),
                      (lambda: s.add_syscall('main', 'read', 'tcp'), errno.EEXIST),
                      (lambda: s.add_syscall('main', '', 'tcp'), errno.EINVAL)):
        with pytest.raises(ditto.DittoError) as ei:
            add()
        assert ei.value.code == -code and ei.value.message
    assert m.services == ['echo']
    assert [t.name for t in s.threads] == ['main', 'worker'] and len(s.syscalls) == 1


def test_borrowed_hist_keeps_model_alive():
    m = Model()
    h = m.add_service('x').requests.request_bytes
    del m
    gc.collect()
    h.add(10)
    assert h.total == 1 and h.buckets == [(8, 15, 1)]


def test_reads_never_write():
    """Reading absent sections and histograms adds nothing to the model
    (issue 19); the first write creates them."""
    m = Model()
    s = m.add_service('x')
    c = s.add_syscall('main', 'read', 'tcp')
    cpu = s.add_cpu('main')
    before = m.to_bytes()
    assert s.requests.count == 0 and s.requests.request_bytes_total == 0
    assert s.requests.service_ns.total == 0 and s.requests.service_ns.kind == 'loglin'
    assert s.requests.after_response_ns.buckets == []
    assert s.network.io_model == 'unknown' and s.network.sockopts is None
    assert not s.network.accept_dispatch
    assert c.size.total == 0 and c.size.kind == 'log2' and c.flags.kind == 'exact'
    assert c.latency.precision == 4 and c.errnos.to_dict()['total'] == 0
    assert c.size.copy().total == 0
    c.size.clear()
    assert cpu.mix == {} and cpu.stepping == {} and cpu.dws.mean == 0
    assert cpu.miss_rate(32768) == 0
    assert dict(m.knobs) == {} and 'synth.body_scale' not in m.knobs
    assert m.tuning_iterations == []
    assert m.meta.host['cores'] is None
    assert s.per_request(10) == 0
    assert m.to_bytes() == before
    s.requests.service_ns.add(5000, 2)
    c.size.add(100)
    cpu.add_mix('alu.rr.none.64.base', 3)
    m.knobs['synth.body_scale'] = 2
    s.network.io_model = 'epoll'
    assert m.get('services[x].requests.service_ns')['total'] == 2
    assert s.requests.service_ns.total == 2 and c.size.total == 1
    assert cpu.mix == {'alu.rr.none.64.base': 3} and dict(m.knobs) == {'synth.body_scale': 2.0}
    assert m.get('services[x].network.io_model') == 'epoll'
    assert 'services[x].observed' not in m and 'graph' not in m


# --- merge ------------------------------------------------------------------

def _doubled(hb, ha):
    return ha['total'] == 2 * hb['total'] and jbuckets(ha) == [
        (lo, hi, 2 * n) for lo, hi, n in jbuckets(hb)]


def test_merge_adds_counts(sample, sample_bytes):
    before = sample.json()
    dup = Model.from_bytes(sample_bytes)
    assert sample.merge(dup) is sample
    after = sample.json()
    assert dup.json() == before
    assert after['meta']['sources'] == 2 * before['meta']['sources']
    assert after['meta']['window_s'] == pytest.approx(2 * before['meta']['window_s'])
    assert [s['name'] for s in after['services']] == [s['name'] for s in before['services']]
    for sb, sa in zip(before['services'], after['services']):
        assert sa['requests']['count'] == 2 * sb['requests']['count']
        assert _doubled(sb['requests']['request_bytes'], sa['requests']['request_bytes'])
        assert [t['count'] for t in sa['threads']] == [t['count'] for t in sb['threads']]
        assert len(sa['syscalls']) == len(sb['syscalls'])
        for cb, ca in zip(sb['syscalls'], sa['syscalls']):
            assert ca['calls'] == 2 * cb['calls'] and ca['errors'] == 2 * cb['errors']
            for hk in SYSCALL_HISTS:
                assert _doubled(cb[hk], ca[hk]), (sb['name'], cb['name'], hk)
        for pb, pa in zip(sb['cpu'], sa['cpu']):
            assert pa['instructions'] == 2 * pb['instructions']
            assert pa['mix'] == {k: 2 * v for k, v in pb['mix'].items()}
        if 'observed' in sb and sb['observed'].get('throughput_qps') is not None:
            assert sa['observed']['throughput_qps'] == pytest.approx(
                sb['observed']['throughput_qps'])
    sample.validate()


def test_merge_self(sample):
    n = sample.get('services[0].requests.count')
    sample.merge(sample)
    assert sample.get('services[0].requests.count') == 2 * n


def test_merge_copies_unmatched(sample):
    other = Model()
    o = other.add_service('only-in-src', framing='raw')
    o.requests.count = 7
    names = sample.services
    sample.merge(other)
    assert sample.services == names + ['only-in-src']
    assert sample.get('services[only-in-src].requests.count') == 7


def test_merge_mismatch_leaves_dst(sample, sample_bytes):
    other = Model.from_bytes(sample_bytes)
    s = other.service(0)
    s.framing = 'resp' if s.framing != 'resp' else 'http1'
    before = sample.to_bytes()
    with pytest.raises(ditto.MismatchError) as ei:
        sample.merge(other)
    assert 'framing' in ei.value.message
    assert sample.to_bytes() == before


def test_merge_overflow_leaves_dst(sample, sample_bytes):
    d = mpack.unpackb(sample_bytes)
    d['services'][-1]['requests']['count'] = (1 << 64) - 1
    other = Model.from_bytes(mpack.packb(d))
    before = sample.to_bytes()
    with pytest.raises(ditto.DittoError) as ei:
        sample.merge(other)
    assert ei.value.code == -errno.EOVERFLOW
    assert 'requests.count' in ei.value.message
    assert sample.to_bytes() == before


# --- compare ----------------------------------------------------------------

def test_compare_identical(sample, sample_bytes):
    other = Model.from_bytes(sample_bytes)
    res = sample.compare(other)
    assert isinstance(res, ditto.Comparison) and len(res) > 0
    assert all(isinstance(m, ditto.Metric) for m in res)
    assert [m for m in res if m.error != 0] == []
    kinds = {m.kind for m in res}
    assert kinds == {'scalar', 'distribution'}
    assert res.max_error == 0
    assert len({m.path for m in res}) == len(res)
    assert sample.compare(sample) == res
    assert sample.compare(other, min_error=1e-9) == []


def test_compare_modified(sample, sample_bytes, sample_json):
    si, sj = busy_service(sample_json)
    ci, _ = first_with(sj['syscalls'], lambda c: c['calls'] > 0, 'syscall with calls')
    clone = Model.from_bytes(sample_bytes)
    c = clone.service(si).syscalls[ci]
    c.calls = 3 * c.calls
    res = sample.compare(clone)
    changed = [m for m in res if m.error > 0]
    assert changed
    tag = 'services[%s].syscalls[%s]' % (sj['name'], c.key)
    per_req = [m for m in changed if m.path.startswith(tag) and m.path.endswith('per_request')]
    assert len(per_req) == 1, [m.path for m in changed]
    m = per_req[0]
    assert m.kind == 'scalar'
    assert m.b == pytest.approx(3 * m.a) and m.error == pytest.approx(2.0)
    assert res.max_error == max(x.error for x in res)
    big = sample.compare(clone, min_error=0.5)
    assert m in big and all(x.error > 0.5 for x in big)

    clone.add_service('extra-service')
    res = sample.compare(clone)
    assert any(x.kind == 'only_b' and 'extra-service' in x.path and x.error == 1 for x in res)
    res = clone.compare(sample)
    assert any(x.kind == 'only_a' and 'extra-service' in x.path and x.error == 1 for x in res)


def test_compare_absent_histogram(sample_bytes, sample_json):
    """A histogram missing on one side compares as an empty one of its kind
    (distance 1 from a non-empty one), for latency (p50/p99) and size (mean)
    histograms alike, in both directions."""
    si, sj = busy_service(sample_json)
    ci, cj = first_with(sj['syscalls'], lambda c: c['latency_ns']['total'] > 0
                        and c['size']['total'] > 0, 'syscall with latency and size')
    d = mpack.unpackb(sample_bytes)
    del d['services'][si]['syscalls'][ci]['latency_ns']
    del d['services'][si]['syscalls'][ci]['size']
    orig = Model.from_bytes(sample_bytes)
    holed = Model.from_bytes(mpack.packb(d))
    tag = 'services[%s].syscalls[%s:%s:%s].' % (sj['name'], cj['thread_class'], cj['name'],
                                               cj['fd_kind'])
    for res, full in ((orig.compare(holed), 'a'), (holed.compare(orig), 'b')):
        by_path = {m.path: m for m in res}
        for hk in ('latency_ns', 'size'):
            m = by_path[tag + hk]
            assert m.kind == 'distribution' and m.error == 1
            assert getattr(m, full) == cj[hk]['total']
            assert getattr(m, 'b' if full == 'a' else 'a') == 0
        assert by_path[tag + 'latency_ns.p50'].error == 1
        assert by_path[tag + 'size.mean'].error == 1


# --- unknown keys -----------------------------------------------------------

def test_unknown_keys_kept(sample_bytes):
    d = mpack.unpackb(sample_bytes)
    future = {'n': 5, 'list': [1, -2, 'three', 2.5, None, True], 'blob': b'\x00\x01\xff',
              'ext': mpack.Ext(7, b'abcd')}
    d['x_future'] = future
    d['services'][0]['x_note'] = 'kept'
    m = Model.from_bytes(mpack.packb(d))
    assert m.get('x_future.n') == 5
    assert m.get('x_future.list') == [1, -2, 'three', 2.5, None, True]
    assert m.get('x_future.list[1]') == -2
    assert m.get_type('x_future.list[1]') == ditto._lib.VALUE_INT
    assert m.get('x_future.list[4]') is None and m.get('x_future.list[5]') is True
    assert m.get('x_future.blob') == b'\x00\x01\xff'
    assert m.get_type('x_future.blob') == ditto._lib.VALUE_BINARY
    assert m.get_len('x_future.blob') == 3
    assert m.get('services[0].x_note') == 'kept'
    assert m.json()['x_future']['blob']['$bin'].lower() == '0001ff'
    for again in (m.to_bytes(), m.copy().to_bytes()):
        back = mpack.unpackb(again)
        assert back['x_future'] == future
        assert back['services'][0]['x_note'] == 'kept'


def test_after_response_ns_round_trips(tmp_path):
    """requests.after_response_ns: log-linear, kept through save and load."""
    m = Model()
    r = m.add_service('x').requests
    r.after_response_ns.add(250000, 40)
    path = str(tmp_path / 'after.msgpack')
    m.save(path)
    h = Model.load(path).service(0).requests.after_response_ns
    assert h.total == 40 and h.kind == 'loglin'
    assert all(lo <= 250000 <= hi for lo, hi, _ in h.buckets)
