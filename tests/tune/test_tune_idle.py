# SPDX-License-Identifier: MIT
"""The graph tuner's idle rows (issue 21): a tier that sat idle between
requests has lost its working set from the caches and pays for it on the
next request (the traced shop's node tiers cost 2-4 times as much CPU per
request at 30 requests/s as at 300, docs/graph.md). With --idle-rate, the
original graph and each clone graph are also loaded at that rate, evenly
spaced, and each tier's synth.footprint_kib (data its clone walks per
request) is stepped until its CPU per request there is its original's,
and the share of those walks made after the response
(synth.footprint_after_share, one for the graph) until the front's p50
latency there is its original's.

The graph is tests/tune/proxy_graph.py's, its back end given a 4 MiB
table its work reads at random (--work-bytes): a working set the idle
time costs, most of it after the response (--work-after: 200000 steps
once it has answered, 20000 before), where its callers do not wait for
it. Real servers, the real profiler (root), srv_client, the clone graph
as `ditto up` starts it."""

import os

import pytest

import ditto as dt
from conftest import QUICK, ditto
from proxy_graph import original_command, profile, running, tune_original

pytestmark = [pytest.mark.root]

TABLE = ['--work-bytes', str(4 << 20), '--work-after', '200000']
BOUND = 0.20    # an idle run is 100 requests, each paying its own misses
RATE = '30'


@pytest.fixture(scope='module')
def base(tmp_path_factory):
    """The graph profiled at one connection: (the model's path, its ports)."""
    d = tmp_path_factory.mktemp('idle')
    with running(TABLE) as (front, back):
        return profile(front, back, str(d / 'base.dm'), 1), (front.port, back.port)


@pytest.fixture(scope='module')
def tuned(base, tmp_path_factory):
    d = tmp_path_factory.mktemp('idle')
    loop = ['-i', '2', '--seconds', '1'] if QUICK else ['-i', '8', '--seconds', '2']
    r, report = tune_original(base[0], d, ['--idle-rate', RATE] + loop,
                              original_command(*base[1], TABLE))
    assert report is not None and r.returncode in (0, 3), r.stderr[-3000:]
    return {'rc': r.returncode, 'report': report, 'dir': d}


def test_each_tier_has_an_idle_row_from_the_original(tuned):
    rows = {r['metric']: r for r in tuned['report']['rows']}
    assert {'cpu_ns_per_request:front', 'cpu_ns_per_request:back',
            'cpu_ns_per_request_idle:front', 'cpu_ns_per_request_idle:back',
            'latency_p50_ns_idle'} == set(rows)
    for tier in ('front', 'back'):
        idle = rows['cpu_ns_per_request_idle:' + tier]
        assert idle['original'] > 0 and idle['clone'] > 0, idle
    m = dt.Model.load(str(tuned['dir'] / 'tuned.dm'))
    assert {'front/synth.footprint_kib', 'back/synth.footprint_kib',
            'front/synth.footprint_after_share', 'back/synth.footprint_after_share'} \
        <= set(m.knobs), m.knobs
    assert m.knobs['front/synth.footprint_after_share'] == \
        m.knobs['back/synth.footprint_after_share']


@pytest.mark.skipif(QUICK, reason='plain build only (the clones are not instrumented)')
def test_the_idle_rows_are_met_or_the_footprint_is_said_to_be_at_its_limit(tuned):
    # A clone whose CPU per request rises more after idle time than its
    # original's with no footprint at all cannot be helped by this knob:
    # the report says so. Otherwise the footprint brings the row within
    # its bound in some iteration: not necessarily in the best one, which
    # is the best over all rows (a CI run on a host where the original's
    # front cost 1.5 ms per request idle, ten times its cost at one
    # connection, had the front's idle row 16.5% off in its last
    # iteration, while its best iteration had it 62% off and other rows
    # in).
    rows = {r['metric']: r for r in tuned['report']['rows']}
    stalls = tuned['report']['stalls']
    m = dt.Model.load(str(tuned['dir'] / 'tuned.dm'))
    history = [{k: round(v, 3) for k, v in it['errors'].items()} for it in m.tuning_iterations]
    for tier in ('front', 'back'):
        row = rows['cpu_ns_per_request_idle:' + tier]
        limit = [s for s in stalls if s['metric'] == row['metric'] and
                 '%s/synth.footprint_kib is at its limit 0' % tier in s['text']]
        print(tier, row, limit, m.knobs.get(tier + '/synth.footprint_kib'), history)
        if limit:
            assert row['clone'] > row['original'], (row, history)
        else:
            # (its own bound when the original's rounds spread wider)
            bound = max(BOUND, row['bound'])
            assert min(it.get(row['metric'], 1e9) for it in history) <= bound, (row, history)


