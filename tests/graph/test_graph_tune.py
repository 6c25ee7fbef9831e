# SPDX-License-Identifier: MIT
"""Tuning a clone graph (issue 21, item 6): the traced shop behind nginx
is profiled with the kernel graph, then `ditto tune` of the graph model
starts the original graph (tests/graph/shop_run.py, each tier on its port
in the profile) and measures each tier's CPU time per front request under
the tuner's own load with nothing attached (the profiler's probes cost the
node tiers more than their own work); then it writes, builds and runs the
clone graph (as `ditto up` does), loads its front tier the same way, and
holds each tier to its original's, one knob per tier; then it starts the
original graph again and the best clone graph side by side for the
end-to-end latency rows at low, medium and high load, with the original
against itself as the noise floor.

Untuned, the clone graph of this shop answers several times faster than
the original (the profile has no CPU windows: every tier's body is the
default one). The test asserts that the targets are the unprofiled
original's (the tuner says which tiers' profiles it did not follow), that
every tier ends within the bound, that the tuned knobs are in the saved
model per tier (so `ditto synth` of it gives the tuned tree), that the
latency rows are there for both graphs and that the verdict and exit
status follow them; the table is printed. The tuned graph's end-to-end
latency is not yet the original's (docs/graph.md: node's CPU per request
at a low rate is twice its CPU per request under the tuner's load, where
a clone tier's is the same), which the verdict says.

Real node, redis-server, memcached, nginx on 127.0.0.1; the profiler is
the real BPF collector (root)."""

import json
import os
import shutil
import subprocess
import sys

import pytest

import ditto
from shop import Shop, install
from test_graph_clone import CLI, PROFILED, free_port, profile

HERE = os.path.dirname(os.path.abspath(__file__))
# Seconds of load before the profile: node compiles for tens of seconds,
# and a profile of a tier still compiling holds its JIT's mprotect and
# madvise calls per request, which the clone replays whatever its knob
# (after 3 s, one run's clone front could not get below 1.3 times its
# original's CPU per request).
WARM_S = 15
# The loop aims at 5%; a tier's CPU per request moves by several percent
# between runs on this kind of host, so the test holds the best to 10%.
AIM, BOUND = 0.05, 0.10
# Sanitized build (meson.build): three iterations, no latency rows, and
# the loop's output checked rather than its convergence.
QUICK = bool(os.environ.get('DITTO_GRAPH_TUNE_QUICK'))

pytestmark = [
    pytest.mark.skipif(shutil.which('node') is None, reason='node is not installed'),
    pytest.mark.skipif(os.geteuid() != 0, reason='profiling needs root'),
]


@pytest.fixture(scope='module')
def tuned(tmp_path_factory):
    install()
    d = tmp_path_factory.mktemp('tune')
    model = str(d / 'shop.dm')
    with Shop(nginx=True) as shop:
        profile({t: (shop.pids[t], shop.ports[t]) for t in PROFILED}, model,
                shop.url('/page'), free_port(), warm=WARM_S)
        ports = dict(shop.ports)
    # The original graph again on the profile's ports: the tuner finds its
    # tiers there, measures them unprofiled for the targets, then runs it
    # beside the clone graph for the latency rows (the clone's tiers move
    # to free ports then, as `ditto up` does when a port is taken).
    port = ports.pop('nginx')
    argv = [CLI, 'tune', model, '-o', str(d / 'tree'), '-i', '3' if QUICK else '8', '-b',
            str(AIM), '--seconds', '3', '--path', '/page', '-j', str(d / 'report.json'),
            '--save', str(d / 'tuned.dm')]
    if not QUICK:
        argv += ['-L', '--latency-seconds', '2', '--original-port', str(port), '--',
                 sys.executable, os.path.join(HERE, 'shop_run.py'), str(port)] + \
            ['%s=%d' % kv for kv in sorted(ports.items())]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=1100)
    print(r.stdout)
    print('\n'.join(l for l in r.stderr.splitlines() if 'warning: synth' not in l))
    report = json.load(open(d / 'report.json')) if (d / 'report.json').exists() else None
    return {'rc': r.returncode, 'stderr': r.stderr, 'report': report, 'dir': d,
            'model': model}


def rows(report):
    return {row['metric']: row for row in report['rows']}


