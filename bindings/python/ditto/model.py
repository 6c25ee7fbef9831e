# SPDX-License-Identifier: MIT
"""struct ditto_model and thin wrappers of the model elements the tests use."""

import ctypes
import collections
import collections.abc
import errno
import json as _json
from ctypes import (byref, c_bool, c_char_p, c_double, c_int, c_int64, c_size_t,
                    c_uint64, c_void_p)

from . import _lib
from ._lib import lib
from .errors import NotFoundError, check, error, null_error
from .hist import Hist

__all__ = ['Model', 'Metric', 'Comparison', 'Service', 'ThreadClass', 'Syscall',
           'Requests', 'Outbound', 'Network', 'Meta', 'Values']

Metric = collections.namedtuple('Metric', 'path kind a b error')

METRIC_KINDS = {
    _lib.METRIC_SCALAR: 'scalar',
    _lib.METRIC_DISTRIBUTION: 'distribution',
    _lib.METRIC_ONLY_A: 'only_a',
    _lib.METRIC_ONLY_B: 'only_b',
}


class Comparison(list):
    """The Metric list of Model.compare(), with max_error from the library.
    paired is (name in a, name in b) when each model holds one service and
    their names differ: they were compared with each other all the same."""

    max_error = 0.0
    paired = None


def comparison_rows(c, res):
    """Fill res (a Comparison) with the rows of struct ditto_comparison c."""
    path, kind = c_char_p(), c_int()
    a, b, err = c_double(), c_double(), c_double()
    for i in range(lib.ditto_comparison_count(c)):
        check(lib.ditto_comparison_metric(c, i, byref(path), byref(kind), byref(a), byref(b),
                                          byref(err)))
        res.append(Metric(_lib.decode(path.value), METRIC_KINDS.get(kind.value, kind.value),
                          a.value, b.value, err.value))
    res.max_error = lib.ditto_comparison_max_error(c)
    return res


# --- enums stored as names ---------------------------------------------

def enum_name(enum, value):
    return _lib.decode(getattr(lib, 'ditto_%s_name' % enum)(int(value)))


def enum_parse(enum, name):
    """Value of an enum name (ints pass through); NotFoundError if unknown."""
    if isinstance(name, int):
        return name
    out = c_int()
    check(getattr(lib, 'ditto_%s_parse' % enum)(_lib.encode(name), byref(out)))
    return out.value


# --- element wrappers ----------------------------------------------------

class _Element:
    """A handle borrowed from a model; keeps the model alive. _h is the
    handle to read through, _w the one to write through (the same for an
    element; a _Section creates itself for writing only)."""

    def __init__(self, model, handle):
        self._model = model
        self._handle = handle

    @property
    def _h(self):
        self._model._p  # raises if the model was closed
        return self._handle

    @property
    def _w(self):
        return self._h

    def __eq__(self, other):
        return type(self) is type(other) and self._handle == other._handle

    def __hash__(self):
        return hash(self._handle)


class _Section(_Element):
    """A section of a parent (a model or an element) that may be absent:
    reads go through the C getter, which returns NULL for an absent
    section (its fields then read as 0, '' or False) and creates nothing;
    the first write creates it through the _ensure twin."""

    def __init__(self, model, parent, get, ensure):
        super().__init__(model, None)
        self._parent = parent   # a Model or an _Element
        self._get = get
        self._ensure = ensure

    @property
    def _h(self):
        p = self._parent
        return getattr(lib, self._get)(p._p if isinstance(p, Model) else p._h)

    @property
    def _w(self):
        p = self._parent
        ptr = getattr(lib, self._ensure)(p._p if isinstance(p, Model) else p._w)
        if not ptr:
            raise null_error()
        return ptr

    def __eq__(self, other):
        return (type(self) is type(other) and self._get == other._get
                and self._parent == other._parent)

    def __hash__(self):
        return hash((self._get, self._parent))


def _u64_prop(prefix, field, doc=None):
    get = 'ditto_%s_%s' % (prefix, field)
    put = 'ditto_%s_set_%s' % (prefix, field)

    def getter(self):
        return getattr(lib, get)(self._h)

    def setter(self, v):
        check(getattr(lib, put)(self._w, int(v)))

    return property(getter, setter, doc=doc)


