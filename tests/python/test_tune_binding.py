# SPDX-License-Identifier: MIT
"""The binding of the tune stage's feedback loop (ditto.tune, TuneReport)
and of the model's tuning section (Model.knobs, Model.tuning_iterations).

The loop runs for real on a tiny model of the fuzz corpus, without an
original (the model's recorded figures are the targets): it writes, builds
and measures clones under valgrind. That part is skipped under the
sanitizers (the interpreter's preloaded runtimes would reach the clones)
and with DITTO_TUNE_QUICK, like the tune suite's long loops."""

import errno
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import textwrap

import pytest

import ditto

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fuzz', 'corpus',
                      'synth_generate')
MODEL = os.path.join(CORPUS, 'random-5-length-prefixed.msgpack')
TUNED = ('insts_per_request', 'branch_mispredict_rate', 'i1_miss_rate', 'd1_miss_rate',
         'll_miss_rate')


def _sanitized():
    preload = os.environ.get('LD_PRELOAD', '')
    return bool(os.environ.get('ASAN_OPTIONS') or os.environ.get('UBSAN_OPTIONS') or
                'asan' in preload or 'ubsan' in preload)


def _loop_skip_reason():
    if os.environ.get('DITTO_TUNE_QUICK'):
        return 'DITTO_TUNE_QUICK: the feedback loop runs in the plain build only'
    if _sanitized():
        return 'sanitizer build: clones under valgrind run in the plain build only'
    if not shutil.which('valgrind'):
        return 'valgrind not installed'
    if not shutil.which(os.environ.get('CC', 'cc')):
        return 'no C compiler to build clones'
    return None


needs_loop = pytest.mark.skipif(_loop_skip_reason() is not None,
                                reason=_loop_skip_reason() or '')


@pytest.fixture
def model():
    return ditto.Model.load(MODEL)


# --- the tuning section ------------------------------------------------------

def test_untuned_model_has_no_iterations_and_knobs_behave_like_a_dict(model):
    assert model.tuning_iterations == []
    knobs = model.knobs
    before = dict(knobs)
    assert 'synth.no_such_knob' not in knobs
    with pytest.raises(KeyError):
        knobs['synth.no_such_knob']
    assert knobs.get('synth.no_such_knob', 7.0) == 7.0
    knobs['synth.body_scale'] = 0.5
    knobs['synth.d1_mpki'] = 2
    assert knobs['synth.body_scale'] == 0.5
    assert model.knobs['synth.d1_mpki'] == 2.0          # a view: a new one sees it
    assert isinstance(model.knobs['synth.d1_mpki'], float)
    assert len(knobs) == len(before) + 2
    assert list(knobs)[-2:] == ['synth.body_scale', 'synth.d1_mpki']   # insertion order


def test_knob_replaced_keeps_its_place(model):
    model.knobs['a.first'] = 1
    model.knobs['b.second'] = 2
    model.knobs['a.first'] = 3
    assert dict(model.knobs) == {'a.first': 3.0, 'b.second': 2.0}
    assert list(model.knobs) == ['a.first', 'b.second']


def test_non_finite_knob_is_refused_and_leaves_the_map_unchanged(model):
    model.knobs['synth.body_scale'] = 1.5
    for bad in (math.inf, -math.inf, math.nan):
        with pytest.raises(ditto.DittoError) as e:
            model.knobs['synth.body_scale'] = bad
        assert e.value.code == -errno.EINVAL
    assert model.knobs['synth.body_scale'] == 1.5


def test_knobs_survive_save_and_load(model, tmp_path):
    model.knobs = {'synth.body_scale': 0.5, 'synth.ll_mpki': 0.125}
    model.knobs.update({'synth.far_code_scale': 0.25})
    path = tmp_path / 'tuned.msgpack'
    model.save(str(path))
    back = ditto.Model.load(str(path))
    assert dict(back.knobs) == {'synth.body_scale': 0.5, 'synth.ll_mpki': 0.125,
                                'synth.far_code_scale': 0.25}
    assert back.get('tuning.knobs') == dict(back.knobs)