def test_every_tier_is_tuned_within_the_bound(tuned):
    assert tuned['report'] is not None, tuned['stderr'][-3000:]
    cpu = {k.split(':', 1)[1]: v for k, v in rows(tuned['report']).items()
           if k.startswith('cpu_ns_per_request:')}
    assert set(cpu) == set(PROFILED), cpu
    for tier, row in sorted(cpu.items()):
        assert row['original'] > 0 and row['clone'] > 0, (tier, row)
        assert QUICK or row['error'] <= BOUND, (tier, row)


@pytest.mark.skipif(QUICK, reason='the sanitized build tunes to the profile')
def test_the_targets_are_the_original_run_without_the_profiler(tuned):
    m = json.loads(subprocess.run([CLI, 'model', 'json', tuned['model']], capture_output=True,
                                  text=True, check=True).stdout)
    svc = {s['name']: s for s in m['services']}
    req = svc['nginx']['requests']['count']
    for tier in PROFILED:
        row = rows(tuned['report'])['cpu_ns_per_request:' + tier]
        prof = sum(t.get('cpu_ns', 0) for t in svc[tier].get('threads', [])) / req
        print('%s: %.0f us per front request unprofiled, %.0f in the profile'
              % (tier, row['original'] / 1e3, prof / 1e3))
        # measured, not the profile's figure (which the same division of
        # the same numbers would give exactly); named when off by more
        # than the bound
        assert abs(row['original'] - prof) > 1e-6 * prof, (tier, row, prof)
        said = "tier '%s': %.0f ns per front request in the original graph run without " \
            "the profiler" % (tier, row['original']) in tuned['stderr']
        assert said or abs(row['original'] - prof) <= 0.051 * row['original'], (tier, row, prof)


def test_the_tuned_knobs_are_per_tier_in_the_saved_model(tuned):
    m = ditto.Model.load(str(tuned['dir'] / 'tuned.dm'))
    scales = {k.split('/')[0]: v for k, v in m.knobs.items() if k.endswith('/synth.cpu_scale')}
    assert set(scales) == set(PROFILED), dict(m.knobs)
    # The node tiers spend a millisecond or more of CPU per request, nginx
    # a tenth of one; the clone's runtime is most of a light tier's CPU,
    # so the knobs keep their order, not their ratio.
    assert QUICK or scales['front'] > scales['nginx'], scales
    assert m.warnings() == []
    assert len(m.tuning_iterations) >= 2
    # The tree tune kept is the best one's: it builds and its manifest is whole.
    man = json.load(open(tuned['dir'] / 'tree' / 'graph.json'))
    assert {n['name'] for n in man['nodes']} >= set(PROFILED)
    for n in man['nodes']:
        assert os.access(tuned['dir'] / 'tree' / n['dir'] / 'clone', os.X_OK), n


@pytest.mark.skipif(QUICK, reason='no latency rows in the sanitized build\'s short loop')
def test_end_to_end_latency_rows_set_the_clone_graph_against_the_original(tuned):
    r = rows(tuned['report'])
    print('\n%-22s %14s %14s' % ('metric', 'original', 'clone'))
    for level in ('low', 'medium', 'high'):
        for k in ('p50_ns_' + level, 'p99_ns_' + level, 'p99_ns_%s_noise' % level):
            assert k in r, sorted(r)
            assert r[k]['original'] > 0 and r[k]['clone'] > 0, r[k]
            print('%-22s %14.0f %14.0f' % (k, r[k]['original'], r[k]['clone']))
    sat = r['saturation_qps']
    print('%-22s %14.1f %14.1f' % ('saturation_qps', sat['original'], sat['clone']))
    print('verdict:', tuned['report']['verdict'])
    assert sat['original'] > 0 and sat['clone'] > 0, sat
    # The whole is part of the verdict: bounded p99 rows out of bound
    # leave the graph not converged (exit 3), and the verdict names one.
    out = [k for k, v in r.items() if k.startswith('p99_ns_') and v['bound'] > 0 and
           v['error'] > v['bound']]
    tiers = all(v['error'] <= AIM for k, v in r.items() if k.startswith('cpu_ns_per_request:'))
    converged = tiers and not out
    assert tuned['report']['converged'] == converged, (out, tuned['report']['verdict'])
    assert tuned['rc'] == (0 if converged else 3), tuned['stderr'][-3000:]
    assert not out or 'end to end: p99_ns_' in tuned['report']['verdict']