def _enum_prop(prefix, field, enum):
    get = 'ditto_%s_%s' % (prefix, field)
    put = 'ditto_%s_set_%s' % (prefix, field)

    def getter(self):
        return enum_name(enum, getattr(lib, get)(self._h))

    def setter(self, v):
        check(getattr(lib, put)(self._w, enum_parse(enum, v)))

    return property(getter, setter)


def _str_prop(prefix, field):
    get = 'ditto_%s_%s' % (prefix, field)
    return property(lambda self: _lib.decode(getattr(lib, get)(self._h)))


class _FieldHist(Hist):
    """A histogram field of a model element, borrowed: it reads the field
    as it is (one the model lacks reads as an empty histogram of its kind,
    and stays absent) and creates it on the first add or merge."""

    def __init__(self, element, get, ensure):
        self._element = element
        self._get = get
        self._ensure = ensure
        self._owner = element._model
        self._ptr = None

    @property
    def _p(self):
        ptr = getattr(lib, self._get)(self._element._h)
        if not ptr:
            raise null_error()
        return ptr

    @property
    def _wp(self):
        ptr = getattr(lib, self._ensure)(self._element._w)
        if not ptr:
            raise null_error()
        return ptr


def _hist_prop(prefix, field):
    get = 'ditto_%s_%s' % (prefix, field)

    def getter(self):
        return _FieldHist(self, get, get + '_ensure')

    return property(getter)


class ThreadClass(_Element):
    name = _str_prop('thread_class', 'name')
    count = _u64_prop('thread_class', 'count')
    role = _enum_prop('thread_class', 'role', 'role')
    io_model = _enum_prop('thread_class', 'io_model', 'io_model')
    cpu_ns = _u64_prop('thread_class', 'cpu_ns')
    wakeups = _u64_prop('thread_class', 'wakeups')

    def __repr__(self):
        return '<ditto.ThreadClass %s>' % self.name



def _counts_dict(c):
    """A ditto_counts map as a dict (a copy); {} for an absent (NULL) one."""
    out = {}
    key, n = ctypes.c_char_p(), ctypes.c_uint64()
    for i in range(lib.ditto_counts_size(c)):
        check(lib.ditto_counts_entry(c, i, ctypes.byref(key), ctypes.byref(n)))
        out[key.value.decode()] = n.value
    return out

class Cpu(_Element):
    """services[].cpu[]: what CPU windows observed of one thread class."""
    thread_class = _str_prop('cpu', 'thread_class')
    windows = _u64_prop('cpu', 'windows')
    instructions = _u64_prop('cpu', 'instructions')
    undecoded = _u64_prop('cpu', 'undecoded')
    loads = _u64_prop('cpu', 'loads')
    stores = _u64_prop('cpu', 'stores')
    chased_loads = _u64_prop('cpu', 'chased_loads')
    dws_cold = _u64_prop('cpu', 'dws_cold')
    iws_cold = _u64_prop('cpu', 'iws_cold')
    jit_instructions = _u64_prop('cpu', 'jit_instructions')
    stepped_ns = _u64_prop('cpu', 'stepped_ns')
    insts_per_request = _hist_prop('cpu', 'insts_per_request')
    branches = _hist_prop('cpu', 'branches')
    dws = _hist_prop('cpu', 'dws')
    iws = _hist_prop('cpu', 'iws')
    raw = _hist_prop('cpu', 'raw')
    war = _hist_prop('cpu', 'war')
    waw = _hist_prop('cpu', 'waw')
    mem_raw = _hist_prop('cpu', 'mem_raw')

    @property
    def mix(self):
        """Instruction class key -> executions, as a dict (a copy)."""
        return _counts_dict(lib.ditto_cpu_mix(self._h))

    @property
    def stepping(self):
        """Stepping mechanism ("breakpoint", "syscall_stops") -> windows
        that used it, as a dict (a copy)."""
        return _counts_dict(lib.ditto_cpu_stepping(self._h))

    def miss_rate(self, cache_bytes, instructions=False, count_cold=False):
        """Miss rate of a fully associative LRU cache of cache_bytes predicted
        from the reuse histogram (ditto_cpu_miss_rate)."""
        r = lib.ditto_cpu_miss_rate(self._h, bool(instructions), int(cache_bytes),
                                    bool(count_cold))
        if r < 0:
            raise null_error()
        return r

    def add_mix(self, key, n):
        mix = lib.ditto_cpu_mix_ensure(self._w)
        if not mix:
            raise null_error()
        check(lib.ditto_counts_add(mix, _lib.encode(key), int(n)))

    def __repr__(self):
        return '<ditto.Cpu %s>' % self.thread_class


