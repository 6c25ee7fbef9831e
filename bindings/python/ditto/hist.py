# SPDX-License-Identifier: MIT
"""struct ditto_hist: the one histogram type of the model."""

import errno
import math
from ctypes import byref, c_uint64

from . import _lib
from ._lib import lib
from .errors import MismatchError, check, null_error

__all__ = ['Hist', 'KINDS']

KINDS = {'log2': _lib.HIST_LOG2, 'exact': _lib.HIST_EXACT, 'loglin': _lib.HIST_LOGLIN}
KIND_NAMES = {v: k for k, v in KINDS.items()}

U64_MAX = (1 << 64) - 1


def _kind(kind):
    if isinstance(kind, str):
        try:
            return KINDS[kind]
        except KeyError:
            raise ValueError('unknown histogram kind %r (one of %s)'
                             % (kind, ', '.join(KINDS))) from None
    return int(kind)


def _u64(name, v):
    v = int(v)
    if not 0 <= v <= U64_MAX:
        raise OverflowError('%s %d does not fit in 64 unsigned bits' % (name, v))
    return v


class Hist:
    """A histogram of counts: kind 'log2', 'exact' or 'loglin' (precision 1..8,
    0 meaning 4).

    A Hist made here owns its C object. One taken from a model element
    (Syscall.size, Requests.request_bytes, ...) is borrowed: it writes
    through to the model and keeps the model alive.
    """

    _free = staticmethod(lib.ditto_hist_free)

    def __init__(self, kind='log2', precision=0):
        ptr = lib.ditto_hist_new(_kind(kind), int(precision))
        if not ptr:
            raise null_error(-errno.EINVAL)  # bad kind or precision
        self._ptr = ptr
        self._owner = None

    @classmethod
    def new(cls, kind='log2', precision=0):
        return cls(kind, precision)

    @classmethod
    def _wrap(cls, ptr, owner=None):
        """Wrap a C histogram: owned when owner is None, else borrowed from owner."""
        h = cls.__new__(cls)
        h._ptr = ptr
        h._owner = owner
        return h

    def __del__(self):
        if getattr(self, '_owner', True) is None and getattr(self, '_ptr', None):
            self._free(self._ptr)
            self._ptr = None

    @property
    def _p(self):
        if self._owner is not None:
            self._owner._p  # raises if the owning model was closed
        if not self._ptr:
            raise ValueError('histogram is freed')
        return self._ptr

    @property
    def _wp(self):
        """The C histogram to write into (a model's field creates it here)."""
        return self._p

    @property
    def borrowed(self):
        return self._owner is not None

    def copy(self):
        """An owned deep copy."""
        ptr = lib.ditto_hist_dup(self._p)
        if not ptr:
            raise null_error()
        return Hist._wrap(ptr)

    __copy__ = copy

    def __deepcopy__(self, memo):
        return self.copy()

    @property
    def kind(self):
        k = lib.ditto_hist_kind(self._p)
        return KIND_NAMES.get(k, k)

    @property
    def precision(self):
        return lib.ditto_hist_precision(self._p)

    def add(self, value, count=1):
        """Count `count` occurrences of `value` (both unsigned 64-bit)."""
        check(lib.ditto_hist_add(self._wp, _u64('value', value), _u64('count', count)))
        return self

    def merge(self, other):
        """Add other's counts into this histogram (MismatchError if kinds differ)."""
        dst = self._wp
        if other is self or other._p == dst:
            other = other.copy()
        check(lib.ditto_hist_merge(dst, other._p))
        return self

    def clear(self):
        # An absent model field is empty already: nothing to create.
        lib.ditto_hist_clear(self._p)
        return self

    @property
    def total(self):
        return lib.ditto_hist_total(self._p)

    def __len__(self):
        """Number of non-empty buckets."""
        return lib.ditto_hist_bucket_count(self._p)

    def bucket(self, i):
        lo, hi, n = c_uint64(), c_uint64(), c_uint64()
        check(lib.ditto_hist_bucket(self._p, i, byref(lo), byref(hi), byref(n)))
        return (lo.value, hi.value, n.value)

    @property
    def buckets(self):
        """Non-empty buckets, ascending, as (lo, hi, count) with hi inclusive."""
        return [self.bucket(i) for i in range(len(self))]

    def __iter__(self):
        return iter(self.buckets)

    def quantile(self, q):
        q = float(q)
        if math.isnan(q) or not 0.0 <= q <= 1.0:
            raise ValueError('quantile %r not in [0, 1]' % q)
        return lib.ditto_hist_quantile(self._p, q)

    @property
    def mean(self):
        return lib.ditto_hist_mean(self._p)

    def distance(self, other):
        """Total-variation distance in [0, 1] of the normalised distributions."""
        d = lib.ditto_hist_distance(self._p, other._p)
        if d < 0:
            raise MismatchError(-_lib.EMISMATCH,
                                'histograms of different kinds or precisions: %s/%d and %s/%d'
                                % (self.kind, self.precision, other.kind, other.precision))
        return d

    def to_dict(self):
        """{kind, precision, total, buckets: [(lo, hi, count), ...]}."""
        return {'kind': self.kind, 'precision': self.precision, 'total': self.total,
                'buckets': self.buckets}

    def __eq__(self, other):
        if not isinstance(other, Hist):
            return NotImplemented
        return (self.kind == other.kind and self.precision == other.precision
                and self.buckets == other.buckets)

    __hash__ = None

    def __repr__(self):
        return '<ditto.Hist %s total=%d buckets=%d%s>' % (
            self.kind, self.total, len(self), ' borrowed' if self.borrowed else '')
