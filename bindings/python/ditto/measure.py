# SPDX-License-Identifier: MIT
"""Measuring a service command under load (tune.h, ditto_measure).

    m = ditto.measure(['redis-server', '--port', '6390', '--save', ''], 6390,
                      framing='resp', backends=('cachegrind', 'profile'))
    print(m['insts_per_request'], m['d1_miss_rate'])

The command is started once per backend, loaded in closed loop once it
accepts, and stopped with SIGTERM; it is never left running.
"""

import ctypes
from ctypes import byref, c_char_p, c_double, c_int, c_void_p

from . import _lib
from ._lib import lib
from .errors import check

__all__ = ['measure', 'counters_available', 'BACKENDS']

BACKENDS = {
    'cachegrind': _lib.BACKEND_CACHEGRIND,
    'profile': _lib.BACKEND_PROFILE,
    'counters': _lib.BACKEND_COUNTERS,
    'cpu': _lib.BACKEND_CPU,
}


def _framing(framing):
    if framing is None or isinstance(framing, int):
        return int(framing or 0)
    v = c_int()
    check(lib.ditto_framing_parse(_lib.encode(framing), byref(v)))
    return v.value


def _backends(names):
    if isinstance(names, str):
        names = names.split(',')
    bits = 0
    for n in names:
        if n not in BACKENDS:
            raise ValueError('unknown backend %r (one of %s)' % (n, ', '.join(BACKENDS)))
        bits |= BACKENDS[n]
    return bits


def _metrics(ptr):
    out = {}
    name, value = c_char_p(), c_double()
    for i in range(lib.ditto_metrics_count(ptr)):
        check(lib.ditto_metrics_entry(ptr, i, byref(name), byref(value)))
        out[_lib.decode(name.value)] = value.value
    return out


def measure(argv, port, framing=None, model=None, backends=('cachegrind',), requests=2000,
            connections=4, host=None, startup_timeout=0, service=None, duration=0,
            work_dir=None):
    """Start argv (a service listening on port that ends on SIGTERM), load
    it with requests answered requests (or for duration seconds) over
    connections, and measure it with each backend ('cachegrind', 'profile',
    'counters'). framing is a name ('resp', 'length-prefixed', ...) unless
    model (a Model) gives it. Returns {metric: value}, in the order the
    backends gave them. Raises DittoError: code -ENOENT (no such command,
    or no valgrind), -ETIMEDOUT (it never accepted), -ECHILD (it exited;
    the message has its status and last output lines)."""
    load = _lib.make_opts(_lib.LoadgenOpts, port=int(port), framing=_framing(framing),
                          connections=int(connections), requests=int(requests),
                          duration_s=float(duration))
    # ctypes keeps what is assigned to c_char_p fields and arrays alive.
    if host:
        load.host = _lib.encode(host)
    if service:
        load.service = _lib.encode(service)
    if model is not None:
        load.model = model._p
    args = (c_char_p * (len(argv) + 1))(*[_lib.encode(a) for a in argv], None)
    opts = _lib.make_opts(_lib.MeasureOpts, backends=_backends(backends), argv=args,
                          load=ctypes.pointer(load), startup_timeout_s=float(startup_timeout))
    if work_dir:
        opts.work_dir = _lib.encode(str(work_dir))
    ptr = c_void_p()
    check(lib.ditto_measure(byref(opts), byref(ptr)))
    try:
        return _metrics(ptr)
    finally:
        lib.ditto_metrics_free(ptr)


def counters_available():
    """(True, '') when this host has hardware counters, else (False, why)."""
    if lib.ditto_counters_available():
        return True, ''
    return False, _lib.decode(lib.ditto_last_error()) or ''
