# SPDX-License-Identifier: MIT
"""Profiling a live service into a Model (profile.h).

    with ditto.Profile(duration=10) as p:
        p.attach(pid)
        p.run()
        model = p.finish()

or, for an event loop, watch p.fileno() and call p.step(0) when readable.
Needs root (or CAP_BPF and CAP_PERFMON).
"""

import ctypes
from ctypes import c_char_p, c_void_p

from . import _lib
from ._lib import lib
from .errors import check
from .model import Model


# enum ditto_profile_gap (profile.h): what a window without traffic left unknown.
GAPS = (('no_requests', 1), ('io_model', 2), ('framing', 4))


def gap_names(bits):
    """The names of the enum ditto_profile_gap bits set in bits, in GAPS order."""
    return tuple(name for name, bit in GAPS if bits & bit)


class IdleProfileError(Exception):
    """Profile.finish() with allow_idle=False on a window that counted no
    request or could not infer the network model. Nothing is lost: .model
    is the Model all the same, .gaps names what is missing (see GAPS)."""

    def __init__(self, model, gaps):
        self.model = model
        self.gaps = gaps
        super().__init__('the profile window saw no traffic to learn from (%s unknown): load '
                         'the service while it is profiled, or pass allow_idle=True'
                         % ', '.join(gaps))


class Profile:
    """A profile session (ditto_profile_*). The target keeps running; every
    probe is detached when the session finishes or is closed.

    A window without traffic gives a model of an idle service (network
    io_model and framing unknown): finish() returns it and sets .gaps (and
    the library logs a warning), or raises IdleProfileError when
    allow_idle is False. The default True keeps what earlier versions did."""

    def __init__(self, duration=0.0, service_name=None, requests=0, sample_hz=0,
                 progress=None, cpu_windows=0, cpu_window_insts=0, cpu_spacing=0.0,
                 cpu_step_mode='auto', keep_launched=False, launch_grace=0.0,
                 allow_idle=True, graph=False, names=None):
        self._progress = None
        self._allow_idle = bool(allow_idle)
        self.gaps = ()
        if progress is not None:
            # Keep the ctypes callback alive as long as the session.
            self._progress = _lib.PROGRESS_FN(
                lambda e, d, s, r, u: progress(e, d, s, r))
        opts = _lib.make_opts(_lib.ProfileOpts, duration_s=float(duration),
                              requests=int(requests), sample_hz=int(sample_hz),
                              cpu_windows=int(cpu_windows),
                              cpu_window_insts=int(cpu_window_insts),
                              cpu_spacing_s=float(cpu_spacing),
                              cpu_step_mode=step_mode_parse(cpu_step_mode),
                              keep_launched=bool(keep_launched),
                              launch_grace_s=float(launch_grace), graph=bool(graph))
        self._name = service_name.encode() if service_name else None
        opts.service_name = self._name
        if self._progress is not None:
            opts.progress = self._progress
        ptr = c_void_p()
        check(lib.ditto_profile_new(ctypes.byref(opts), ctypes.byref(ptr)))
        self._ptr = ptr
        # names: {port: service name}, for profiles of several services.
        for port, name in (names or {}).items():
            check(lib.ditto_profile_name_port(self._ptr, int(port), name.encode()))

    def attach(self, pid):
        """Start profiling process pid and its descendants."""
        check(lib.ditto_profile_attach(self._ptr, int(pid)))

    def attach_many(self, pids):
        """Start profiling several services in one window: each pid is the
        root of one service's process tree. The model holds each service
        and the graph of calls between them (ditto_profile_attach_many())."""
        arr = (ctypes.c_int * len(pids))(*[int(p) for p in pids])
        check(lib.ditto_profile_attach_many(self._ptr, arr, len(pids)))

    def launch(self, argv):
        """Start argv and profile it from its first instruction. It is
        stopped when the session finishes or closes (SIGTERM, then SIGKILL
        after launch_grace seconds, 5 by default) unless keep_launched."""
        args = (c_char_p * (len(argv) + 1))(*[a.encode() for a in argv], None)
        check(lib.ditto_profile_launch(self._ptr, args))

    def fileno(self):
        """Readable when step() has work."""
        return lib.ditto_profile_fd(self._ptr)

    def step(self, timeout_ms=0):
        """Do pending work; True while the window runs."""
        return check(lib.ditto_profile_step(self._ptr, int(timeout_ms))) > 0

    def run(self):
        """Block until the window ends (duration, cancel, or the target exits)."""
        check(lib.ditto_profile_run(self._ptr))

    def cancel(self):
        """End the window early; safe from another thread."""
        lib.ditto_profile_cancel(self._ptr)

    def finish(self):
        """Detach and return the Model of what was collected. .gaps then
        names what the window could not learn for want of traffic
        (ditto_profile_gaps(); empty when it saw requests)."""
        out = c_void_p()
        check(lib.ditto_profile_finish(self._ptr, ctypes.byref(out)))
        model = Model._wrap(out.value)
        self.gaps = gap_names(lib.ditto_profile_gaps(self._ptr))
        if self.gaps and not self._allow_idle:
            raise IdleProfileError(model, self.gaps)
        return model

    @property
    def idle(self):
        """The finished window counted no request or left the network model
        unknown (.gaps is not empty)."""
        return bool(self.gaps)

    def close(self):
        if getattr(self, '_ptr', None):
            lib.ditto_profile_free(self._ptr)
            self._ptr = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


