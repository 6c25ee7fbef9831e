# SPDX-License-Identifier: MIT
"""The request body generator (lib/synth/body_gen.c, first part of the
synth stage): generated bodies build with a plain C compiler and never
fault on their own regions, for random models; and a body generated from a
live profile, profiled in turn, has the original's instruction mix and
working set."""

import os
import random
import subprocess

import pytest

import ditto
from conftest import GT_DIR, cpu_profile, gt_path

KEYS = ['alu.rr.none.64.base', 'alu.mi.rw.32.base', 'alu.rm.none.64.base', 'mov.rm.r.64.base',
        'mov.mr.w.32.base', 'mov.r.w.64.base', 'mov.r.r.64.base', 'mov.r.none.8.base',
        'cmp.ri.none.32.base', 'cmp.mr.r.64.base', 'jcc.i.none.64.base', 'jmp.i.none.64.base',
        'jmpi.r.none.64.base', 'jmpi.m.r.64.base', 'call.i.w.64.base', 'calli.m.rw.64.base',
        'ret.-.r.64.base', 'shift.rr.none.64.base', 'mul.r.none.64.base', 'div.r.none.64.base',
        'div.m.r.64.base', 'bit.rr.none.64.base', 'crc32.rr.none.64.sse4.2', 'atomic.mr.rw.64.base',
        'str.mm.rw.64.base', 'str.mr.w.8.base', 'x87.rr.none.80.x87', 'x87.m.r.64.x87',
        'vint.rm.r.128.sse2', 'vint.mr.w.128.sse2', 'vfp.rr.none.128.sse', 'vint.rrr.none.256.avx2',
        'vint.rrr.none.512.avx512', 'cvt.-.none.0.base', 'nop.m.none.32.base', 'sys.-.none.0.base',
        'other.-.none.0.base', 'no.such.class.0.base']


def build_and_run(model_path, tmp, seed, calls=1000):
    body = tmp / ('body%d.s' % seed)
    exe = tmp / ('body%d' % seed)
    subprocess.run([os.path.join(GT_DIR, 'body_tool'), str(model_path), str(body), str(seed)],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(['cc', '-o', str(exe), os.path.join(os.path.dirname(__file__),
                                                       'body_driver.c'), str(body)], check=True)
    r = subprocess.run([str(exe), str(calls)], stdout=subprocess.DEVNULL, timeout=120)
    assert r.returncode == 0, 'generated body %d failed with %d' % (seed, r.returncode)
    return exe


def random_model(rng):
    m = ditto.Model()
    svc = m.add_service('random')
    svc.add_thread('network', count=1)
    cpu = svc.add_cpu('network')
    for k in rng.sample(KEYS, rng.randint(3, len(KEYS))):
        cpu.add_mix(k, rng.randint(1, 1000))
    for _ in range(rng.randint(1, 6)):
        cpu.dws.add(64 << rng.randint(0, 22), rng.randint(1, 1000))
        cpu.raw.add(1 << rng.randint(0, 10), rng.randint(1, 100))
        cpu.waw.add(1 << rng.randint(0, 10), rng.randint(1, 100))
        cpu.branches.add(rng.randint(0, 8) * 16 + rng.randint(0, 8), rng.randint(1, 100))
    cpu.insts_per_request.add(rng.randint(100, 20000), 10)
    return m


@pytest.mark.parametrize('seed', range(1, 9))
def test_generated_bodies_build_and_never_fault(tmp_path, seed):
    path = tmp_path / 'model.msgpack'
    random_model(random.Random(seed)).save(str(path))
    build_and_run(path, tmp_path, seed)


def func_shares(mix):
    out = {}
    for k, v in mix.items():
        out[k.split('.')[0]] = out.get(k.split('.')[0], 0) + v
    total = sum(out.values())
    return {k: v / total for k, v in out.items()}


def test_body_from_a_live_profile_has_its_mix_and_working_set(target, tmp_path):
    t = target('gt_memory', 'seq', 262144)
    orig, _ = cpu_profile(t.pid, windows=2, insts=30000)
    path = tmp_path / 'orig.msgpack'
    orig.save(str(path))
    exe = build_and_run(path, tmp_path, 1)
    clone_proc = subprocess.Popen([str(exe)], stdout=subprocess.PIPE)
    try:
        assert clone_proc.stdout.readline().strip() == b'ready'
        clone, _ = cpu_profile(clone_proc.pid, windows=2, insts=30000)
    finally:
        clone_proc.kill()
        clone_proc.wait()
        clone_proc.stdout.close()
    a, b = orig.service(0).cpu[0], clone.service(0).cpu[0]
    fa, fb = func_shares(a.mix), func_shares(b.mix)
    tv = 0.5 * sum(abs(fa.get(k, 0) - fb.get(k, 0)) for k in set(fa) | set(fb))
    print('function mix distance %.3f, D1 miss rate %.3f vs %.3f' % (
        tv, a.miss_rate(32768), b.miss_rate(32768)))
    assert tv < 0.2
    assert abs(a.miss_rate(32768) - b.miss_rate(32768)) < 0.1
    assert abs(a.loads / a.instructions - b.loads / b.instructions) < 0.15
