# SPDX-License-Identifier: MIT
"""Error reporting of the binding: codes, names, messages, exception classes."""

import ctypes
import json
import errno

import pytest

import ditto
from ditto import Model, _lib

import mpack
from conftest import first_with

CLASSES = {
    -_lib.ECORRUPT: ditto.CorruptError,
    -_lib.ESCHEMA: ditto.SchemaError,
    -_lib.EINVALID: ditto.InvalidError,
    -_lib.ELIMIT: ditto.LimitError,
    -_lib.EMISMATCH: ditto.MismatchError,
    -_lib.ENOTFOUND: ditto.NotFoundError,
    -_lib.ETYPE: ditto.DittoTypeError,
    -_lib.EOPTS: ditto.OptionsError,
}


def test_strerror():
    names = [ditto.strerror(c) for c in CLASSES]
    assert all(names) and len(set(names)) == len(names)
    assert 'unknown error' not in names
    assert ditto.strerror(_lib.ECORRUPT) == ditto.strerror(-_lib.ECORRUPT)
    assert ditto.strerror(-123456) == 'unknown error'
    assert ditto.strerror(-errno.ENOMEM) not in ('', 'unknown error')


def test_error_classes():
    for code, cls in CLASSES.items():
        assert issubclass(cls, ditto.DittoError)
        e = ditto.errors.error(code, 'ctx: what')
        assert type(e) is cls and e.code == code and e.message == 'ctx: what'
        assert e.name == ditto.strerror(code)
        assert 'ctx: what' in str(e) and e.name in str(e)
    e = ditto.errors.error(-errno.ENOENT, 'x')
    assert type(e) is ditto.DittoError and e.code == -errno.ENOENT


def test_error_attributes():
    with pytest.raises(ditto.CorruptError) as ei:
        Model.from_bytes(b'\xc1')
    e = ei.value
    assert isinstance(e, ditto.DittoError)
    assert e.code == -_lib.ECORRUPT
    assert e.name == ditto.strerror(e.code)
    assert e.message and e.message in str(e)


@pytest.mark.parametrize('data', [b'', b'\xc1', b'\x92\x01', b'\x81\xa6schema',
                                  b'not msgpack at all'],
                         ids=['empty', 'never-used', 'truncated-array', 'truncated-map',
                              'trailing'])
def test_corrupt(data):
    for validate in (True, False):
        with pytest.raises(ditto.CorruptError) as ei:
            Model.from_bytes(data, validate=validate)
        assert ei.value.message


@pytest.mark.parametrize('data', [b'\xdf\xff\xff\xff\xff', b'\x81\xa1x\xdd\xff\xff\xff\xff',
                                  b'\x81\xa1x\xdb\xff\xff\xff\xff',
                                  b'\x81\xa1x\xc6\xff\xff\xff\xff'],
                         ids=['map32', 'array32', 'str32', 'bin32'])
def test_huge_declared_lengths(data):
    """Lengths past the end of the input: refused without allocating them."""
    with pytest.raises((ditto.CorruptError, ditto.LimitError)) as ei:
        Model.from_bytes(data, validate=False)
    assert ei.value.message


def test_not_a_map():
    for data in (b'\x01', b'\x90', b'\xa3abc'):
        with pytest.raises((ditto.CorruptError, ditto.InvalidError)):
            Model.from_bytes(data)


def test_empty_map_does_not_crash():
    try:
        Model.from_bytes(b'\x80')
    except ditto.DittoError as e:
        assert e.message


