# SPDX-License-Identifier: MIT
"""Tune stage: the feedback loop that steers a clone towards the original.

    m = ditto.Model.load('redis.msgpack')
    r = ditto.tune(m, 'redis-clone', original=['redis-server', '--port', '6390'],
                   original_port=6390, iterations=4)
    print(r.converged, r.rows)
    m.save('redis.msgpack')      # the knobs and iterations are in the model

Ctrl-C during ditto.tune() stops the loop: the measurement running ends
and the best clone so far is kept in the directory (ditto_tune_opts.stop).
"""

import ctypes
import errno
import json
import signal
import socket
import threading
from ctypes import byref, c_char_p, c_double, c_int, c_uint, c_void_p

from . import _lib
from ._lib import lib
from .errors import check, error

__all__ = ['tune', 'TuneReport']


class TuneReport:
    """The comparison of the original and the best clone (struct
    ditto_tune_report, freed when garbage collected or by close()).

    iterations   iterations run
    converged    every tuned metric ended within its bound
    rows         [{metric, original, clone, error, bound}] (bound 0: the
                 metric is reported, not tuned)
    interrupted  the loop was stopped by Ctrl-C (SIGINT) before its end
    stalls       why tuned metrics did not converge: [{metric, knob, kind,
                 steps, text}], kind 'no_effect' (the knob moved over
                 `steps` steps and the metric did not), 'at_limit' or
                 'unfinished' (still moving when the loop ended)
    verdict      one line: 'converged in 5 iterations; ...' (', but 1 row
                 of the report out of its own: ...' when a checked row
                 is out of its bound) or 'NOT converged after 9
                 iterations: i1_miss_rate ...'
    """

    _STALL_KINDS = {1: 'no_effect', 2: 'at_limit', 3: 'unfinished'}

    _free = staticmethod(lib.ditto_tune_report_free)

    def __init__(self, ptr, interrupted=False):
        self._ptr = ptr
        self.iterations = lib.ditto_tune_report_iterations(ptr)
        self.converged = bool(lib.ditto_tune_report_converged(ptr))
        self.interrupted = bool(interrupted)
        self.rows = []
        name = c_char_p()
        orig, clone, err, bound = c_double(), c_double(), c_double(), c_double()
        for i in range(lib.ditto_tune_report_count(ptr)):
            check(lib.ditto_tune_report_row(ptr, i, byref(name), byref(orig), byref(clone),
                                            byref(err), byref(bound)))
            self.rows.append({'metric': _lib.decode(name.value), 'original': orig.value,
                              'clone': clone.value, 'error': err.value, 'bound': bound.value})
        self.stalls = []
        knob, text, kind, steps = c_char_p(), c_char_p(), c_int(), c_uint()
        for i in range(lib.ditto_tune_report_stall_count(ptr)):
            check(lib.ditto_tune_report_stall(ptr, i, byref(name), byref(knob), byref(kind),
                                              byref(steps), byref(text)))
            self.stalls.append({'metric': _lib.decode(name.value),
                                'knob': _lib.decode(knob.value),
                                'kind': self._STALL_KINDS.get(kind.value, str(kind.value)),
                                'steps': steps.value, 'text': _lib.decode(text.value)})
        self.verdict = _lib.decode(lib.ditto_tune_report_verdict(ptr))

    def __del__(self):
        if getattr(self, '_ptr', None):
            self._free(self._ptr)
            self._ptr = None

    def close(self):
        """Free the C report now; to_json() and plot_svg() then raise
        ValueError (the attributes stay)."""
        self.__del__()

    @property
    def _p(self):
        if not self._ptr:
            raise ValueError('tune report is closed')
        return self._ptr

    def to_json(self):
        """The report as Python data: {converged, iterations, rows, latency}."""
        out = c_void_p()
        check(lib.ditto_tune_report_to_json(self._p, byref(out)))
        return json.loads(_lib.take_string(out.value).decode('utf-8', 'surrogateescape'))

    def plot_svg(self, path):
        """Write the latency percentiles against achieved load, original and
        clone, as an SVG file; returns path. NotFoundError when the loop ran
        without latency=True (no latency points)."""
        check(lib.ditto_tune_report_plot_svg(self._p, _lib.encode(str(path))))
        return str(path)

    def row(self, metric):
        """The row of one metric (KeyError if absent)."""
        for r in self.rows:
            if r['metric'] == metric:
                return r
        raise KeyError(metric)

    def __repr__(self):
        return '<ditto.TuneReport iterations=%d converged=%s rows=%d>' % (
            self.iterations, self.converged, len(self.rows))


