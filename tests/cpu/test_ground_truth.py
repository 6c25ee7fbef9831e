# SPDX-License-Identifier: MIT
"""The CPU profiler recovers what the ground-truth programs do by
construction (tests/cpu/README.md): reuse distances of sweeps, pointer
chases and random walks over known working sets; taken and transition
rates of known branch patterns; instruction mixes; dependency distances."""

import pytest

from conftest import buckets, cpu_profile, share

# Every test runs under each stepping mechanism (conftest.step_mode).
pytestmark = pytest.mark.usefixtures('step_mode')

KIB = 1024


@pytest.mark.parametrize('size', [16 * KIB, 256 * KIB])
def test_sequential_sweep_reuses_every_line_at_the_working_set_size(target, size):
    t = target('gt_memory', 'seq', size)
    _, cpu = cpu_profile(t.pid, windows=2, insts=30000)
    assert cpu['instructions'] == 60000 and cpu['windows'] == 2
    assert cpu['undecoded'] == 0
    # Exactly SIZE bytes: all non-cold loads in the bucket starting at SIZE.
    assert share(cpu['dws'], lambda lo, hi: lo == size) >= 0.99, buckets(cpu['dws'])
    # 8 loads in 11 instructions, none of them chased.
    assert abs(cpu['loads'] / cpu['instructions'] - 8 / 11) < 0.02
    # (a few instructions of the write of "ready" may still be in a window)
    assert cpu['stores'] <= 0.001 * cpu['instructions']
    assert cpu['chased_loads'] <= 0.001 * cpu['loads']
    # Cold: the first sweep of each window, no more.
    assert cpu['dws_cold'] <= 2 * size // 64 + 2


@pytest.mark.one_mode_per_split
def test_sequential_sweep_of_8_mib_needs_one_long_window(target):
    size = 8192 * KIB
    t = target('gt_memory', 'seq', size)
    _, cpu = cpu_profile(t.pid, windows=1, insts=400000)
    assert share(cpu['dws'], lambda lo, hi: lo == size) >= 0.99, buckets(cpu['dws'])
    assert cpu['dws_cold'] == size // 64


@pytest.mark.one_mode_per_split
@pytest.mark.parametrize('size', [256 * KIB, 2048 * KIB])
def test_pointer_chase_is_all_chased_loads_at_the_working_set_size(target, size):
    t = target('gt_memory', 'chase', size)
    _, cpu = cpu_profile(t.pid, windows=1, insts=max(30000, size // 64 * 10 * 5 // 4 * 2))
    assert cpu['chased_loads'] >= 0.99 * cpu['loads'] > 0
    assert share(cpu['dws'], lambda lo, hi: lo == size) >= 0.99, buckets(cpu['dws'])
    # A chased load depends on the load before it: store-free, RAW 1 mostly.
    assert share(cpu['raw'], lambda lo, hi: lo == 1) >= 0.7


def test_random_walk_spreads_reuse_evenly_below_the_working_set(target):
    size = 64 * KIB
    t = target('gt_memory', 'rand', size)
    _, cpu = cpu_profile(t.pid, windows=2, insts=60000)
    dws = cpu['dws']
    assert share(dws, lambda lo, hi: hi < 2 * size) >= 0.99, buckets(dws)
    # Uniform over 64..SIZE: about half above SIZE/2, a quarter in the next.
    assert abs(share(dws, lambda lo, hi: lo == size // 2) - 0.5) < 0.1, buckets(dws)
    assert abs(share(dws, lambda lo, hi: lo == size // 4) - 0.25) < 0.08, buckets(dws)
    assert cpu['chased_loads'] <= 0.001 * cpu['loads']


# key = taken_bin * 16 + transition_bin, bins ~2^-k, 8: never.
@pytest.mark.parametrize('mode,key', [
    ('always', 8 * 16 + 8),       # taken 1 (folded 0), no transitions
    ('alternate', 1 * 16 + 0),    # taken 1/2, transitions 1
    ('one_in_8', 3 * 16 + 2),     # taken 1/8, transitions 1/4
    ('random', 1 * 16 + 1),       # taken ~1/2, transitions ~1/2
])
def test_branch_taken_and_transition_rates_are_recovered(target, mode, key):
    t = target('gt_branch', mode)
    _, cpu = cpu_profile(t.pid, windows=2, insts=20000)
    br = dict((lo, c) for lo, _, c in buckets(cpu['branches']))
    total = sum(br.values())
    # Two conditional branches execute equally often: the one under test
    # and the loop back-edge (always taken: key 136).
    assert abs(br.get(key, 0) / total - (1.0 if key == 136 else 0.5)) < 0.02, br
    if key != 136:
        assert abs(br.get(136, 0) / total - 0.5) < 0.02, br


@pytest.mark.parametrize('mode,cls,expect', [
    ('add', 'alu.rr.none.64.base', 16 / 18),
    ('load', 'mov.rm.r.64.base', 12 / 14),
    ('div', 'div.r.none.64.base', 8 / 10),
])
def test_instruction_mix_of_known_loops(target, mode, cls, expect):
    t = target('gt_mix', mode)
    m, cpu = cpu_profile(t.pid, windows=1, insts=20000)
    mix = m.service(0).cpu[0].mix
    assert abs(mix.get(cls, 0) / cpu['instructions'] - expect) < 0.01, mix
    # Each iteration: one loop counter update and one taken back-edge.
    assert mix.get('jcc.i.none.64.base', 0) > 0
    if mode == 'load':
        assert abs(cpu['loads'] / cpu['instructions'] - 12 / 14) < 0.01
        # Twelve lines of one 4 KiB buffer: reuse 768 bytes.
        assert share(cpu['dws'], lambda lo, hi: lo <= 768 <= hi) >= 0.99
    # A loop of a few dozen bytes: every fetch reuses within 256 bytes.
    assert share(cpu['iws'], lambda lo, hi: hi <= 255) >= 0.99


@pytest.mark.parametrize('n', [1, 2, 4, 8])
def test_register_dependency_chain_distance(target, n):
    t = target('gt_mix', 'dep', n)
    _, cpu = cpu_profile(t.pid, windows=1, insts=20000)
    # 32 adds over n registers: RAW at n (or n+1 across the back-edge).
    want = [lo for lo, hi, _ in buckets(cpu['raw']) if lo <= n <= hi][0]
    assert share(cpu['raw'], lambda lo, hi: lo == want) >= (0.9 if n > 1 else 0.85), \
        buckets(cpu['raw'])
    # Each add writes its register again n instructions later (WAW), and
    # the flags again at the next instruction.
    assert share(cpu['waw'], lambda lo, hi: lo <= n <= hi) >= (0.95 if n == 1 else 0.45), \
        buckets(cpu['waw'])


def test_jit_and_self_modifying_code_is_counted_and_decoded_afresh(target):
    t = target('gt_jit')
    m, cpu = cpu_profile(t.pid, windows=2, insts=10000)
    assert cpu['jit_instructions'] >= 0.9 * cpu['instructions']
    assert cpu['undecoded'] == 0
    assert m.service(0).cpu[0].mix.get('alu.ri.none.64.base', 0) > 0.3 * cpu['instructions']
    assert t.alive()