class Syscall(_Element):
    thread_class = _str_prop('syscall', 'thread_class')
    name = _str_prop('syscall', 'name')
    nr = _u64_prop('syscall', 'nr')
    calls = _u64_prop('syscall', 'calls')
    errors = _u64_prop('syscall', 'errors')
    sequential = _u64_prop('syscall', 'sequential')
    size_total = _u64_prop('syscall', 'size_total', 'exact sum of size (since 0.5)')
    ret_total = _u64_prop('syscall', 'ret_total', 'exact sum of ret (since 0.5)')
    iovecs_total = _u64_prop('syscall', 'iovecs_total',
                             'iovecs of vectored calls, summed (since 0.5)')
    size = _hist_prop('syscall', 'size')
    ret = _hist_prop('syscall', 'ret')
    flags = _hist_prop('syscall', 'flags')
    errnos = _hist_prop('syscall', 'errnos')   # failed calls by errno (since 0.5)
    offset = _hist_prop('syscall', 'offset')
    latency = _hist_prop('syscall', 'latency')

    @property
    def fd_kind(self):
        return enum_name('fd_kind', lib.ditto_syscall_fd_kind(self._h))

    @property
    def key(self):
        """thread_class:name:fd_kind, as in paths."""
        return '%s:%s:%s' % (self.thread_class, self.name, self.fd_kind)

    def __repr__(self):
        return '<ditto.Syscall %s>' % self.key


def _bool_prop(prefix, field):
    get = 'ditto_%s_%s' % (prefix, field)
    put = 'ditto_%s_set_%s' % (prefix, field)

    def getter(self):
        return bool(getattr(lib, get)(self._h))

    def setter(self, v):
        check(getattr(lib, put)(self._w, bool(v)))

    return property(getter, setter)


class Network(_Section):
    """services[].network: the service's network skeleton."""
    io_model = _enum_prop('network', 'io_model', 'io_model')
    accept_dispatch = _bool_prop('network', 'accept_dispatch')
    network_dispatch = _bool_prop('network', 'network_dispatch')
    serial_connections = _bool_prop('network', 'serial_connections')
    master_process = _bool_prop('network', 'master_process')
    network_threads = _u64_prop('network', 'network_threads')
    processes = _u64_prop('network', 'processes')
    client_connections = _u64_prop('network', 'client_connections')
    client_mode = _enum_prop('network', 'client_mode', 'call_mode')
    sockopt_connections = _u64_prop('network', 'sockopt_connections')

    @property
    def sockopts(self):
        """The connections' socket options as dicts {level, name, value,
        connections, calls}; None when the model does not know them (an
        empty list: it knows there are none)."""
        if not lib.ditto_network_sockopts_known(self._h):
            return None
        out = []
        for i in range(lib.ditto_network_sockopt_count(self._h)):
            o = _lib.Sockopt()
            check(lib.ditto_network_sockopt(self._h, i, byref(o)))
            out.append({f: getattr(o, f) for f, _ in _lib.Sockopt._fields_})
        return out

    def add_sockopt(self, level, name, value, connections=0, calls=0):
        """Adds the counts to the option (level, name, value); makes the
        list known."""
        o = _lib.Sockopt(level, name, value, connections, calls)
        check(lib.ditto_network_add_sockopt(self._w, byref(o)))

    def set_sockopts_known(self):
        """Records that the connections set none of the options (yet)."""
        check(lib.ditto_network_set_sockopts_known(self._w))


class Requests(_Section):
    count = _u64_prop('requests', 'count')
    connections = _u64_prop('requests', 'connections')
    pipelined = _u64_prop('requests', 'pipelined')
    request_bytes_total = _u64_prop('requests', 'request_bytes_total')
    response_bytes_total = _u64_prop('requests', 'response_bytes_total')
    request_bytes = _hist_prop('requests', 'request_bytes')
    response_bytes = _hist_prop('requests', 'response_bytes')
    per_connection = _hist_prop('requests', 'per_connection')
    service_ns = _hist_prop('requests', 'service_ns')
    after_response_ns = _hist_prop('requests', 'after_response_ns')