def test_knobs_of_a_closed_model_raise(model):
    knobs = model.knobs
    model.close()
    with pytest.raises(ValueError):
        dict(knobs)


# --- bad input to ditto.tune (refused before any clone is written) ---------

@pytest.mark.parametrize('d', [None, ''])
def test_tune_without_a_directory_is_an_options_error(model, d):
    with pytest.raises(ditto.OptionsError) as e:
        ditto.tune(model, d, iterations=1, requests=300)
    assert 'directory' in str(e.value)
    assert e.value.report is None
    assert model.tuning_iterations == []


def test_tune_into_a_directory_of_unrelated_files_is_refused(model, tmp_path):
    (tmp_path / 'notes.txt').write_text('mine\n')
    with pytest.raises(ditto.DittoError) as e:
        ditto.tune(model, str(tmp_path), iterations=1, requests=300)
    assert e.value.code == -errno.ENOTEMPTY
    assert e.value.report is None
    assert sorted(os.listdir(tmp_path)) == ['notes.txt']
    assert model.tuning_iterations == []


def test_tune_of_an_unknown_service_is_not_found(model, tmp_path):
    with pytest.raises(ditto.NotFoundError):
        ditto.tune(model, str(tmp_path / 'clone'), service='no-such-service', iterations=1)


def test_tune_bound_not_below_one_is_an_options_error(model, tmp_path):
    with pytest.raises(ditto.OptionsError):
        ditto.tune(model, str(tmp_path / 'clone'), bound=1.0, iterations=1)


def test_tune_original_must_be_an_argv_list(model, tmp_path):
    with pytest.raises(TypeError):
        ditto.tune(model, str(tmp_path / 'clone'), original='redis-server --port 6390')


def test_sigint_handler_is_restored_after_a_refused_call(model):
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(ditto.OptionsError):
        ditto.tune(model, None)
    assert signal.getsignal(signal.SIGINT) is before


# --- the loop, for real ------------------------------------------------------

@pytest.fixture(scope='module')
def tuned(tmp_path_factory):
    """One run of ditto.tune: 2 iterations of 300 requests on the tiny model."""
    reason = _loop_skip_reason()
    if reason:
        pytest.skip(reason)
    m = ditto.Model.load(MODEL)
    d = str(tmp_path_factory.mktemp('tune') / 'clone')
    calls = []
    handler = signal.getsignal(signal.SIGINT)
    wakeup = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(wakeup)
    report = ditto.tune(m, d, iterations=2, requests=300,
                        progress=lambda *a: calls.append(a))
    return {'model': m, 'dir': d, 'report': report, 'calls': calls, 'handler': handler,
            'wakeup': wakeup}


@needs_loop
def test_tune_runs_the_iterations_asked_and_reports_the_tuned_metrics(tuned):
    r = tuned['report']
    assert isinstance(r, ditto.TuneReport)
    assert 1 <= r.iterations <= 2
    assert r.iterations == 2 or r.converged
    assert not r.interrupted
    metrics = [row['metric'] for row in r.rows]
    assert 'insts_per_request' in metrics
    for row in r.rows:
        assert set(row) == {'metric', 'original', 'clone', 'error', 'bound'}
        assert row['error'] >= 0
        if row['metric'] in TUNED:
            assert row['bound'] == 0.05
    ipr = r.row('insts_per_request')
    assert ipr['original'] > 0 and ipr['clone'] > 0


@needs_loop
def test_report_says_whether_and_why_it_did_not_converge(tuned):
    r = tuned['report']
    assert r.verdict.startswith('converged in' if r.converged else 'NOT converged after')
    for s in r.stalls:
        assert set(s) == {'metric', 'knob', 'kind', 'steps', 'text'}
        assert s['kind'] in ('no_effect', 'at_limit', 'unfinished')
        assert s['knob'].startswith('synth.') and s['knob'] in s['text']
    # Every tuned metric the best clone leaves out of bound says why.
    out = {row['metric'] for row in r.rows
           if row['metric'] in TUNED and row['bound'] > 0 and row['error'] > row['bound']}
    assert out <= {s['metric'] for s in r.stalls}
    j = r.to_json()
    assert j['verdict'] == r.verdict and j['stalls'] == r.stalls


