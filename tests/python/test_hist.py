# SPDX-License-Identifier: MIT
"""ditto.Hist over struct ditto_hist."""

import copy
import errno

import pytest

import ditto
from ditto import Hist

U64_MAX = (1 << 64) - 1


def test_empty():
    for kind in ('log2', 'exact', 'loglin'):
        h = Hist.new(kind)
        assert h.kind == kind
        assert h.total == 0 and len(h) == 0 and h.buckets == []
        assert h.quantile(0.5) == 0 and h.mean == 0


def test_log2_buckets():
    h = Hist('log2')
    for v in (0, 1, 2, 3, 5, 7, 8, 1 << 63, U64_MAX):
        h.add(v)
    assert h.buckets == [(0, 0, 1), (1, 1, 1), (2, 3, 2), (4, 7, 2), (8, 15, 1),
                         (1 << 63, U64_MAX, 2)]
    assert h.total == 9 and len(h) == 6
    assert list(h) == h.buckets
    assert h.bucket(3) == (4, 7, 2)
    with pytest.raises(ditto.NotFoundError):
        h.bucket(6)


def test_exact():
    h = Hist('exact')
    h.add(3, 2).add(7)
    assert h.buckets == [(3, 3, 2), (7, 7, 1)]
    assert h.quantile(0) == 3 and h.quantile(1) == 7
    assert h.mean == pytest.approx((3 * 2 + 7) / 3)


def test_loglin_precision():
    assert Hist('loglin').precision == 4
    for p in (1, 4, 8):
        h = Hist('loglin', p)
        assert h.precision == p
        values = [0, 1, 2, 15, 16, 17, 100, 1000, 12345, 10 ** 6, 10 ** 12, 1 << 40, U64_MAX]
        for v in values:
            h.clear()
            h.add(v)
            [(lo, hi, n)] = h.buckets
            assert lo <= v <= hi and n == 1, (p, v, lo, hi)
            assert hi - lo + 1 <= max(1, v >> p), (p, v, lo, hi)


@pytest.mark.parametrize('kind,precision', [(0, 0), (99, 0), ('loglin', 9)])
def test_bad_arguments(kind, precision):
    with pytest.raises(ditto.DittoError):
        Hist(kind, precision)


def test_unknown_kind_name():
    with pytest.raises(ValueError):
        Hist('linear')


def test_quantile_mean():
    h = Hist('log2')
    h.add(5, 100)
    assert 4 <= h.quantile(0.5) <= 7
    assert h.quantile(0) <= h.quantile(0.5) <= h.quantile(1)
    assert h.mean == pytest.approx(5.5)
    e = Hist('exact')
    for v in range(1, 11):
        e.add(v)
    qs = [e.quantile(q / 10) for q in range(11)]
    assert qs == sorted(qs) and qs[0] == 1 and qs[-1] == 10
    for bad in (-0.1, 1.5, float('nan')):
        with pytest.raises(ValueError):
            e.quantile(bad)


def test_distance():
    a, b = Hist('exact'), Hist('exact')
    assert a.distance(b) == 0
    a.add(1)
    assert a.distance(b) == 1 and b.distance(a) == 1
    b.add(1, 10)
    assert a.distance(b) == 0  # normalised
    c, d = Hist('exact'), Hist('exact')
    c.add(1).add(2)
    d.add(2).add(3)
    assert c.distance(d) == pytest.approx(0.5)
    e = Hist('exact')
    e.add(9)
    assert c.distance(e) == 1
    with pytest.raises(ditto.MismatchError):
        c.distance(Hist('log2').add(1))
    with pytest.raises(ditto.MismatchError):
        Hist('loglin', 2).add(100).distance(Hist('loglin', 3).add(100))


def test_merge():
    a, b = Hist('log2'), Hist('log2')
    a.add(5, 3)
    b.add(5, 2).add(100)
    assert a.merge(b) is a
    assert a.buckets == [(4, 7, 5), (64, 127, 1)] and a.total == 6
    assert b.total == 3
    a.merge(a)
    assert a.total == 12
    with pytest.raises(ditto.MismatchError):
        a.merge(Hist('exact').add(5))
    with pytest.raises(ditto.MismatchError):
        Hist('loglin', 2).merge(Hist('loglin', 3).add(100))
    assert a.total == 12


def test_overflow():
    h = Hist('exact')
    h.add(1, U64_MAX)
    with pytest.raises(ditto.DittoError) as ei:
        h.add(1, 1)
    assert ei.value.code == -errno.EOVERFLOW
    assert ei.value.message
    with pytest.raises(OverflowError):
        h.add(-1)
    with pytest.raises(OverflowError):
        h.add(1 << 64)
    with pytest.raises(OverflowError):
        h.add(1, 1 << 64)


def test_overflow_leaves_hist_unchanged():
    """A refused add or merge must not leave a wrapped count behind."""
    h = Hist('exact')
    h.add(1, U64_MAX).add(2, 5)
    with pytest.raises(ditto.DittoError):
        h.add(1, 2)
    assert h.buckets == [(1, 1, U64_MAX), (2, 2, 5)]
    src = Hist('exact')
    src.add(2, 1).add(1, 1)
    with pytest.raises(ditto.DittoError) as ei:
        h.merge(src)
    assert ei.value.code == -errno.EOVERFLOW
    assert h.buckets == [(1, 1, U64_MAX), (2, 2, 5)]


def test_copy_clear_eq():
    h = Hist('loglin', 3)
    h.add(1000, 4).add(7)
    c = copy.copy(h)
    assert c == h and c is not h and not c.borrowed
    assert copy.deepcopy(h) == h
    c.add(1)
    assert c != h and h.total == 5
    h.clear()
    assert h.total == 0 and h.buckets == [] and h.kind == 'loglin' and h.precision == 3
    assert h.to_dict() == {'kind': 'loglin', 'precision': 3, 'total': 0, 'buckets': []}
    assert 'loglin' in repr(h)


def test_model_hist_is_borrowed():
    m = ditto.Model()
    s = m.add_service('svc')
    s.add_thread('main', count=1)
    c = s.add_syscall('main', 'read', 'tcp')
    c.size.add(64, 3)
    assert c.size.borrowed
    assert m.get('services[svc].syscalls[main:read:tcp].size')['buckets'] == [(64, 127, 3)]
    owned = m.hist('services[svc].syscalls[main:read:tcp].size')
    assert owned == c.size and not owned.borrowed
    c.size.clear()
    assert m.get('services[svc].syscalls[main:read:tcp].size')['total'] == 0