class _StopOnSigint:
    """Sets the stop flag of a running C call when SIGINT arrives.

    Python runs its signal handlers only in the main thread between
    bytecodes, never while a ctypes call blocks it; so the handler alone
    would stop nothing until ditto_tune() returned. The C-level handler
    CPython installs also writes the signal number to the wakeup fd, which
    a helper thread reads to set the flag at once. Outside the main thread
    (where handlers cannot be installed), or where SIGINT is ignored (a
    background job), this does nothing."""

    def __init__(self, flag):
        self.flag = flag
        self.interrupted = False
        self._active = False

    def _handler(self, signum, frame):
        self.interrupted = True
        self.flag.value = 1

    def _watch(self):
        while True:
            try:
                data = self._rd.recv(64)
            except InterruptedError:
                continue
            except OSError:
                return
            if not data or 0 in data:
                return
            if signal.SIGINT in data:
                self.interrupted = True
                self.flag.value = 1

    def __enter__(self):
        if threading.current_thread() is not threading.main_thread():
            return self
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            return self
        self._rd, self._wr = socket.socketpair()
        self._wr.setblocking(False)
        try:
            self._old_handler = signal.signal(signal.SIGINT, self._handler)
        except (ValueError, OSError):
            self._rd.close()
            self._wr.close()
            return self
        self._old_fd = signal.set_wakeup_fd(self._wr.fileno(), warn_on_full_buffer=False)
        self._thread = threading.Thread(target=self._watch, name='ditto-tune-sigint',
                                        daemon=True)
        self._thread.start()
        self._active = True
        return self

    def __exit__(self, *exc):
        if not self._active:
            return False
        self._active = False
        signal.set_wakeup_fd(self._old_fd)
        signal.signal(signal.SIGINT, self._old_handler)
        try:
            self._wr.send(b'\0')   # the watcher's end mark (no signal is 0)
        except OSError:
            pass
        self._thread.join()
        self._rd.close()
        self._wr.close()
        return False


def tune(model, dir, original=None, original_port=0, service=None, port=0, iterations=0,
         bound=0, requests=0, connections=0, latency=False, latency_seconds=0, seed=0, cc=None,
         progress=None):
    """Tune one service of model (a ditto.Model, changed in place) with
    ditto_tune(): write the clone into dir, build it, measure it under
    cachegrind, step the knobs (model.knobs) towards the targets, repeat.
    Each iteration is recorded in model.tuning_iterations; at the end the
    best clone is built in dir and its knobs are left in model.knobs.

    original       the command that starts the original (a list of argv
                   strings), listening on original_port (0: the model's
                   first port); None: the model's recorded targets are used
    service        service to clone (None: the first)
    port           port the clone listens on while measured (0: a free one)
    iterations     iterations at most (0: 8)
    bound          relative error bound of the tuned metrics (0: 0.05)
    requests       requests per cachegrind measurement (0: 30000)
    connections    connections of the load (0: 4)
    latency        also load both natively at rising rates for latency rows
                   and TuneReport.plot_svg() (slower); latency_seconds per
                   point (0: 3)
    seed           generator seed (0: 1)
    cc             C compiler for the clone (None: cc)
    progress       callable(iteration, max_error, worst, best, note), called
                   after every iteration (worst: the metric of max_error;
                   best: the clone is the best so far). Exceptions it raises
                   are printed and ignored, as ctypes does for callbacks.

    Returns a TuneReport, also when the loop did not converge: check
    report.converged (report.verdict and report.stalls say why not; the
    CLI exits 3 then). Ctrl-C (SIGINT, when called from the main thread)
    stops the loop and keeps the best clone: the report is returned with
    interrupted=True, or KeyboardInterrupt is raised when no clone had been
    measured yet. Raises DittoError (OptionsError for a missing dir or bad
    options, code -ENOENT without valgrind, -ENOTEMPTY for a dir holding
    other files, ...). When the loop fails after a clone was measured the
    library also gives a report: it is on the exception as .report (else
    .report is None)."""
    argv = _argv(original)
    stop = c_int(0)
    o = _lib.make_opts(_lib.TuneOpts, original_port=int(original_port), port=int(port),
                       max_iterations=int(iterations), bound=float(bound),
                       requests=int(requests), connections=int(connections),
                       latency=bool(latency), latency_s=float(latency_seconds), seed=int(seed))
    # ctypes keeps what is assigned to c_char_p fields and arrays alive; the
    # locals below keep the argv array, callback and stop flag alive too.
    if service:
        o.service = _lib.encode(service)
    fn = _fill(o, dir, cc, argv, progress, stop)
    return _call(lib.ditto_tune, model, o, stop, 'ditto.tune')


