# SPDX-License-Identifier: MIT
"""The feedback loop on a ground-truth server with known CPU work per
request (srv_epoll --work): its clone, detuned on purpose, is brought back
within bounds of the original as cachegrind measures both; plus the
report's latency rows and plot, Ctrl-C, and bad input."""

import json
import os
import shutil
import signal
import subprocess

import pytest

from conftest import CLI, QUICK, SERVERS, Service, ditto, free_port

import ditto as dt

WORK = ['--work', '300', '--work-bytes', '65536']
TUNED = ('insts_per_request', 'branch_mispredict_rate', 'i1_miss_rate', 'd1_miss_rate',
         'll_miss_rate')
# Far from where the loop must end: a body a third as long, branches made
# easier, no extra misses, triple the far code.
DETUNED = {'synth.body_scale': 0.3, 'synth.branch_bias': -0.5, 'synth.d1_mpki': 0,
           'synth.far_code_scale': 3}

slow = pytest.mark.skipif(QUICK, reason='plain build only (valgrind runs uninstrumented clones)')


def server(port):
    return [os.path.join(SERVERS, 'srv_epoll'), '--port', str(port), '--max-seconds', '300'] + WORK


def client(port):
    return [os.path.join(SERVERS, 'srv_client'), '--port', str(port), '--connections', '4',
            '--requests', str(10 ** 7), '--request-bytes', '100', '--max-seconds', '60']