def test_truncated(sample_bytes):
    n = len(sample_bytes)
    cuts = sorted(set(list(range(min(n, 64))) + [n * k // 101 for k in range(101)] + [n - 1]))
    for cut in cuts:
        with pytest.raises(ditto.CorruptError) as ei:
            Model.from_bytes(sample_bytes[:cut], validate=False)
        assert ei.value.message, cut


def test_trailing_bytes(sample_bytes):
    for tail in (b'\x00', b'\xc0', sample_bytes):
        with pytest.raises(ditto.CorruptError):
            Model.from_bytes(sample_bytes + tail)


def test_load_corrupt_file(tmp_path, sample_bytes):
    p = tmp_path / 'trunc.model'
    p.write_bytes(sample_bytes[:len(sample_bytes) // 2])
    with pytest.raises(ditto.CorruptError) as ei:
        Model.load(p)
    assert 'trunc.model' in ei.value.message


@pytest.mark.parametrize('schema', [2, 99, 1000])
def test_schema_newer(sample_bytes, schema):
    d = mpack.unpackb(sample_bytes)
    d['schema'] = schema
    for validate in (True, False):
        with pytest.raises(ditto.SchemaError) as ei:
            Model.from_bytes(mpack.packb(d), validate=validate)
        assert 'schema' in ei.value.message.lower()


def test_wrong_type_names_path(sample_bytes):
    d = mpack.unpackb(sample_bytes)
    d['services'][0]['requests']['count'] = 'many'
    for validate in (True, False):  # types are checked even without validation
        with pytest.raises(ditto.InvalidError) as ei:
            Model.from_bytes(mpack.packb(d), validate=validate)
        assert 'services[0].requests.count' in ei.value.message
    d = mpack.unpackb(sample_bytes)
    d['services'][0]['threads'][0]['count'] = -1
    with pytest.raises(ditto.InvalidError) as ei:
        Model.from_bytes(mpack.packb(d))
    assert 'services[0].threads[0].count' in ei.value.message


def test_depth_limit(sample_bytes):
    d = mpack.unpackb(sample_bytes)
    nested = 0
    for _ in range(100):
        nested = [nested]
    d['x_deep'] = nested
    b = mpack.packb(d)
    with pytest.raises(ditto.LimitError) as ei:
        Model.from_bytes(b)
    assert ei.value.message
    assert Model.from_bytes(b, max_depth=200).get_len('x_deep') == 1
    d['x_deep'] = [[[[1]]]]
    assert Model.from_bytes(mpack.packb(d)).get('x_deep') == [[[[1]]]]


def test_size_limit(sample_bytes, tmp_path):
    n = len(sample_bytes)
    with pytest.raises(ditto.LimitError) as ei:
        Model.from_bytes(sample_bytes, max_bytes=n - 1)
    assert ei.value.message
    Model.from_bytes(sample_bytes, max_bytes=n)
    p = tmp_path / 'm.model'
    p.write_bytes(sample_bytes)
    with pytest.raises(ditto.LimitError):
        Model.load(p, max_bytes=100)


def test_invalid_rules(sample_bytes):
    d = mpack.unpackb(sample_bytes)
    sc = d['services'][0]['syscalls'][0]
    sc['errors'] = sc['calls'] + 1
    sc['thread_class'] = 'no-such-thread'
    edges = d.get('graph', {}).get('edges') or []
    if edges:
        edges[0]['to'] = 'no-such-node'
    b = mpack.packb(d)
    with pytest.raises(ditto.InvalidError) as ei:
        Model.from_bytes(b)
    assert 'services[0].syscalls[0]' in ei.value.message or 'graph.edges[0]' in ei.value.message
    m = Model.from_bytes(b, validate=False)
    with pytest.raises(ditto.InvalidError) as ei:
        m.validate()
    probs = m.problems()
    assert len(probs) >= 2 + bool(edges), probs
    assert all(path and msg for path, msg in probs), probs
    assert probs[0][0] in ei.value.message
    paths = [p for p, _ in probs]
    assert 'services[0].syscalls[0].errors' in paths
    assert 'services[0].syscalls[0].thread_class' in paths
    if edges:
        assert 'graph.edges[0].to' in paths
    assert not m.is_valid()


def test_invalid_histogram(sample_bytes):
    """Histograms travel as {kind, [precision], buckets: [[lo, count], ...]}:
    a lo that does not start a bucket of the kind, buckets out of order and
    zero counts are refused with the histogram's path."""
    d = mpack.unpackb(sample_bytes)
    si, s = first_with(d['services'], lambda s: s['requests']['request_bytes']['buckets'],
                       'request_bytes with buckets')
    path = 'services[%d].requests.request_bytes' % si
    h = s['requests']['request_bytes']
    assert h['kind'] == 'log2'
    for buckets in ([[3, 1]], [[8, 1], [4, 1]], [[4, 0]], [[4]], [['4', 1]]):
        h['buckets'] = buckets
        with pytest.raises(ditto.InvalidError) as ei:
            Model.from_bytes(mpack.packb(d), validate=False)
        assert path in ei.value.message, (buckets, ei.value.message)
    h['buckets'] = [[4, 1], [8, 2]]
    m = Model.from_bytes(mpack.packb(d))
    assert m.get(path)['buckets'] == [(4, 7, 1), (8, 15, 2)]


def test_options_struct_checked():
    """The binding's structs match the C ones: a newer-looking struct with a
    non-zero unknown field is refused, a zero one is accepted."""

    class NewerJsonOpts(ctypes.Structure):
        _fields_ = [('sz', ctypes.c_size_t), ('pretty', ctypes.c_bool),
                    ('future', ctypes.c_uint64)]

    m = Model()
    for future, ok in ((0, True), (1, False)):
        o = _lib.make_opts(NewerJsonOpts, pretty=True, future=future)
        out = ctypes.c_void_p()
        rc = _lib.lib.ditto_model_to_json(m._p, ctypes.cast(ctypes.byref(o),
                                                            ctypes.POINTER(_lib.JsonOpts)),
                                          ctypes.byref(out))
        _lib.take_string(out.value)
        if ok:
            assert rc == 0
        else:
            assert rc == -_lib.EOPTS
            assert ditto.last_error()
    o = _lib.make_opts(_lib.JsonOpts)
    o.sz = 3
    out = ctypes.c_void_p()
    assert _lib.lib.ditto_model_to_json(m._p, ctypes.byref(o), ctypes.byref(out)) == -_lib.EOPTS
    _lib.take_string(out.value)


def test_not_found_messages(sample):
    with pytest.raises(ditto.NotFoundError) as ei:
        sample.get('services[0].nosuch')
    assert ei.value.code == -_lib.ENOTFOUND and ei.value.message


def _decode_exact(data, validate=False):
    """ditto_model_decode() of a malloc'd copy of exactly len(data) bytes, so
    that a read past the end is caught under AddressSanitizer."""
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    buf = libc.malloc(max(len(data), 1))
    assert buf
    try:
        ctypes.memmove(buf, data, len(data))
        o = _lib.make_opts(_lib.LoadOpts, no_validate=not validate)
        out = ctypes.c_void_p()
        rc = _lib.lib.ditto_model_decode(ctypes.cast(buf, ctypes.c_char_p), len(data),
                                         ctypes.byref(o), ctypes.byref(out))
        if rc == 0:
            assert out.value
            return Model._wrap(out.value)
        assert not out.value  # "On error *out is NULL"
        raise ditto.errors.error(rc)
    finally:
        libc.free(buf)


def test_decode_reads_within_len(sample_bytes):
    n = len(sample_bytes)
    assert _decode_exact(sample_bytes, validate=True).to_bytes() == sample_bytes
    for cut in sorted(set(range(0, n, max(1, n // 300))) | {n - 1}):
        with pytest.raises(ditto.CorruptError):
            _decode_exact(sample_bytes[:cut])


def test_mutated_inputs(sample_bytes):
    """Seeded byte mutations: each input is refused with a DittoError or
    accepted; an accepted model survives the rest of the API."""
    import random
    rng = random.Random(1234)
    ref = Model.from_bytes(sample_bytes)
    accepted = 0
    for i in range(1500):
        b = bytearray(sample_bytes)
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(len(b))
            r = rng.random()
            if r < 0.6:
                b[pos] = rng.randrange(256)
            elif r < 0.8:
                del b[pos:pos + rng.randint(1, 16)]
            else:
                b[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        try:
            m = _decode_exact(bytes(b), validate=bool(i % 2))
        except ditto.DittoError as e:
            assert e.code < 0 and e.message, (i, e)
            continue
        accepted += 1
        m.problems()
        Model.from_bytes(m.to_bytes(), validate=False)
        json.loads(m.to_json())
        ref.compare(m)
        m.compare(ref)
        try:
            m.copy().merge(ref)
        except ditto.DittoError as e:
            assert e.message
    assert accepted > 0
