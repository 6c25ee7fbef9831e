# SPDX-License-Identifier: MIT
"""ditto.Cpu: the cpu section through the binding, and miss rates predicted
from reuse histograms (ditto_cpu_miss_rate)."""

import pytest

import ditto


def cpu_entry():
    m = ditto.Model()
    svc = m.add_service('svc')
    svc.add_thread('network', count=1)
    return m, svc.add_cpu('network')


def test_cpu_fields_round_trip_through_msgpack():
    m, cpu = cpu_entry()
    cpu.instructions = 1000
    cpu.loads = 300
    cpu.chased_loads = 30
    cpu.jit_instructions = 10
    cpu.stepped_ns = 123456
    cpu.add_mix('alu.rr.none.64.base', 600)
    cpu.add_mix('mov.rm.r.64.base', 400)
    cpu.branches.add(1 * 16 + 0, 50)
    m.validate()
    back = ditto.Model.from_bytes(m.to_bytes())
    c = back.service(0).find_cpu('network')
    assert (c.instructions, c.loads, c.chased_loads, c.jit_instructions, c.stepped_ns) == \
        (1000, 300, 30, 10, 123456)
    assert c.mix == {'alu.rr.none.64.base': 600, 'mov.rm.r.64.base': 400}
    assert c.branches.buckets == [(16, 16, 50)]
    assert [x.thread_class for x in back.service(0).cpu] == ['network']


def test_jit_instructions_above_instructions_is_invalid():
    m, cpu = cpu_entry()
    cpu.instructions = 5
    cpu.jit_instructions = 6
    with pytest.raises(ditto.InvalidError):
        m.validate()


def test_miss_rate_counts_reuses_beyond_the_cache():
    _, cpu = cpu_entry()
    cpu.dws.add(64, 100)           # reuse within one line: always a hit
    cpu.dws.add(16384, 100)        # half the cache: a hit
    cpu.dws.add(262144, 200)       # beyond a 32 KiB cache: a miss
    cpu.dws_cold = 400
    assert cpu.miss_rate(32768) == pytest.approx(0.5)
    assert cpu.miss_rate(32768, count_cold=True) == pytest.approx(0.75)
    assert cpu.miss_rate(1 << 20) == pytest.approx(0.0)
    # Inside a bucket sizes are taken as evenly spread: [262144, 524287].
    assert cpu.miss_rate(393216) == pytest.approx(200 * 131071 / 262144 / 400)
    # Nothing recorded: no misses.
    assert cpu.miss_rate(64, instructions=True) == 0.0