@pytest.fixture(scope='module')
def gt_model(tmp_path_factory):
    """The model of srv_epoll --work, profiled live under srv_client."""
    if os.geteuid() != 0:
        pytest.skip('profiling needs root')
    d = tmp_path_factory.mktemp('gt')
    port = free_port()
    srv = Service(server(port), port)
    load = subprocess.Popen(client(port), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ditto('clone', '--pid', srv.pid, '-o', d / 'clone', '-d', '3', '-q')
    finally:
        load.kill()
        load.wait()
        srv.stop()
    return d / 'clone.msgpack'


def detuned(gt_model, path):
    m = dt.Model.load(str(gt_model))
    for k, v in DETUNED.items():
        m.knobs[k] = v
    m.save(str(path))
    return path


# `ditto tune` exit status when the loop ran and the clone is out of bounds.
NOT_CONVERGED = 3


def tune(model, out, *args, original=True, check=True):
    """Runs the CLI's loop; with check, fails unless it ran (converged or not)."""
    port = free_port()
    argv = ['tune', model, '-o', out, '--original-port', port] + list(args)
    if original:
        argv += ['--'] + server(port)
    r = ditto(*argv, check=False, timeout=900)
    if check:
        assert r.returncode in (0, NOT_CONVERGED), (r.returncode, r.stdout, r.stderr)
    return r


def tune_detuned(model, tmp_path):
    """One loop from the detuned model: (its run, its report)."""
    # srv_epoll serves from one thread: 10000 requests measure it as
    # repeatably as 30000 (the default, for multi-threaded services).
    # 12 iterations, as the quick start allows.
    shutil.rmtree(tmp_path / 'clone', ignore_errors=True)
    r = tune(model, tmp_path / 'clone', '-i', '12', '-n', '10000', '--json',
             tmp_path / 'report.json',
             '--save', tmp_path / 'tuned.msgpack')
    return r, json.loads((tmp_path / 'report.json').read_text())


@pytest.mark.root
@slow
def test_detuned_clone_is_brought_back_within_bounds(gt_model, tmp_path):
    model = detuned(gt_model, tmp_path / 'detuned.msgpack')
    r, report = tune_detuned(model, tmp_path)
    if not report['converged']:
        # A loop whose last rows sit at the bound (a check of 2026-12-05
        # ended 5.06% off in branch mispredictions, bound 5%, in 1 run of
        # 4; 7 runs of 7 converged on 2026-12-07) gets a second run: two
        # in a row that do not converge fail.
        print('first loop did not converge:', r.stdout[-2000:])
        r, report = tune_detuned(model, tmp_path)
    rows = {row['metric']: row for row in report['rows']}
    assert report['converged'], r.stdout
    assert r.returncode == 0 and 'verdict: converged in' in r.stdout
    assert report['iterations'] <= 12
    for name in TUNED:
        assert rows[name]['error'] <= rows[name]['bound'] == 0.05, (name, rows[name])
    # The original really does the known work: ~10 instructions and half a
    # random branch per step, and the clone matches it.
    assert 300 * 8 < rows['insts_per_request']['original'] < 300 * 30
    assert rows['branch_mispredict_rate']['original'] > 0.1
    # The loop started far off, and its iterations are in the model.
    tuned = dt.Model.load(str(tmp_path / 'tuned.msgpack'))
    its = tuned.tuning_iterations
    assert len(its) == report['iterations']
    assert max(its[0]['errors'].values()) > 0.3
    assert its[0]['knobs']['synth.body_scale'] == DETUNED['synth.body_scale']
    best = [it for it in its if it['accepted']][-1]
    assert max(best['errors'].values()) <= 0.05
    knobs = dict(tuned.knobs)
    assert all(knobs[k] == v for k, v in best['knobs'].items())
    assert os.access(tmp_path / 'clone' / 'clone', os.X_OK)
    assert not (tmp_path / 'clone.try').exists()


@pytest.mark.root
@slow
def test_report_has_latency_rows_and_plot(gt_model, tmp_path):
    r = tune(gt_model, tmp_path / 'clone', '-i', '1', '-n', '5000', '--latency',
             '--latency-seconds', '1',
             '--json', '-', '--plot', tmp_path / 'latency.svg')
    report = json.loads(r.stdout)
    rows = {row['metric']: row for row in report['rows']}
    for name in ('p50_ns_low', 'p99_ns_low', 'p99_ns_medium', 'p99_ns_high', 'saturation_qps',
                 'syscalls_per_request', 'socket_bytes_per_request', 'p99_ns_low_noise',
                 'p99_ns_medium_noise', 'p99_ns_high_noise', 'syscalls_per_request_noise'):
        assert name in rows, name
    # The syscall rows average the same rounds: the original's second
    # turn counts the same calls per request within a few percent
    # (srv_epoll: an epoll_wait, a read and a write per request at most).
    calls = rows['syscalls_per_request_noise']
    assert calls['original'] == rows['syscalls_per_request']['original']
    assert 1 < calls['original'] <= 3.2 and calls['bound'] == 0
    assert abs(calls['clone'] - calls['original']) < 0.1 * calls['original']
    # The clone's calls row is held to 1% or the original's own noise.
    noise = abs(calls['clone'] - calls['original']) / calls['original']
    assert abs(rows['syscalls_per_request']['bound'] - max(0.01, noise)) < 1e-9
    # The noise rows set the original's p99 against its own second turn.
    for level in ('low', 'medium', 'high'):
        noise = rows['p99_ns_%s_noise' % level]
        assert noise['original'] == rows['p99_ns_%s' % level]['original']
        assert noise['clone'] > 0 and noise['bound'] == 0
        # The low and medium p99 rows are held to 10% or the original's
        # own spread, whichever is wider; the high row is shown only.
        own = abs(noise['clone'] - noise['original']) / noise['original']
        want = max(0.10, own) if level != 'high' else 0
        assert abs(rows['p99_ns_%s' % level]['bound'] - want) < 1e-9, (level, own)
    # The CPU rows: the clone's windows against the model's (distances)
    # and against the original's under the same load (cpu backend):
    # srv_epoll --work reads a table whose address it loaded, so most of
    # its loads are chased.
    for name in ('mix_distance', 'dependency_distance'):
        assert 0 <= rows[name]['error'] <= 1 and rows[name]['bound'] == 0, rows[name]
    assert rows['chased_load_share']['original'] > 0.5, rows['chased_load_share']
    assert 0 < rows['chased_load_share']['clone'] <= 1
    assert rows['loads_per_instruction']['original'] < 0.1
    assert rows['raw_distance_log2_mean']['clone'] > 0
    assert rows['saturation_qps']['original'] > 1000
    assert rows['saturation_qps']['clone'] > 1000
    for side in ('original', 'clone'):
        pts = report['latency'][side]
        assert len(pts) == 4
        for p in pts:
            assert 0 < p['p50_ns'] <= p['p99_ns'] <= p['max_ns']
    # The levels are shares of the original's saturation, the same for
    # both sides; on two shared cores the generator reaches most of them.
    sat = rows['saturation_qps']['original']
    for side in ('original', 'clone'):
        low = report['latency'][side][0]
        assert abs(low['qps'] - 0.25 * sat) < 1e-6 * sat
        assert low['achieved_qps'] > 0.3 * low['qps']
    svg = (tmp_path / 'latency.svg').read_text()
    assert svg.startswith('<svg') and svg.count('<polyline') == 4
    # The cpu backend profiled both sides: a host without a PMU is
    # warned about once per process, not once per profile.
    assert r.stderr.count('hardware counters unavailable') <= 1, r.stderr


@pytest.mark.root
@slow
def test_without_the_original_targets_come_from_the_model(gt_model, tmp_path):
    r = tune(gt_model, tmp_path / 'clone', '-i', '2', '-n', '5000', '--json', tmp_path / 'r.json',
             original=False)
    assert "the original is not measured" in r.stderr
    report = json.loads((tmp_path / 'r.json').read_text())
    names = [row['metric'] for row in report['rows']]
    assert 'insts_per_request' in names and 'd1_miss_rate' in names
    assert 'branch_mispredict_rate' not in names    # no counters were recorded
    assert report['iterations'] <= 2


@pytest.mark.root
@slow
def test_ctrl_c_keeps_the_best_clone(gt_model, tmp_path):
    port = free_port()
    p = subprocess.Popen([CLI, 'tune', str(gt_model), '-o', str(tmp_path / 'clone'), '-i', '20',
                          '-n', '5000', '--original-port', str(port), '--'] + server(port),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in p.stderr:
        if 'iteration 1:' in line:
            break
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    # Stopped after one iteration, the clone is judged as it is.
    assert p.returncode == (0 if 'verdict: converged' in out else NOT_CONVERGED), err
    assert 'stopped: the best clone so far is in' in err
    assert os.access(tmp_path / 'clone' / 'clone', os.X_OK)
    m = dt.Model.load(str(tmp_path / 'clone.msgpack'))
    assert 1 <= len(m.tuning_iterations) < 20


@pytest.mark.root
@slow
def test_a_loop_that_does_not_converge_exits_3_with_its_verdict(gt_model, tmp_path):
    # One iteration cannot bring every metric within 0.1%.
    r = tune(gt_model, tmp_path / 'clone', '-i', '1', '-n', '3000', '--bound', '0.001',
             '--json', tmp_path / 'r.json')
    assert r.returncode == NOT_CONVERGED, (r.stdout, r.stderr)
    verdict = r.stdout.splitlines()[-1]
    assert verdict.startswith('verdict: NOT converged after 1 iteration:'), r.stdout
    report = json.loads((tmp_path / 'r.json').read_text())
    assert not report['converged'] and report['verdict'] in verdict
    worst = verdict.split(': ')[2].split()[0]
    assert worst in {s['metric'] for s in report['stalls']}
    # The clone is still kept, and the model saved.
    assert os.access(tmp_path / 'clone' / 'clone', os.X_OK)
    assert (tmp_path / 'clone.msgpack').exists()


# The generator knobs that change the clone's code, pinned (the model's
# values ignored) so that every iteration builds the same code; far code
# at its largest, where the I1 miss rate of the original (a few in 10^7)
# is far off.
PINNED = {'synth.far_code_scale': 20, 'synth.body_scale': 1, 'synth.branch_bias': 0,
          'synth.d1_mpki': 0, 'synth.ll_mpki': 0, 'synth.background_rate': 1,
          'synth.hold_share': 0}


@pytest.mark.root
@slow
def test_a_knob_without_effect_is_detected_reported_and_no_longer_stepped(gt_model, tmp_path,
                                                                         monkeypatch):
    monkeypatch.setenv('DITTO_SYNTH_PIN_KNOBS', ','.join('%s=%g' % kv for kv in PINNED.items()))
    r = tune(gt_model, tmp_path / 'clone', '-i', '7', '-n', '3000', '--json',
             tmp_path / 'r.json', '--save', tmp_path / 'tuned.msgpack')
    assert r.returncode == NOT_CONVERGED, (r.stdout, r.stderr)
    assert 'i1_miss_rate: knob synth.far_code_scale had no effect over' in r.stderr
    report = json.loads((tmp_path / 'r.json').read_text())
    stalls = {s['metric']: s for s in report['stalls']}
    i1 = stalls['i1_miss_rate']
    assert i1['knob'] == 'synth.far_code_scale' and i1['kind'] == 'no_effect', i1
    assert 2 <= i1['steps'] <= 3 and 'had no effect over' in i1['text']
    assert 'stall: i1_miss_rate: knob synth.far_code_scale had no effect' in r.stdout
    # The knob went down (the clone misses far more than the original),
    # took the larger step to its limit (0), and then stayed there.
    knobs = [it['knobs'].get('synth.far_code_scale', 1)
             for it in dt.Model.load(str(tmp_path / 'tuned.msgpack')).tuning_iterations]
    assert knobs[0] == 1 and 0 in knobs, knobs
    assert all(k == 0 for k in knobs[knobs.index(0):]), knobs
    assert len(knobs) >= 4


def test_bad_input_is_refused_clearly(tmp_path):
    model = os.path.join(os.path.dirname(__file__), '..', 'fuzz', 'corpus', 'synth_generate',
                         'random-5-length-prefixed.msgpack')
    busy = tmp_path / 'busy'
    busy.mkdir()
    (busy / 'notes.txt').write_text('mine')
    r = ditto('tune', model, '-o', busy, check=False)
    assert r.returncode == 1 and 'not a clone tree' in r.stderr
    assert (busy / 'notes.txt').read_text() == 'mine'
    r = ditto('tune', tmp_path / 'missing.msgpack', '-o', tmp_path / 'c', check=False)
    assert r.returncode == 1
    r = ditto('tune', model, check=False)
    assert r.returncode == 2 and '--output' in r.stderr
    r = ditto('tune', model, '-o', tmp_path / 'c', '--bound', '2', check=False)
    assert r.returncode == 2
    r = ditto('tune', model, '-o', tmp_path / 'c', '--original-port', free_port(), '--', 'false',
              check=False)
    assert r.returncode == 1 and 'measuring the original' in r.stderr
    assert not (tmp_path / 'c').exists() or not os.listdir(tmp_path / 'c')


# About 200,000 instructions a request: a CPU window of 20,000 never holds
# a whole one, as with apache's and MariaDB's requests.
LONG_WORK = ['--work', '20000']


@pytest.fixture(scope='module')
def long_model(tmp_path_factory):
    """The model of srv_epoll --work 20000, profiled live under srv_client
    with two CPU windows: no instructions per request in it."""
    if os.geteuid() != 0:
        pytest.skip('profiling needs root')
    d = tmp_path_factory.mktemp('long')
    port = free_port()
    srv = Service([os.path.join(SERVERS, 'srv_epoll'), '--port', str(port), '--max-seconds',
                   '120'] + LONG_WORK, port)
    load = subprocess.Popen(client(port), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ditto('clone', '--pid', srv.pid, '-o', d / 'clone', '-d', '3', '-q', '--cpu-windows', '2')
    finally:
        load.kill()
        load.wait()
        srv.stop()
    return d / 'clone.msgpack'


@pytest.mark.root
@slow
def test_without_instructions_per_request_cpu_time_per_request_is_tuned(long_model, tmp_path):
    m = dt.Model.load(str(long_model))
    assert m.get('services[0].cpu[network].insts_per_request')['total'] == 0
    threads = m.get('services[0].threads')
    want = sum(t.get('cpu_ns', 0) for t in threads) / m.get('services[0].requests')['count']
    r = tune(long_model, tmp_path / 'clone', '-i', '8', '-n', '3000', '--json',
             tmp_path / 'r.json', '--save', tmp_path / 'tuned.msgpack', original=False)
    assert 'CPU windows hold no whole request: the clone\'s CPU time per request is tuned' \
        in r.stderr
    report = json.loads((tmp_path / 'r.json').read_text())
    rows = {row['metric']: row for row in report['rows']}
    assert 'insts_per_request' not in rows
    cpu = rows['cpu_ns_per_request']
    assert cpu['original'] == pytest.approx(want, rel=1e-6)
    assert cpu['bound'] == 0.10 and cpu['error'] <= 0.10, (cpu, r.stdout)
    # The default body (10,000 instructions) was far off, the knob that
    # lengthens it moved, and the best clone keeps it.
    its = dt.Model.load(str(tmp_path / 'tuned.msgpack')).tuning_iterations
    assert its[0]['errors']['cpu_ns_per_request'] > 0.4, its[0]
    best = [it for it in its if it['accepted']][-1]
    assert best['knobs']['synth.cpu_scale'] > 3, best
    assert best['errors']['cpu_ns_per_request'] <= 0.10