@needs_loop
def test_report_json_matches_the_rows(tuned):
    r = tuned['report']
    j = r.to_json()
    assert j['iterations'] == r.iterations
    assert j['converged'] == r.converged
    assert [row['metric'] for row in j['rows']] == [row['metric'] for row in r.rows]
    assert json.loads(json.dumps(j)) == j


@needs_loop
def test_report_without_latency_has_no_plot(tuned, tmp_path):
    with pytest.raises(ditto.NotFoundError):
        tuned['report'].plot_svg(str(tmp_path / 'latency.svg'))
    assert not (tmp_path / 'latency.svg').exists()


@needs_loop
def test_every_iteration_is_recorded_in_the_model(tuned, tmp_path):
    m, r = tuned['model'], tuned['report']
    its = m.tuning_iterations
    assert len(its) == r.iterations
    assert [it['index'] for it in its] == list(range(1, r.iterations + 1))
    assert its[0]['accepted']           # the first clone is the best so far
    for it in its:
        assert isinstance(it['knobs'], dict) and isinstance(it['errors'], dict)
        assert isinstance(it['note'], str)
        assert 'insts_per_request' in it['errors']
    # the best knobs are left in the model, and saved with it
    knobs = dict(m.knobs)
    assert 'synth.body_scale' in knobs
    path = str(tmp_path / 'tuned.msgpack')
    m.save(path)
    back = ditto.Model.load(path)
    assert dict(back.knobs) == knobs
    assert back.tuning_iterations == its


@needs_loop
def test_progress_is_called_once_per_iteration(tuned):
    calls, r = tuned['calls'], tuned['report']
    assert [c[0] for c in calls] == list(range(1, r.iterations + 1))
    for iteration, max_error, worst, best, note in calls:
        assert max_error >= 0
        assert worst in TUNED
        assert isinstance(best, bool)
        assert isinstance(note, str) and note
    assert calls[0][3]                  # the first clone is the best so far


@needs_loop
def test_best_clone_is_left_built_in_the_directory(tuned):
    exe = os.path.join(tuned['dir'], 'clone')
    assert os.path.isfile(exe) and os.access(exe, os.X_OK)
    assert not os.path.exists(tuned['dir'] + '.try')


@needs_loop
def test_sigint_handler_and_wakeup_fd_are_restored(tuned):
    assert signal.getsignal(signal.SIGINT) is tuned['handler']
    now = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(now)
    assert now == tuned['wakeup']


_CTRL_C = textwrap.dedent('''
    import json, os, signal, sys, threading
    import ditto

    m = ditto.Model.load(sys.argv[1])
    pid = os.getpid()

    def progress(iteration, *rest):
        # Ctrl-C while the next clone is built or measured, from another
        # thread: the interpreter is inside ditto_tune() meanwhile.
        if iteration == 1:
            threading.Timer(1.0, os.kill, (pid, signal.SIGINT)).start()

    r = ditto.tune(m, sys.argv[2], iterations=8, requests=20000, progress=progress)
    print(json.dumps({'iterations': r.iterations, 'interrupted': r.interrupted,
                      'notes': [it['note'] for it in m.tuning_iterations],
                      'handler': signal.getsignal(signal.SIGINT) is signal.default_int_handler,
                      'clone': os.access(os.path.join(sys.argv[2], 'clone'), os.X_OK)}))
''')


@needs_loop
def test_ctrl_c_stops_the_loop_and_keeps_the_best_clone(tmp_path):
    d = str(tmp_path / 'clone')
    p = subprocess.run([sys.executable, '-c', _CTRL_C, MODEL, d], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=240)
    assert p.returncode == 0, p.stderr.decode(errors='replace')[-2000:]
    out = json.loads(p.stdout.decode().strip().splitlines()[-1])
    assert out['interrupted']
    assert 1 <= out['iterations'] < 8
    # the stop reached the measurement running, not just the next iteration
    assert any('stopped' in n for n in out['notes']), out['notes']
    assert out['handler']
    assert out['clone']
