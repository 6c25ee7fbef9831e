# SPDX-License-Identifier: MIT
"""Python binding of libditto over its public C API (ctypes).

    import ditto
    m = ditto.Model.load('redis.model')
    print(m.services, m.get('services[0].requests.count'))

The library is loaded from $DITTO_LIBRARY if set, else from where meson
installed it with this package, else as libditto.so.0 (see _lib.py).
"""

from . import _lib
from ._version import __version__
from .errors import (BuildError, CorruptError, DittoError, DittoTypeError, InvalidError,
                     LimitError, LoadError,
                     MismatchError, NotFoundError, OptionsError, SchemaError, last_error,
                     strerror)
from .hist import Hist
from .profile import (GAPS, IdleProfileError, Profile, breakpoints_work, discover, profile,
                      profile_cpu, step_mode_detect, STEP_MODES, TRACE_FORMATS, import_traces)
from .graph_tree import Up, build_graph, down, synth_graph, up
from .synth import build, deploy, synth, synth_knobs
from .load import load
from .measure import counters_available, measure
from .otlp import OtlpReceiver
from .tune import TuneReport, tune, tune_graph
from .graph import Edge, Graph, graph_compare, graph_dot
from .model import (Comparison, Cpu, Meta, Metric, Model, Network, Outbound, Requests,
                    Service, Syscall, ThreadClass)

__all__ = ['Model', 'Hist', 'Metric', 'Comparison', 'Service', 'ThreadClass', 'Syscall',
           'Requests', 'Outbound', 'Network', 'Meta', 'DittoError', 'CorruptError', 'SchemaError',
           'InvalidError',
           'LimitError', 'MismatchError', 'NotFoundError', 'DittoTypeError', 'OptionsError',
           'version', 'version_number', 'strerror', 'last_error', 'MODEL_SCHEMA', 'NAME_MAX',
           'Profile', 'profile', 'discover', 'profile_cpu', 'IdleProfileError', 'GAPS',
           'step_mode_detect', 'breakpoints_work',
           'STEP_MODES', 'Cpu', 'synth', 'synth_knobs', 'build', 'deploy', 'synth_graph',
           'build_graph', 'up', 'down', 'Up', 'BuildError', 'load',
           'LoadError',
           'measure', 'counters_available', 'tune', 'tune_graph', 'TuneReport', 'import_traces',
           'TRACE_FORMATS', 'OtlpReceiver', 'Graph', 'Edge', 'graph_compare', 'graph_dot']

# DITTO_MODEL_SCHEMA of the header this binding was written against.
MODEL_SCHEMA = 1

# DITTO_NAME_MAX: the longest name a model may hold, in UTF-8 bytes. A name
# is valid UTF-8 with no NUL and no control character but tab and newline;
# Model.validate() raises InvalidError for one that is not (model.h).
NAME_MAX = 255


def version():
    """Version of the loaded libditto, "MAJOR.MINOR.PATCH"."""
    return _lib.decode(_lib.lib.ditto_version())


def version_number():
    """MAJOR*10000 + MINOR*100 + PATCH of the loaded libditto."""
    return _lib.lib.ditto_version_number()
