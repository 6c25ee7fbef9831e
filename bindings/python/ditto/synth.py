# SPDX-License-Identifier: MIT
"""Synth stage: a model -> a self-contained clone source tree, and its build.

    m = ditto.Model.load('redis.msgpack')
    ditto.synth(m, 'redis-clone', seed=7)
    ditto.build('redis-clone')          # redis-clone/clone
"""

from ctypes import byref, c_char_p, c_double

from . import _lib
from ._lib import lib
from .errors import check


def synth_knobs():
    """The generator's knobs: {name: (default, min, max)}
    (ditto_synth_knob); values outside the range are clamped."""
    out = {}
    for i in range(lib.ditto_synth_knob_count()):
        name, d, lo, hi = c_char_p(), c_double(), c_double(), c_double()
        check(lib.ditto_synth_knob(i, byref(name), byref(d), byref(lo), byref(hi)))
        out[name.value.decode()] = (d.value, lo.value, hi.value)
    return out


def _knob_map(knobs):
    """A dict of knob values as a ditto_values the caller frees."""
    v = lib.ditto_values_new()
    if not v:
        check(-12)
    try:
        for k, x in knobs.items():
            check(lib.ditto_values_set(v, _lib.encode(k), float(x)))
    except BaseException:
        lib.ditto_values_free(v)
        raise
    return v


def synth(model, directory, service=None, seed=0, port=0, force=False, no_clamp=False,
          knobs=None):
    """Write the clone tree of one service of model into directory
    (ditto_synth_write). Sections the model lacks get defaults, with
    warnings through the log; an invalid model raises InvalidError; an
    existing directory raises DittoError (code -EEXIST) unless force (then only a
    clone tree or an empty directory is replaced). Figures past the limits
    that protect the host are clamped, each named in a warning; no_clamp
    lifts those limits (not the runtime's own caps). knobs: a dict of
    generator knobs (synth_knobs() names them) used instead of the
    model's tuning.knobs; the model is only read."""
    kv = _knob_map(knobs) if knobs is not None else None
    try:
        o = _lib.make_opts(_lib.SynthOpts, service=_lib.encode(service) if service else None,
                           seed=int(seed), port=int(port), force=bool(force),
                           no_clamp=bool(no_clamp), knobs=kv)
        check(lib.ditto_synth_write(model._p, _lib.encode(str(directory)), byref(o)))
    finally:
        if kv:
            lib.ditto_values_free(kv)
    return str(directory)


def build(directory, cc=None):
    """Build a clone tree with make (ditto_synth_build); returns the path of
    the clone executable. Raises BuildError with the log's tail on failure."""
    o = _lib.make_opts(_lib.BuildOpts, cc=_lib.encode(cc) if cc else None)
    check(lib.ditto_synth_build(_lib.encode(str(directory)), byref(o)))
    return str(directory) + '/clone'
