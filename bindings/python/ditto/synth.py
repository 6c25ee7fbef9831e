# SPDX-License-Identifier: MIT
"""Synth stage: a model -> a self-contained clone source tree, and its build.

    m = ditto.Model.load('redis.msgpack')
    ditto.synth(m, 'redis-clone', seed=7)
    ditto.build('redis-clone')          # redis-clone/clone
    ditto.deploy('graph-clone', build=True)   # graph-clone/deploy/
"""

from ctypes import byref, c_char_p, c_double, c_uint

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


def build(directory, cc=None, static=False, cache=None):
    """Build a clone tree with make (ditto_synth_build); returns the path of
    the clone executable (clone, or clone-static linked with -static when
    static). cache: the directory that keeps the runtime's compiled objects
    between builds ('off': none; None: $DITTO_BUILD_CACHE, else
    ~/.cache/ditto/objects). Raises BuildError with the log's tail on
    failure."""
    o = _lib.make_opts(_lib.BuildOpts, cc=_lib.encode(cc) if cc else None,
                       static_link=bool(static),
                       cache_dir=_lib.encode(str(cache)) if cache is not None else None)
    check(lib.ditto_synth_build(_lib.encode(str(directory)), byref(o)))
    return str(directory) + ('/clone-static' if static else '/clone')


def deploy(directory, targets=('compose', 'kubernetes'), namespace=None, image_prefix=None,
           build=False):
    """Write directory/deploy/ for a graph tree (ditto_synth_deploy):
    docker/<node>.Dockerfile and compose.yaml ('compose'), kubernetes/*.yaml
    ('kubernetes'). targets: names or one comma-separated string.
    namespace: Kubernetes namespace (default 'default'); image_prefix:
    images are <prefix><node label>:latest (default 'ditto-'); build:
    build each tier's static binary first. Returns the deploy folder.
    Raises DittoError (InvalidError, CorruptError, ... for graph.json)."""
    if not isinstance(targets, str):
        targets = ','.join(targets)
    bits = c_uint()
    check(lib.ditto_deploy_targets_parse(_lib.encode(targets), byref(bits)))
    o = _lib.make_opts(_lib.DeployOpts, targets=bits.value,
                       k8s_namespace=_lib.encode(namespace) if namespace else None,
                       image_prefix=_lib.encode(image_prefix) if image_prefix else None,
                       build=bool(build))
    check(lib.ditto_synth_deploy(_lib.encode(str(directory)), byref(o)))
    return str(directory) + '/deploy'