class Outbound(_Element):
    """services[].outbound[]: calls the service made to one remote
    endpoint, never counted as its requests or responses (since 0.5)."""
    framing = _enum_prop('outbound', 'framing', 'framing')
    connections = _u64_prop('outbound', 'connections')
    calls = _u64_prop('outbound', 'calls')
    sends = _u64_prop('outbound', 'sends')
    receives = _u64_prop('outbound', 'receives')
    request_bytes_total = _u64_prop('outbound', 'request_bytes_total')
    response_bytes_total = _u64_prop('outbound', 'response_bytes_total')
    request_bytes = _hist_prop('outbound', 'request_bytes')
    response_bytes = _hist_prop('outbound', 'response_bytes')

    @property
    def address(self):
        return _lib.decode(lib.ditto_outbound_address(self._h))

    @property
    def port(self):
        return lib.ditto_outbound_port(self._h)

    def __repr__(self):
        return '<ditto.Outbound %s port %d>' % (self.address, self.port)


class Meta(_Section):
    tool_version = _str_prop('meta', 'tool_version')
    created = _u64_prop('meta', 'created')

    @property
    def sources(self):
        return lib.ditto_meta_sources(self._h)

    @property
    def window_s(self):
        return lib.ditto_meta_window_s(self._h)

    @window_s.setter
    def window_s(self, v):
        check(lib.ditto_meta_set_window_s(self._w, float(v)))

    def _section(self, name, keys):
        out = {}
        for k in keys:
            try:
                out[k] = self._model.get('meta.%s.%s' % (name, k))
            except NotFoundError:
                out[k] = None   # not learnt: absent from the model, not 0
        return out

    @property
    def host(self):
        """meta.host as a dict: cpu_model, kernel, cores, l1d_bytes,
        l1i_bytes, l2_bytes, llc_bytes and cache_source ('sysfs', 'cpuid'
        or 'sysfs+cpuid'). What the profiler could not learn is None."""
        return self._section('host', ('cpu_model', 'kernel', 'cores', 'l1d_bytes', 'l1i_bytes',
                                      'l2_bytes', 'llc_bytes', 'cache_source'))

    @property
    def load(self):
        """meta.load as a dict: generator, qps, connections; None when unknown."""
        return self._section('load', ('generator', 'qps', 'connections'))

    def __repr__(self):
        return '<ditto.Meta host=%r load=%r>' % (self.host, self.load)


def _added(ptr, exists, *names):
    """Check the result of an add function, which returns NULL on failure
    with only a message: the code is -EEXIST when the key is taken, -EINVAL
    for an empty name, else -ENOMEM."""
    if not ptr:
        if exists:
            code = -errno.EEXIST
        elif not all(names):
            code = -errno.EINVAL
        else:
            code = -errno.ENOMEM
        raise null_error(code)
    return ptr


def _set_attrs(obj, attrs):
    for k, v in attrs.items():
        if v is not None:
            setattr(obj, k, v)
    return obj