def tune_graph(model, dir, original=None, original_port=0, iterations=0, bound=0,
               connections=0, seconds=0, latency=False, latency_seconds=0, path=None, keep=(),
               seed=0, cc=None, progress=None, busy=None, busy_connections=0,
               profile_targets=False, idle_rate=0, tail=False):
    """Tune the clone of a graph model (several services) with
    ditto_tune_graph(): write the graph tree into dir, build it, start it
    as ditto.up() does, load its front tier, and hold each tier's CPU time
    per request of the graph to its original's, one knob per tier
    ("NODE/synth.cpu_scale" in model.knobs), repeating until every tier is
    within bound. The best tree is kept in dir.

    original       the command that starts the whole original graph (a list
                   of argv strings), its front listening on original_port (0:
                   the model's front port), each other tier on its port in
                   the model: run first under the same load, with nothing
                   attached, for the targets (the profile's carry the
                   profiler's cost), and for the end-to-end latency rows
    profile_targets  the targets from the profile even with original
    iterations     iterations at most (0: 8)
    bound          relative error bound of each tier's CPU per request (0: 0.05)
    connections    connections of the load on the front (0: 2)
    seconds        seconds of load per measurement (0: 4)
    latency        also load both graphs at low, medium and high load: p50
                   and p99 rows, their noise rows, saturation_qps
    path           target of the GETs to an HTTP front (None: '/')
    keep           NAME=HOST:PORT strings: nodes not cloned nor tuned
    seed, cc, progress   as in tune()
    busy           a Model: a profile of the same graph under a busier load;
                   each tier's CPU per request in it is held too (with
                   original and not profile_targets, the original measured
                   under the busy load gives those targets), the clone
                   loaded with busy_connections (0: 8), the knob
                   "NODE/synth.wake_share" (rows "cpu_ns_per_request_busy:NODE");
                   with original and no busy profile, busy_connections alone
                   measures the original under the busy load for them
    idle_rate      with original (not profile_targets): also load both graphs
                   at this many requests per second, evenly spaced (tiers
                   idle between requests); each tier's CPU per request there
                   is held too, the knob "NODE/synth.footprint_kib" (rows
                   "cpu_ns_per_request_idle:NODE"), and the front's p50
                   latency there, the knob "NODE/synth.footprint_after_share"
                   (one value for the graph; row "latency_p50_ns_idle"); the
                   idle rows' bounds are at least the original's own spread
                   over its rounds
    tail           with original (not profile_targets): also hold the front's
                   p99 latency under the base load to the original's (row
                   "latency_p99_ns"; its bound at least the original's own
                   spread over five rounds) by every tier's
                   "NODE/synth.body_spread", one value for the graph

    Returns a TuneReport (rows "cpu_ns_per_request:NODE", the busy and idle
    rows, "latency_p50_ns_idle" and "latency_p99_ns", then the latency rows); Ctrl-C and errors as tune()."""
    argv = _argv(original)
    if isinstance(keep, (str, bytes)):
        raise TypeError('keep must be a list of NAME=HOST:PORT strings, not one string')
    keep = [_lib.encode(k) for k in keep]
    keep_arr = (c_char_p * max(len(keep), 1))(*keep)
    stop = c_int(0)
    o = _lib.make_opts(_lib.TuneGraphOpts, original_port=int(original_port),
                       max_iterations=int(iterations), bound=float(bound),
                       connections=int(connections), duration_s=float(seconds),
                       latency=bool(latency), latency_s=float(latency_seconds),
                       keep_count=len(keep), seed=int(seed),
                       http_path=_lib.encode(path) if path else None,
                       busy=busy._p if busy is not None else None,
                       busy_connections=int(busy_connections),
                       profile_targets=bool(profile_targets),
                       idle_qps=float(idle_rate), tail=bool(tail))
    if keep:
        o.keep = ctypes.cast(keep_arr, ctypes.POINTER(c_char_p))
    fn = _fill(o, dir, cc, argv, progress, stop)
    return _call(lib.ditto_tune_graph, model, o, stop, 'ditto.tune_graph')


def _argv(original):
    if original is None:
        return None
    if isinstance(original, (str, bytes)):
        raise TypeError('original must be a list of argv strings, not one string')
    return (c_char_p * (len(original) + 1))(*[_lib.encode(a) for a in original], None)


def _fill(o, dir, cc, argv, progress, stop):
    """The fields tune() and tune_graph() share; returns the callback,
    which the caller keeps alive while the call runs."""
    if dir is not None and str(dir) != '':
        o.dir = _lib.encode(str(dir))
    if cc:
        o.cc = _lib.encode(cc)
    if argv is not None:
        o.original_argv = ctypes.cast(argv, ctypes.POINTER(c_char_p))
    fn = None
    if progress is not None:
        def on_progress(iteration, max_error, worst, best, note, user):
            progress(iteration, max_error, _lib.decode(worst), bool(best), _lib.decode(note))

        fn = _lib.TUNE_PROGRESS_FN(on_progress)
        o.progress = fn
    o.stop = ctypes.pointer(stop)
    return fn


def _call(func, model, o, stop, what):
    out = c_void_p()
    with _StopOnSigint(stop) as guard:
        rc = func(model._p, byref(o), byref(out))
        exc = error(rc) if rc < 0 else None   # read ditto_last_error() first
    report = TuneReport(out.value, interrupted=guard.interrupted) if out.value else None
    if exc is not None:
        if guard.interrupted and exc.code == -errno.ECANCELED and report is None:
            raise KeyboardInterrupt('%s: stopped before any clone was measured' % what) \
                from exc
        exc.report = report
        raise exc
    return report
