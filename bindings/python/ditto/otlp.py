# SPDX-License-Identifier: MIT
"""The OTLP/HTTP receiver (ditto_otlp_receiver_*, profile.h): an
instrumented application exports its spans to libditto during a profile
the way it exports them to a collector.

    with ditto.OtlpReceiver('127.0.0.1:0') as r:
        os.environ['OTEL_EXPORTER_OTLP_ENDPOINT'] = 'http://127.0.0.1:%d' % r.port
        ... run the application under load ...
        r.finish(model)       # the spans become graph edges of source "traces"

ditto.profile(pid, duration, otlp_listen='127.0.0.1:4318') does the same
around a profile window.
"""

import ctypes
from ctypes import c_void_p

from . import _lib
from ._lib import lib
from .errors import check


class OtlpReceiver:
    """Listens on listen ("HOST:PORT", port 0 for any free one; loopback
    unless allow_remote) from construction until stop(), finish() or
    close(). Limits and answers: see the README's "Receiving spans live"."""

    def __init__(self, listen='127.0.0.1:4318', max_body=0, max_buffered=0,
                 max_connections=0, timeout=0.0, max_spans=0, allow_remote=False):
        self._ptr = None
        opts = _lib.make_opts(_lib.OtlpOpts, max_body=int(max_body),
                              max_buffered=int(max_buffered),
                              max_connections=int(max_connections), timeout_s=float(timeout),
                              max_spans=int(max_spans), allow_remote=bool(allow_remote))
        ptr = c_void_p()
        check(lib.ditto_otlp_receiver_start(listen.encode() if listen else None,
                                            ctypes.byref(opts), ctypes.byref(ptr)))
        self._ptr = ptr

    def _p(self):
        if not self._ptr:
            raise ValueError('receiver is closed')
        return self._ptr

    @property
    def port(self):
        """The port it listens on (the one chosen for port 0)."""
        return lib.ditto_otlp_receiver_port(self._p())

    def stats(self):
        """Counts so far: a dict of connections, requests, accepted, spans,
        spans_rejected, and the refusals by answer (bad_request 400,
        not_found 404, bad_method 405, length_required 411, too_large
        413, bad_media_type 415, head_too_large 431, busy 503) and
        timeouts."""
        st = _lib.make_opts(_lib.OtlpStats)
        check(lib.ditto_otlp_receiver_stats(self._p(), ctypes.byref(st)))
        return {n: getattr(st, n) for n in _lib.OTLP_STAT_NAMES}

    def stop(self):
        """Stop receiving; the spans so far are kept for finish()."""
        lib.ditto_otlp_receiver_stop(self._p())

    def finish(self, model, uncorrected=False):
        """Stop and add the spans to model's graph (call counts scaled by
        the declared sampling ratio unless uncorrected)."""
        check(lib.ditto_otlp_receiver_finish(self._p(), model._p, bool(uncorrected)))

    def close(self):
        if getattr(self, '_ptr', None):
            lib.ditto_otlp_receiver_free(self._ptr)
            self._ptr = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()