@pytest.mark.skipif(QUICK, reason='plain build only (the clones are not instrumented)')
def test_the_walks_go_after_the_response_as_the_originals_work_does(tuned):
    # The back end's original reads its table mostly after it answered:
    # its CPU per request after idle time is high, its callers' latency
    # not. A clone back end whose footprint holds that CPU, walked before
    # the response, makes the clone graph answer slower than the original
    # after idle time; the share moves the walks after the response. So
    # some iteration holds both the back end's idle row and the front's
    # p50 there, and every such iteration has most of the walk after the
    # response (not necessarily the best one, the best over all rows).
    rows = {r['metric']: r for r in tuned['report']['rows']}
    row = rows['latency_p50_ns_idle']
    m = dt.Model.load(str(tuned['dir'] / 'tuned.dm'))
    history = [(round(it['errors'].get('cpu_ns_per_request_idle:back', 1e9), 3),
                round(it['errors'].get(row['metric'], 1e9), 3),
                it['knobs'].get('back/synth.footprint_kib', 0),
                round(it['knobs'].get('back/synth.footprint_after_share', 0), 2))
               for it in m.tuning_iterations]
    print(row, m.knobs.get('back/synth.footprint_after_share'),
          m.knobs.get('back/synth.footprint_kib'), history)
    feet = [v for it in m.tuning_iterations for k, v in it['knobs'].items()
            if k.endswith('/synth.footprint_kib')]
    if not any(feet):
        # A host whose caches outlast 33 ms of idle time (not this kind's,
        # bench/idle_chase): the tiers' idle cost is about their base
        # cost, no footprint is needed, and with none there is no walk to
        # place, so the share stands still and says why (the step itself
        # is held to that by graph_step_test.c's "no walk" case).
        back = rows['cpu_ns_per_request_idle:back']
        assert back['error'] <= max(BOUND, back['bound']) or \
            back['clone'] > back['original'], (back, history)
        assert all(share == 0 for idle, p50, foot, share in history), history
        stalls = [s['text'] for s in tuned['report']['stalls']
                  if s['metric'] == row['metric']]
        assert row['error'] <= row['bound'] or any('stood still' in t for t in stalls), \
            (row, stalls)
        return
    both = [share for idle, p50, foot, share in history if idle <= BOUND and p50 <= BOUND]
    assert both, (row, history)
    assert min(both) > 0.3, (row, history)


def test_idle_rate_needs_the_original(base, tmp_path):
    r = ditto('tune', base[0], '-o', str(tmp_path / 't'), '--idle-rate', RATE,
              check=False)
    assert r.returncode == 1 and "idle_qps needs the original's command" in r.stderr, r.stderr
    redis = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fuzz', 'corpus',
                         'synth_generate', 'profiled-redis.msgpack')
    r = ditto('tune', redis, '-o', str(tmp_path / 'v'), '--idle-rate', RATE, check=False)
    assert r.returncode == 2 and '--idle-rate is for a graph' in r.stderr, r.stderr
    r = ditto('tune', base[0], '-o', str(tmp_path / 'w'), '--idle-rate', '0.5', check=False)
    assert r.returncode == 2 and "--idle-rate: '0.5' is not in [1, 1000]" in r.stderr, r.stderr
    with pytest.raises(dt.DittoError, match="idle_qps needs the original's command"):
        dt.tune_graph(dt.Model.load(base[0]), str(tmp_path / 'u'), idle_rate=30,
                      original=['true'], profile_targets=True)
