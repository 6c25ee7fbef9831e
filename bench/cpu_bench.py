# SPDX-License-Identifier: MIT
"""CPU profiler benchmarks, each measured against peers in the same run and
printed as ratios (bench/README.md). Needs root, valgrind, redis.

  cpu_bench.py stepping   instructions per second: native, our single-
                          stepping windows, cachegrind, lackey
  cpu_bench.py redis      redis-server throughput while CPU windows are
                          taken, against untraced and under cachegrind
  cpu_bench.py crosscheck cachegrind's D1/LL miss rates of redis-server
                          next to the rates predicted from our windows
  cpu_bench.py stepmodes  stepping speed of each mechanism this host has
                          (breakpoint, syscall_stops) on a register loop,
                          a getppid loop and a loaded redis-server, as
                          ratios to the register loop under the same one
Run through bench/cpu-bench.sh, which sets the library and tool paths.
"""

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

import ditto

BUILD = os.environ.get('DITTO_BUILD', 'build')
CLI = os.path.join(BUILD, 'examples', 'ditto', 'ditto')
GT = os.path.join(BUILD, 'tests', 'cpu')
GEOMETRY = ['--I1=32768,8,64', '--D1=32768,8,64', '--LL=1048576,16,64']
D1, LL = 32768, 1048576


def timed(argv, **kw):
    t0 = time.monotonic()
    r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True, **kw)
    return time.monotonic() - t0, r.stderr.decode()


def field(text, name):
    m = re.search(name + r':\s+([\d,]+)', text)
    if not m:
        raise RuntimeError('no %r in:\n%s' % (name, text))
    return int(m.group(1).replace(',', ''))