class Service(_Element):
    name = _str_prop('service', 'name')
    framing = _enum_prop('service', 'framing', 'framing')
    processes = _u64_prop('service', 'processes')

    def __repr__(self):
        return '<ditto.Service %s>' % self.name

    # ports
    @property
    def ports(self):
        h = self._h
        return [lib.ditto_service_port(h, i) for i in range(lib.ditto_service_port_count(h))]

    def add_port(self, port):
        check(lib.ditto_service_add_port(self._h, int(port)))

    def per_request(self, count):
        """count / requests.count, 0 when no requests were counted."""
        return lib.ditto_service_per_request(self._h, float(count))

    # threads
    @property
    def threads(self):
        h = self._h
        return [ThreadClass(self._model, lib.ditto_service_thread(h, i))
                for i in range(lib.ditto_service_thread_count(h))]

    def thread(self, name):
        ptr = lib.ditto_service_find_thread(self._h, _lib.encode(name))
        if not ptr:
            raise NotFoundError(-_lib.ENOTFOUND, '%s: no thread class %r' % (self.name, name))
        return ThreadClass(self._model, ptr)

    def add_thread(self, name, count=None, role=None, io_model=None):
        h = self._h
        exists = bool(lib.ditto_service_find_thread(h, _lib.encode(name)))
        ptr = _added(lib.ditto_service_add_thread(h, _lib.encode(name)), exists, name)
        return _set_attrs(ThreadClass(self._model, ptr),
                          {'count': count, 'role': role, 'io_model': io_model})

    # syscalls
    @property
    def syscalls(self):
        h = self._h
        return [Syscall(self._model, lib.ditto_service_syscall(h, i))
                for i in range(lib.ditto_service_syscall_count(h))]

    def syscall(self, thread_class, name, fd_kind='none'):
        ptr = lib.ditto_service_find_syscall(self._h, _lib.encode(thread_class),
                                             _lib.encode(name), enum_parse('fd_kind', fd_kind))
        if not ptr:
            raise NotFoundError(-_lib.ENOTFOUND, '%s: no syscall %s:%s:%s'
                                % (self.name, thread_class, name, fd_kind))
        return Syscall(self._model, ptr)

    def add_syscall(self, thread_class, name, fd_kind='none', calls=None, errors=None,
                    nr=None):
        h = self._h
        args = (_lib.encode(thread_class), _lib.encode(name), enum_parse('fd_kind', fd_kind))
        exists = bool(lib.ditto_service_find_syscall(h, *args))
        ptr = _added(lib.ditto_service_add_syscall(h, *args), exists, thread_class, name)
        return _set_attrs(Syscall(self._model, ptr),
                          {'nr': nr, 'calls': calls, 'errors': errors})

    # cpu
    @property
    def cpu(self):
        h = self._h
        return [Cpu(self._model, lib.ditto_service_cpu(h, i))
                for i in range(lib.ditto_service_cpu_count(h))]

    def find_cpu(self, thread_class):
        ptr = lib.ditto_service_find_cpu(self._h, _lib.encode(thread_class))
        if not ptr:
            raise NotFoundError(-_lib.ENOTFOUND, '%s: no cpu entry for %r'
                                % (self.name, thread_class))
        return Cpu(self._model, ptr)

    def add_cpu(self, thread_class):
        h = self._h
        exists = bool(lib.ditto_service_find_cpu(h, _lib.encode(thread_class)))
        return Cpu(self._model, _added(lib.ditto_service_add_cpu(h, _lib.encode(thread_class)),
                                       exists, thread_class))

    # outbound calls
    @property
    def outbound(self):
        h = self._h
        return [Outbound(self._model, lib.ditto_service_outbound(h, i))
                for i in range(lib.ditto_service_outbound_count(h))]

    def add_outbound(self, address, port, calls=None, framing=None):
        h = self._h
        exists = bool(lib.ditto_service_find_outbound(h, _lib.encode(address), port))
        ptr = _added(lib.ditto_service_add_outbound(h, _lib.encode(address), port), exists,
                     address, port)
        return _set_attrs(Outbound(self._model, ptr), {'calls': calls, 'framing': framing})

    @property
    def requests(self):
        """services[].requests; reading an absent one adds nothing, the
        first write creates it."""
        return Requests(self._model, self, 'ditto_service_requests',
                        'ditto_service_requests_ensure')

    @property
    def network(self):
        """services[].network, read and created as requests is."""
        return Network(self._model, self, 'ditto_service_network',
                       'ditto_service_network_ensure')


# --- tuning ----------------------------------------------------------------

class Values(collections.abc.Mapping, _Element):
    """A live view of a string -> float map of the model (struct
    ditto_values: tuning.knobs, an iteration's knobs and errors), in
    insertion order. Setting a key adds or replaces it (DittoError, code
    -EINVAL, for a non-finite value); the C API deletes no key, nor does this.
    Compared by content, as a Mapping (not by handle, as other elements).
    get and ensure return the map for reading (NULL when absent: empty)
    and for writing (created when absent)."""

    def __init__(self, model, get, ensure=None):
        super().__init__(model, None)
        self._get = get
        self._ensure = ensure

    @property
    def _h(self):
        self._model._p  # raises if the model was closed
        return self._get()

    @property
    def _w(self):
        self._model._p
        ptr = self._ensure() if self._ensure else None
        if not ptr:
            raise null_error()
        return ptr

    def __len__(self):
        return lib.ditto_values_size(self._h)

    def __iter__(self):
        return iter([k for k, _ in self._items()])

    def _items(self):
        """(key, value) pairs, read in one pass."""
        h = self._h
        key, v = c_char_p(), c_double()
        out = []
        for i in range(lib.ditto_values_size(h)):
            check(lib.ditto_values_entry(h, i, byref(key), byref(v)))
            out.append((_lib.decode(key.value), v.value))
        return out

    def __getitem__(self, key):
        if not isinstance(key, str):
            raise KeyError(key)
        v = c_double()
        rc = lib.ditto_values_get(self._h, _lib.encode(key), byref(v))
        if rc == -_lib.ENOTFOUND:
            raise KeyError(key)
        check(rc)
        return v.value

    def __setitem__(self, key, value):
        check(lib.ditto_values_set(self._w, _lib.encode(key), float(value)))

    def update(self, other=(), **kw):
        for k, v in dict(other, **kw).items():
            self[k] = v

    def __repr__(self):
        return '<ditto.Values %r>' % dict(self._items())


