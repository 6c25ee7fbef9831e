# SPDX-License-Identifier: MIT
"""Tune stage: drive a service with requests and measure its latency.

    r = ditto.load(6379, framing='resp', requests=100000)
    print(r['achieved_qps'], r['latency_ns']['p99'])
"""

import json
from ctypes import byref, c_int, c_void_p

from . import _lib
from ._lib import lib
from .errors import LoadError, check, error
from .model import Model

_MODES = {'closed': 1, 'poisson': 2, 'fixed': 3}


def _framing(framing):
    if framing is None:
        return 0
    if isinstance(framing, int):
        return framing
    f = c_int()
    check(lib.ditto_framing_parse(_lib.encode(framing), byref(f)))
    return f.value


def load(port, framing=None, host=None, mode='closed', qps=0, connections=8, duration=0,
         requests=0, warmup=0, value_bytes=0, write_share=None, model=None, service=None,
         seed=0, timeout=0, deadline=0, path=None):
    """Run ditto_load_run() and return its result as a dict: offered_qps,
    achieved_qps, completed, errors, errors_by_kind {refused, reset, closed,
    timeout, unparseable, error_reply, other}, elapsed_s, bytes_sent,
    bytes_received, latency_ns {p50, p90, p99, p99.9, max, mean}.

    framing is a name ('resp', 'memcache-text', 'memcache-binary', 'http1',
    'length-prefixed', 'raw', 'postgres'); None takes the model's. model is a Model or a
    path. mode is 'closed', 'poisson' or 'fixed' (open loop at qps).
    write_share None is the library's default (0.5); 0 sends no writes.
    path is the target of HTTP requests (None: '/').
    Zeros elsewhere take the library's defaults (5 s unless requests is
    set; a 5 s answer timeout, or the whole run if shorter; value size from
    the model or 32 bytes; a deadline, with requests and no duration, of
    60 s plus 10 ms a request). A service that refuses the connections
    raises DittoError (code -ECONNREFUSED). A run that answers no request
    (each one failed, or none came back: -EIO) or that its deadline ends
    (-ETIMEDOUT) raises LoadError, whose result is the dict all the same;
    a run with some answers returns, its failures counted by kind."""
    if mode not in _MODES:
        raise ValueError("mode must be 'closed', 'poisson' or 'fixed', not %r" % (mode,))
    if model is not None and not isinstance(model, Model):
        model = Model.load(model, validate=False)
    share = 0.0 if write_share is None else (-1.0 if write_share == 0 else float(write_share))
    o = _lib.make_opts(_lib.LoadgenOpts, host=_lib.encode(host) if host else None,
                       port=int(port), framing=_framing(framing), mode=_MODES[mode],
                       qps=float(qps), connections=int(connections), duration_s=float(duration),
                       requests=int(requests), warmup_s=float(warmup),
                       value_bytes=int(value_bytes), write_share=share,
                       model=model._p if model is not None else None,
                       service=_lib.encode(service) if service else None, seed=int(seed),
                       timeout_s=float(timeout), deadline_s=float(deadline),
                       http_path=_lib.encode(path) if path else None)
    res = c_void_p()
    rc = lib.ditto_load_run(byref(o), byref(res))
    # a failed run may still have a result: read its message first
    failed = error(rc) if rc < 0 else None
    if failed is not None and not res.value:
        raise failed
    try:
        out = c_void_p()
        check(lib.ditto_load_result_to_json(res, byref(out)))
        result = json.loads(_lib.take_string(out.value).decode())
    finally:
        lib.ditto_load_result_free(res)
    if failed is not None:
        raise LoadError(failed.code, failed.message, result=result)
    return result