def stepping(reps=400):
    """gt_mix add (18 instructions per iteration, 1024 per repetition)."""
    prog = [os.path.join(GT, 'gt_mix'), 'add', '0']
    _, out = timed(['valgrind', '--tool=cachegrind', '--cache-sim=yes',
                    '--cachegrind-out-file=/dev/null'] + GEOMETRY + prog + [str(reps)])
    insts = field(out, r'I\s+refs')
    native_s = min(timed(prog + [str(reps)])[0] for _ in range(3))
    cg_s, _ = timed(['valgrind', '--tool=cachegrind', '--cache-sim=yes',
                     '--cachegrind-out-file=/dev/null'] + GEOMETRY + prog + [str(reps)])
    lk_reps = max(1, reps // 100)
    lk_s, _ = timed(['valgrind', '--tool=lackey', '--trace-mem=yes', '--log-file=/dev/null']
                    + prog + [str(lk_reps)])
    lk_insts = insts * lk_reps / reps
    rates = {'native': insts / native_s, 'cachegrind': insts / cg_s, 'lackey': lk_insts / lk_s}
    for label, argv in (('ditto (add loop)', prog), ('ditto (random walk 256 KiB)',
                        [os.path.join(GT, 'gt_memory'), 'rand', '262144'])):
        t = subprocess.Popen(argv, stdout=subprocess.PIPE)
        t.stdout.readline()
        m = ditto.profile_cpu(t.pid, windows=4, window_insts=50000, spacing=0.1)
        t.kill()
        t.wait()
        cpu = m.get('services[0].cpu[0]')
        rates[label] = cpu['instructions'] / (cpu['stepped_ns'] / 1e9)
    print('instructions per second (gt_mix add, %d instructions; lackey on 1/100 of them)'
          % insts)
    print('  %-28s %14s %12s %14s' % ('tool', 'insts/s', 'slowdown', 'vs cachegrind'))
    for k, v in rates.items():
        print('  %-28s %14.0f %11.0fx %13.3fx' % (k, v, rates['native'] / v,
                                                  v / rates['cachegrind']))


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def wait_port(port, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(('127.0.0.1', port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError('nothing listens on %d' % port)


def redis_argv(port):
    return ['redis-server', '--port', str(port), '--bind', '127.0.0.1', '--save', '',
            '--appendonly', 'no']


def throughput(port, n):
    out = subprocess.run(['redis-benchmark', '-p', str(port), '-n', str(n), '-c', '10', '-t',
                          'get,set', '-q', '--csv'], stdout=subprocess.PIPE, check=True,
                         timeout=600).stdout.decode().splitlines()[1:]
    vals = [float(line.split('","')[1].strip('"')) for line in out if '","' in line]
    return sum(vals) / len(vals)


def stop(proc, sig=signal.SIGTERM):
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


SPACINGS = (0.25, 2.0)


def label(spacing):
    return 'ditto windows /%gs' % spacing


def windows_throughput(pid, port, n, spacing, info):
    """Throughput while `ditto profile --cpu-only` takes windows back to back."""
    with tempfile.TemporaryDirectory() as d:
        cli = subprocess.Popen([CLI, 'profile', '--cpu-only', '--pid', str(pid), '--tid',
                                str(pid), '-W', '10000', '-S', str(spacing), '-q', '-o',
                                os.path.join(d, 'm')])
        time.sleep(0.3)
        t0 = time.monotonic()
        qps = throughput(port, n)
        elapsed = time.monotonic() - t0
        if cli.poll() is not None:
            raise RuntimeError('ditto profile --cpu-only exited early')
        stop(cli, signal.SIGINT)
        cpu = ditto.Model.load(os.path.join(d, 'm')).get('services[0].cpu[0]')
    info[0].append(cpu['windows'])
    info[1].append(cpu['stepped_ns'] / 1e9 / elapsed)
    return qps


def redis(rounds=3, n=100000):
    port = free_port()
    srv = subprocess.Popen(redis_argv(port), stdout=subprocess.DEVNULL)
    res = {'untraced': []}
    info = {}
    for spacing in SPACINGS:
        res[label(spacing)] = []
        info[spacing] = ([], [])
    try:
        wait_port(port)
        for _ in range(rounds):
            res['untraced'].append(throughput(port, n))
            for spacing in SPACINGS:
                res[label(spacing)].append(windows_throughput(srv.pid, port, n, spacing,
                                                              info[spacing]))
    finally:
        stop(srv)
    port = free_port()
    cg = subprocess.Popen(['valgrind', '--tool=cachegrind', '--cache-sim=yes',
                           '--cachegrind-out-file=/dev/null'] + GEOMETRY + redis_argv(port),
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        res['cachegrind'] = [throughput(port, n // 4) for _ in range(rounds)]
    finally:
        stop(cg)
    base = sum(res['untraced']) / rounds
    for spacing in SPACINGS:
        windows, held = info[spacing]
        print('CPU windows of 20000 instructions %g s apart: %s windows per round, event loop '
              'held %s of the time' % (spacing, ' '.join(map(str, windows)),
                                       ' '.join('%.0f%%' % (100 * h) for h in held)))
    print('redis-server throughput, redis-benchmark -c 10 -t get,set, %d rounds' % rounds)
    for k, v in res.items():
        mean = sum(v) / len(v)
        print('  %-20s %10.0f req/s  ratio %.3f  (rounds %s)' % (
            k, mean, mean / base, ' '.join('%.0f' % x for x in v)))


def crosscheck(n=200000):
    """Whole-run cachegrind of redis vs. the miss rates our windows predict."""
    port = free_port()
    cg = subprocess.Popen(['valgrind', '--tool=cachegrind', '--cache-sim=yes',
                           '--branch-sim=yes', '--cachegrind-out-file=/dev/null'] + GEOMETRY +
                          redis_argv(port), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_port(port)
        throughput(port, n)
    finally:
        stop(cg, signal.SIGINT)
    out = cg.stderr.read().decode()
    refs, d1, lld = field(out, r'D\s+refs'), field(out, r'D1\s+misses'), field(out, r'LLd misses')
    irefs, i1 = field(out, r'I\s+refs'), field(out, r'I1\s+misses')

    port = free_port()
    srv = subprocess.Popen(redis_argv(port), stdout=subprocess.DEVNULL)
    try:
        wait_port(port)
        load = subprocess.Popen(['redis-benchmark', '-p', str(port), '-n', str(50 * n), '-c',
                                 '10', '-t', 'get,set', '-q'], stdout=subprocess.DEVNULL)
        time.sleep(1)
        m = ditto.profile_cpu(srv.pid, tids=[srv.pid], windows=8, window_insts=50000)
        stop(load)
    finally:
        stop(srv)
    cpu = m.service(0).cpu[0]
    rows = [('I1 misses / I ref', i1 / irefs, cpu.miss_rate(32768, instructions=True)),
            ('D1 misses / D ref', d1 / refs, cpu.miss_rate(D1)),
            ('LLd misses / D ref', lld / refs, cpu.miss_rate(LL))]
    print('redis-server: cachegrind (whole run, %d GET/SET) vs. predicted from %d stepped '
          'instructions of its event loop' % (2 * n, cpu.instructions))
    print('  %-20s %12s %12s %12s' % ('rate', 'cachegrind', 'predicted', 'abs diff'))
    for name, meas, pred in rows:
        print('  %-20s %12.4f %12.4f %12.4f' % (name, meas, pred, abs(pred - meas)))
    print('  (cachegrind counts start-up and every thread; the windows see the event loop '
          'in steady state, cold lines left out)')


def held_rate(pid, tid, mode):
    """Instructions per second the thread was held, 4 windows of 20000."""
    m = ditto.profile_cpu(pid, tids=[tid], windows=4, window_insts=20000, spacing=0.05,
                          step_mode=mode)
    cpu = m.get('services[0].cpu[0]')
    return cpu['instructions'] / (cpu['stepped_ns'] / 1e9)


def stepmodes(rounds=3):
    modes = ['syscall_stops'] + (['breakpoint'] if ditto.breakpoints_work() else [])
    gts = {'register loop': [os.path.join(GT, 'gt_mix'), 'add'],
           'getppid loop': [os.path.join(GT, 'gt_syscall'), 'calls']}
    procs = {}
    port = free_port()
    srv = subprocess.Popen(redis_argv(port), stdout=subprocess.DEVNULL)
    load = None
    res = {(w, m): [] for w in list(gts) + ['redis under load'] for m in modes}
    try:
        for name, argv in gts.items():
            procs[name] = subprocess.Popen(argv, stdout=subprocess.PIPE)
            procs[name].stdout.readline()
        wait_port(port)
        load = subprocess.Popen(['redis-benchmark', '-p', str(port), '-n', '100000000', '-c',
                                 '8', '-t', 'get,set', '-q'], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(1)
        for _ in range(rounds):	# interleaved: every mode and target each round
            for m in modes:
                for name, p in procs.items():
                    res[(name, m)].append(held_rate(p.pid, p.pid, m))
                res[('redis under load', m)].append(held_rate(srv.pid, srv.pid, m))
    finally:
        for p in list(procs.values()) + ([load] if load else []):
            p.kill()
            p.wait()
        stop(srv)
    print('stepping speed per mechanism (instructions per second held; breakpoints %s here), '
          '%d rounds' % ('fire' if 'breakpoint' in modes else 'do not fire', rounds))
    print('  %-18s %-14s %10s %8s  %s' % ('target', 'mechanism', 'insts/s', 'ratio',
                                         'rounds (ratio to the register loop, same mechanism)'))
    for (name, m), v in res.items():
        mean = sum(v) / len(v)
        base = sum(res[('register loop', m)]) / rounds
        print('  %-18s %-14s %10.0f %8.3f  %s' % (name, m, mean, mean / base,
                                                ' '.join('%.0f' % x for x in v)))


if __name__ == '__main__':
    what = sys.argv[1:] or ['stepping', 'redis', 'crosscheck', 'stepmodes']
    for w in what:
        {'stepping': stepping, 'redis': redis, 'crosscheck': crosscheck,
         'stepmodes': stepmodes}[w]()
        print()