# --- the model -----------------------------------------------------------

def _json_opts(pretty):
    return _lib.make_opts(_lib.JsonOpts, pretty=bool(pretty))


class Model:
    """A libditto model. Model() is a new empty one; see also load() and
    from_bytes(). Freed when garbage collected, or by close()."""

    _free = staticmethod(lib.ditto_model_free)

    def __init__(self):
        ptr = lib.ditto_model_new()
        if not ptr:
            raise null_error()
        self._ptr = ptr

    @classmethod
    def _wrap(cls, ptr):
        m = cls.__new__(cls)
        m._ptr = ptr
        return m

    def __del__(self):
        if getattr(self, '_ptr', None):
            self._free(self._ptr)
            self._ptr = None

    def close(self):
        """Free the C model now; any later use raises ValueError."""
        self.__del__()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def _p(self):
        if not self._ptr:
            raise ValueError('model is closed')
        return self._ptr

    # --- codec ---

    @staticmethod
    def _load_opts(validate, max_bytes, max_depth):
        return _lib.make_opts(_lib.LoadOpts, max_bytes=int(max_bytes), max_depth=int(max_depth),
                              no_validate=not validate)

    @classmethod
    def load(cls, path, validate=True, max_bytes=0, max_depth=0):
        """Read a msgpack model file (ditto_model_load)."""
        out = c_void_p()
        o = cls._load_opts(validate, max_bytes, max_depth)
        check(lib.ditto_model_load(_lib.encode(path), byref(o), byref(out)))
        return cls._wrap(out.value)

    @classmethod
    def from_bytes(cls, data, validate=True, max_bytes=0, max_depth=0):
        """Decode a msgpack model (ditto_model_decode)."""
        data = bytes(data)
        out = c_void_p()
        o = cls._load_opts(validate, max_bytes, max_depth)
        check(lib.ditto_model_decode(data, len(data), byref(o), byref(out)))
        return cls._wrap(out.value)

    def to_bytes(self):
        """The msgpack encoding."""
        buf, n = c_void_p(), c_size_t()
        check(lib.ditto_model_encode(self._p, byref(buf), byref(n)))
        return _lib.take_string(buf.value, n.value)

    def __bytes__(self):
        return self.to_bytes()

    def save(self, path):
        """Write the msgpack encoding to path, atomically."""
        check(lib.ditto_model_save(self._p, _lib.encode(path)))

    def to_json(self, pretty=False):
        out = c_void_p()
        o = _json_opts(pretty)
        check(lib.ditto_model_to_json(self._p, byref(o), byref(out)))
        return _lib.decode(_lib.take_string(out.value))

    def json(self):
        """The model as Python data (json.loads of to_json())."""
        return _json.loads(self.to_json())

    def copy(self):
        """Deep copy (ditto_model_dup), unknown keys included."""
        out = c_void_p()
        check(lib.ditto_model_dup(self._p, byref(out)))
        return Model._wrap(out.value)

    __copy__ = copy

    def __deepcopy__(self, memo):
        return self.copy()

    @property
    def schema(self):
        return lib.ditto_model_schema(self._p)

    # --- validation ---

    def validate(self):
        """Raise InvalidError naming the first problem; return None if valid."""
        check(lib.ditto_model_validate(self._p, None))

    def problems(self):
        """Every problem validation finds, as a list of (path, message)."""
        found = []

        def on_problem(path, msg, user):
            found.append((_lib.decode(path) or '', _lib.decode(msg) or ''))

        fn = _lib.PROBLEM_FN(on_problem)  # alive until the call returns
        o = _lib.make_opts(_lib.ValidateOpts, problem=fn, user=None)
        rc = lib.ditto_model_validate(self._p, byref(o))
        if rc < 0 and not (rc == -_lib.EINVALID and found):
            raise error(rc)
        return found

    def is_valid(self):
        return not self.problems()

    def warnings(self):
        """What leaves the model valid but that this libditto cannot use
        (instruction-mix keys of another format, unknown knob names), as a
        list of (path, message). Problems, if any, are not included."""
        found = []

        def on_warning(path, msg, user):
            found.append((_lib.decode(path) or '', _lib.decode(msg) or ''))

        fn = _lib.PROBLEM_FN(on_warning)
        ignore = _lib.PROBLEM_FN(lambda path, msg, user: None)
        o = _lib.make_opts(_lib.ValidateOpts, problem=ignore, warning=fn, user=None)
        rc = lib.ditto_model_validate(self._p, byref(o))
        if rc < 0 and rc != -_lib.EINVALID:
            raise error(rc)
        return found

    # --- merge and compare ---

    def merge(self, other):
        """Add other into this model (MismatchError on conflicting
        configuration; this model is then unchanged). Returns self."""
        if other is self:
            other = self.copy()
        check(lib.ditto_model_merge(self._p, other._p))
        return self

    def compare(self, other, min_error=0.0):
        """Feature-by-feature distance from self (the original) to other
        (the clone): a Comparison (list) of Metric(path, kind, a, b, error),
        kind one of 'scalar', 'distribution', 'only_a', 'only_b'. Two models
        of one service each are compared whatever the services are named
        (Comparison.paired then names both)."""
        out = c_void_p()
        o = _lib.make_opts(_lib.CompareOpts, min_error=float(min_error))
        check(lib.ditto_model_compare(self._p, other._p, byref(o), byref(out)))
        c = out.value
        try:
            res = comparison_rows(c, Comparison())
            names = (self.services, other.services)
            if len(names[0]) == 1 and len(names[1]) == 1 and names[0] != names[1]:
                res.paired = (names[0][0], names[1][0])
            return res
        finally:
            lib.ditto_comparison_free(c)

    # --- generic path access ---

    def get_type(self, path):
        t = c_int()
        check(lib.ditto_model_get_type(self._p, _lib.encode(path), byref(t)))
        return t.value

    def has(self, path):
        try:
            self.get_type(path)
        except NotFoundError:
            return False
        return True

    __contains__ = has

    def get_len(self, path):
        """Elements of an array or map, bytes of a string or binary."""
        n = c_size_t()
        check(lib.ditto_model_get_len(self._p, _lib.encode(path), byref(n)))
        return n.value

    def get_json(self, path='', pretty=False):
        out = c_void_p()
        o = _json_opts(pretty)
        check(lib.ditto_model_get_json(self._p, _lib.encode(path), byref(o), byref(out)))
        return _lib.decode(_lib.take_string(out.value))

    def hist(self, path):
        """An owned copy of the histogram at path (DittoTypeError if not one)."""
        h = c_void_p()
        check(lib.ditto_model_get_hist(self._p, _lib.encode(path), byref(h)))
        ptr = lib.ditto_hist_dup(h.value)
        if not ptr:
            raise null_error()
        return Hist._wrap(ptr)

    def graph_edges(self):
        """The graph's edges (graph.edges) as a list of dicts: from, to,
        source ('kernel' or 'traces'), mode, order, calls, parent_requests,
        ambiguous, unattributed, fanout ({calls per parent request: parent
        requests}), and request_bytes, response_bytes, latency_ns as
        {kind, total, buckets: [(lo, hi, count)]}. [] without a graph."""
        from .errors import NotFoundError
        try:
            edges = self.get('graph.edges')
        except NotFoundError:
            return []
        out = []
        for i, e in enumerate(edges or []):
            d = dict(e)
            d.setdefault('source', 'kernel')
            for key in ('calls', 'parent_requests', 'ambiguous', 'unattributed'):
                d.setdefault(key, 0)
            for key in ('mode', 'order'):
                d.setdefault(key, 'unknown')
            fan = self.get('graph.edges[%d].fanout' % i) if 'fanout' in e else None
            d['fanout'] = {lo: n for lo, hi, n in fan['buckets']} if fan else {}
            for key in ('request_bytes', 'response_bytes', 'latency_ns'):
                if key in e:
                    d[key] = self.get('graph.edges[%d].%s' % (i, key))
            out.append(d)
        return out

    def get(self, path):
        """The value at path as Python data: None, bool, int, float, str,
        bytes (binary), list/dict (arrays and maps, via JSON), or for a
        histogram {kind, precision, total, buckets: [(lo, hi, count)]}."""
        m, p = self._p, _lib.encode(path)
        t = self.get_type(path)
        if t == _lib.VALUE_NIL:
            return None
        if t == _lib.VALUE_BOOL:
            v = c_bool()
            check(lib.ditto_model_get_bool(m, p, byref(v)))
            return v.value
        if t == _lib.VALUE_INT:
            v = c_int64()
            check(lib.ditto_model_get_i64(m, p, byref(v)))
            return v.value
        if t == _lib.VALUE_UINT:
            v = c_uint64()
            check(lib.ditto_model_get_u64(m, p, byref(v)))
            return v.value
        if t == _lib.VALUE_FLOAT:
            v = c_double()
            check(lib.ditto_model_get_f64(m, p, byref(v)))
            return v.value
        if t == _lib.VALUE_STRING:
            v = c_char_p()
            check(lib.ditto_model_get_str(m, p, byref(v)))
            return _lib.decode(v.value)
        if t == _lib.VALUE_HIST:
            h = c_void_p()
            check(lib.ditto_model_get_hist(m, p, byref(h)))
            return Hist._wrap(h.value, owner=self).to_dict()
        v = _json.loads(self.get_json(path))
        if t == _lib.VALUE_BINARY:
            return bytes.fromhex(v['$bin'])
        return v

    # --- typed conveniences ---

    @property
    def meta(self):
        return Meta(self, self, 'ditto_model_meta', 'ditto_model_meta_ensure')

    @property
    def services(self):
        """Names of the services, in order."""
        m = self._p
        return [_lib.decode(lib.ditto_service_name(lib.ditto_model_service(m, i)))
                for i in range(lib.ditto_model_service_count(m))]

    def service(self, key):
        """Service by index or by name (NotFoundError if none)."""
        m = self._p
        if isinstance(key, int):
            ptr = lib.ditto_model_service(m, key) if key >= 0 else None
        else:
            ptr = lib.ditto_model_find_service(m, _lib.encode(key))
        if not ptr:
            raise NotFoundError(-_lib.ENOTFOUND, 'no service %r' % (key,))
        return Service(self, ptr)

    def add_service(self, name, framing=None, processes=None):
        m = self._p
        exists = bool(lib.ditto_model_find_service(m, _lib.encode(name)))
        ptr = _added(lib.ditto_model_add_service(m, _lib.encode(name)), exists, name)
        return _set_attrs(Service(self, ptr), {'framing': framing, 'processes': processes})

    # --- tuning ---

    @property
    def graph(self):
        """The RPC graph (ditto.graph.Graph): nodes, externals, edges,
        traces; reading adds nothing to the model."""
        from .graph import Graph
        return Graph(self)

    def _tuning(self):
        """tuning, or NULL when the model has none (reads create nothing)."""
        return lib.ditto_model_tuning(self._p)

    def _knobs_ensure(self):
        t = lib.ditto_model_tuning_ensure(self._p)
        return lib.ditto_tuning_knobs_ensure(t) if t else None

    @property
    def knobs(self):
        """tuning.knobs: a live dict-like view (Values) of the knob values
        the next clone is written with, e.g. m.knobs['synth.body_scale'] =
        0.5; dict(m.knobs) copies it. Assigning a mapping replaces or adds
        each of its keys. Reading adds nothing to the model; the first
        assignment creates tuning.knobs."""
        return Values(self, lambda: lib.ditto_tuning_knobs(self._tuning()), self._knobs_ensure)

    @knobs.setter
    def knobs(self, mapping):
        self.knobs.update(mapping)

    @property
    def tuning_iterations(self):
        """tuning.iterations as a list of dicts (copies): index, accepted,
        note, knobs {knob: value tried}, errors {metric: relative error}."""
        t = self._tuning()
        out = []
        for i in range(lib.ditto_tuning_iteration_count(t)):
            it = lib.ditto_tuning_iteration(t, i)
            if not it:
                raise null_error()
            knobs = lib.ditto_tuning_iter_knobs(it)
            errors = lib.ditto_tuning_iter_errors(it)
            out.append({'index': lib.ditto_tuning_iter_index(it),
                        'accepted': bool(lib.ditto_tuning_iter_accepted(it)),
                        'note': _lib.decode(lib.ditto_tuning_iter_note(it)) or '',
                        'knobs': dict(Values(self, lambda k=knobs: k)._items()),
                        'errors': dict(Values(self, lambda e=errors: e)._items())})
        return out

    def __repr__(self):
        if not self._ptr:
            return '<ditto.Model closed>'
        return '<ditto.Model schema=%d services=%r>' % (self.schema, self.services)

