# SPDX-License-Identifier: MIT
"""The graph tuner's p99 row (issue 21): an original graph whose slowest
requests are much slower than its typical one (a tier that now and then
misses a cache, takes a lock or collects garbage: the traced shop's node
tiers answer their p99 at 4-7 times their p50) has a tail its clone
lacks when every request of a tier runs the same body. With --tail, the
front's p99 under the base load is held to the original's by every
tier's synth.body_spread (one value for the graph: each request's body
length drawn around its mean).

The graph is tests/tune/proxy_graph.py's, its back end's requests slow
now and then: 30 in 1000, at random, work 8 times as long (--slow-share,
--slow-times), so its CPU per request is 1.2 times its usual request's
and its p99 several times its p50. Real servers, the real profiler
(root), srv_client, the clone graph as `ditto up` starts it."""

import os

import pytest

import ditto as dt
from conftest import QUICK, ditto
from proxy_graph import original_command, profile, running, tune_original

pytestmark = [pytest.mark.root]

SLOW = ['--slow-share', '30', '--slow-times', '8']
NEAR = 0.15


@pytest.fixture(scope='module')
def base(tmp_path_factory):
    """The graph profiled at one connection: (the model's path, its ports)."""
    d = tmp_path_factory.mktemp('tail')
    with running(SLOW) as (front, back):
        return profile(front, back, str(d / 'base.dm'), 1), (front.port, back.port)


def tune_once(base, d):
    loop = ['-i', '2', '--seconds', '1'] if QUICK else ['-i', '10', '--seconds', '2']
    r, report = tune_original(base[0], d, ['--tail'] + loop,
                              original_command(*base[1], SLOW))
    assert report is not None and r.returncode in (0, 3), r.stderr[-3000:]
    return {'rc': r.returncode, 'report': report, 'dir': d}


def history(tuned):
    """Each iteration's (p99 error, body spread)."""
    m = dt.Model.load(str(tuned['dir'] / 'tuned.dm'))
    return [(round(it['errors'].get('latency_p99_ns', 1e9), 3),
             round(it['knobs'].get('back/synth.body_spread', 0), 2))
            for it in m.tuning_iterations]


def near_with_spread(tuned):
    """The spreads of the iterations whose p99 came near the original's."""
    row = {r['metric']: r for r in tuned['report']['rows']}['latency_p99_ns']
    return [spread for error, spread in history(tuned) if error <= max(row['bound'], NEAR)]


@pytest.fixture(scope='module')
def tuned(base, tmp_path_factory):
    # A burst of the host's other work can hold the clone graph's p99 far
    # from the original's for most of a loop (one loop of ten here: the
    # clone at spread 0 1.5-3.5 times the original's p99 for four
    # iterations while its front's knob swung): a loop whose p99 never
    # came near with a spread is run once more, and two in a row fail.
    first = tune_once(base, tmp_path_factory.mktemp('tail'))
    if QUICK or (near_with_spread(first) and max(near_with_spread(first)) >= 0.3):
        return first
    print('the p99 never came near with a spread: once more', history(first))
    return tune_once(base, tmp_path_factory.mktemp('tail'))


def test_the_graph_has_a_p99_row_from_the_original(tuned):
    rows = {r['metric']: r for r in tuned['report']['rows']}
    assert {'cpu_ns_per_request:front', 'cpu_ns_per_request:back',
            'latency_p99_ns'} == set(rows), rows
    p99 = rows['latency_p99_ns']
    assert p99['original'] > 0 and p99['clone'] > 0, p99
    m = dt.Model.load(str(tuned['dir'] / 'tuned.dm'))
    assert m.knobs['front/synth.body_spread'] == m.knobs['back/synth.body_spread'], m.knobs
    for it in m.tuning_iterations:
        assert it['knobs']['front/synth.body_spread'] == it['knobs']['back/synth.body_spread']


@pytest.mark.skipif(QUICK, reason='plain build only (the clones are not instrumented)')
def test_the_spread_gives_the_clone_the_originals_tail(tuned):
    # The first clone graph runs every body the same length: its p99 is
    # well below the original's (43-80% short in eleven runs). Some
    # iteration with a spread well above 0 has its p99 near the
    # original's: the tail comes from the spread. Near: within 15% or the
    # row's own bound. A p99 of two seconds at one connection is the 30th
    # slowest of some 3000 requests and moves by 5-10% between runs of one
    # clone, more while the tiers' knobs move; the best iteration is the
    # least largest error over all rows, and one loop of ten ended with
    # its p99 20% off (not asked for here: the verdict says it). An
    # iteration at spread 0 with bodies a quarter of their targets came
    # within 10% by chance once, hence the spread asked for with it.
    rows = {r['metric']: r for r in tuned['report']['rows']}
    row = rows['latency_p99_ns']
    h = history(tuned)
    print(row, h)
    first_error, first_spread = h[0]
    assert first_spread == 0 and first_error > 0.3, (row, h)
    near = near_with_spread(tuned)
    assert near and max(near) >= 0.3, (row, h)


def test_tail_needs_the_original(base, tmp_path):
    r = ditto('tune', base[0], '-o', str(tmp_path / 't'), '--tail', check=False)
    assert r.returncode == 1 and "tail needs the original's command" in r.stderr, r.stderr
    r = ditto('tune', base[0], '-o', str(tmp_path / 'v'), '--tail', '--profile-targets',
              '--', 'true', check=False)
    assert r.returncode == 1 and "tail needs the original's command" in r.stderr, r.stderr
    with pytest.raises(dt.DittoError, match="tail needs the original's command"):
        dt.tune_graph(dt.Model.load(base[0]), str(tmp_path / 'u'), tail=True)
    redis = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fuzz', 'corpus',
                         'synth_generate', 'profiled-redis.msgpack')
    r = ditto('tune', redis, '-o', str(tmp_path / 'w'), '--tail', check=False)
    assert r.returncode == 2 and '--tail is for a graph' in r.stderr, r.stderr