def profile(pid, duration, otlp_listen=None, otlp_allow_remote=False,
            traces_uncorrected=False, **kw):
    """Profile process pid (or a list of pids: one service each, and the
    graph between them) for duration seconds and return its Model
    (allow_idle=False: IdleProfileError for a window without traffic).
    otlp_listen="HOST:PORT": receive OTLP spans during the window
    (OtlpReceiver) and add their graph to the Model."""
    from .otlp import OtlpReceiver
    receiver = OtlpReceiver(otlp_listen, allow_remote=otlp_allow_remote) if otlp_listen else None
    try:
        with Profile(duration=duration, **kw) as p:
            if isinstance(pid, (list, tuple)):
                p.attach_many(pid)
            else:
                p.attach(pid)
            p.run()
            if receiver:
                receiver.stop()
            try:
                model = p.finish()
            except IdleProfileError as e:
                if receiver:
                    receiver.finish(e.model, traces_uncorrected)
                raise
            if receiver:
                receiver.finish(model, traces_uncorrected)
            return model
    finally:
        if receiver:
            receiver.close()


def discover(cgroup=None, ports=None):
    """Root pids of the services to profile: the processes of a cgroup, or
    those listening on one of ports (an empty list: on any TCP port), one
    per process tree (ditto_profile_discover())."""
    ports = list(ports or [])
    arr = (ctypes.c_uint16 * max(len(ports), 1))(*ports)
    opts = _lib.make_opts(_lib.DiscoverOpts, cgroup=cgroup.encode() if cgroup else None,
                          ports=arr if ports else None, nports=len(ports))
    out = (ctypes.c_int * 16)()
    n = ctypes.c_size_t()
    check(lib.ditto_profile_discover(ctypes.byref(opts), out, 16, ctypes.byref(n)))
    return list(out[:n.value])


STEP_MODES = ('auto', 'breakpoint', 'syscall_stops')


def step_mode_parse(name):
    """enum ditto_step_mode of a name in STEP_MODES (ValueError otherwise)."""
    if name not in STEP_MODES:
        raise ValueError('stepping mode %r is not one of %s' % (name, ', '.join(STEP_MODES)))
    out = ctypes.c_int()
    check(lib.ditto_step_mode_parse(name.encode(), ctypes.byref(out)))
    return out.value


def step_mode_detect():
    """The stepping mechanism 'auto' stands for here ("breakpoint" or
    "syscall_stops"): DITTO_STEP_MODE if set, else whether hardware
    breakpoints fire on this host (checked once per process)."""
    return _lib.decode(lib.ditto_step_mode_name(check(lib.ditto_step_mode_detect())))


def breakpoints_work():
    """Whether a hardware breakpoint set on a child process fires here."""
    return check(lib.ditto_step_breakpoints_work()) > 0


def profile_cpu(pid, tids=None, windows=0, window_insts=0, spacing=0.0, window_timeout=0.0,
                service_name=None, step_mode='auto'):
    """CPU windows (ptrace single-stepping) on threads tids of process pid
    (all its threads when None). Returns a Model with one service holding a
    thread class "stepped" and its cpu entry. Needs CAP_SYS_PTRACE or the
    target's user with kernel.yama.ptrace_scope 0. step_mode: how system
    calls are run ('auto', 'breakpoint', 'syscall_stops'; profile.h)."""
    from .model import Model
    m = Model()
    name = service_name
    if name is None:
        try:
            with open('/proc/%d/comm' % pid) as f:
                name = f.read().strip() or 'service'
        except OSError:
            name = 'service'
    svc = m.add_service(name)
    svc.add_thread('stepped', count=len(tids) if tids else 1)
    cpu = svc.add_cpu('stepped')
    opts = _lib.make_opts(_lib.CpuOpts, windows=int(windows), window_insts=int(window_insts),
                          spacing_s=float(spacing), window_timeout_s=float(window_timeout),
                          step_mode=step_mode_parse(step_mode))
    arr = (ctypes.c_int * len(tids))(*tids) if tids else None
    check(lib.ditto_profile_cpu(int(pid), arr, len(tids) if tids else 0, ctypes.byref(opts),
                                cpu._h))
    return m


# enum ditto_trace_format (profile.h), by the names the C library parses.
TRACE_FORMATS = ('auto', 'otlp-json', 'jaeger-json', 'zipkin-json')


def import_traces(paths, format='auto', uncorrected=False, into=None, max_spans=0,
                  max_file_bytes=0):
    """The RPC graph from trace exports (ditto_profile_import_traces): OTLP
    JSON (one document or JSON Lines), Jaeger JSON (/api/traces) or Zipkin
    v2 JSON, detected by content with format='auto'. Adds the graph to
    `into` (a Model, changed in place) or to a new Model, and returns it.
    uncorrected=True leaves call totals as sampled when the exports declare
    a sampling ratio. Raises CorruptError / LimitError naming the file and
    the place for a file that is not a readable export."""
    from .model import Model
    if isinstance(paths, (str, bytes)) or hasattr(paths, '__fspath__'):
        paths = [paths]
    fmt = ctypes.c_int()
    check(lib.ditto_trace_format_parse(_lib.encode(format), ctypes.byref(fmt)))
    opts = _lib.make_opts(_lib.TraceOpts, format=fmt.value, uncorrected=bool(uncorrected),
                          max_spans=int(max_spans), max_file_bytes=int(max_file_bytes))
    encoded = [_lib.encode(p) for p in paths]
    arr = (c_char_p * max(len(encoded), 1))(*encoded)
    m = into if into is not None else Model()
    check(lib.ditto_profile_import_traces(m._p, arr, len(encoded), ctypes.byref(opts)))
    return m
