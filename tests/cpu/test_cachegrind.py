# SPDX-License-Identifier: MIT
"""Cross-check against an independent tool: cachegrind's D1 and LL misses
for a program are predicted from our reuse-distance histogram of the same
program (ditto_cpu_miss_rate for cachegrind's cache sizes) and compared
with what cachegrind measures. Steady state on both sides: cachegrind runs
N and 2N repetitions and the difference is taken, so start-up and first
touches cancel; our windows leave first touches out (count_cold=False).

Bound: predicted and measured misses differ by at most 5% of the data
accesses (an LRU fully associative cache against cachegrind's 8- and
16-way ones)."""

import re
import shutil
import subprocess

import pytest

from conftest import cpu_profile, gt_path

D1 = 32768
LL = 1024 * 1024
BOUND = 0.05


def cachegrind(argv):
    """(data refs, D1 misses, LL data misses) of one run."""
    valgrind = shutil.which('valgrind')
    if not valgrind:
        pytest.fail('valgrind is missing: scripts/bootstrap.sh installs it')
    out = subprocess.run([valgrind, '--tool=cachegrind', '--cache-sim=yes',
                          '--cachegrind-out-file=/dev/null', '--I1=32768,8,64',
                          '--D1=%d,8,64' % D1, '--LL=%d,16,64' % LL] + argv,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True,
                         timeout=300).stderr.decode()

    def field(name):
        m = re.search(name + r':\s+([\d,]+)', out)
        assert m, 'no %r in cachegrind output:\n%s' % (name, out)
        return int(m.group(1).replace(',', ''))
    return field(r'D\s+refs'), field(r'D1\s+misses'), field(r'LLd misses')


def steady_state(prog, args, reps):
    a = cachegrind([gt_path(prog)] + args + [str(reps)])
    b = cachegrind([gt_path(prog)] + args + [str(2 * reps)])
    return [y - x for x, y in zip(a, b)]


@pytest.mark.parametrize('mode,size,reps,insts', [
    ('chase', 16 * 1024, 400, 20000),      # fits D1: no misses
    ('chase', 256 * 1024, 40, 30000),      # misses D1, fits LL
    ('chase', 2048 * 1024, 10, 120000),    # misses both
    ('rand', 64 * 1024, 40, 60000),        # D1 misses about half
])
def test_predicted_cachegrind_misses_match_measured(target, mode, size, reps, insts):
    t = target('gt_memory', mode, size)
    m, _ = cpu_profile(t.pid, windows=1 if insts > 60000 else 2, insts=insts)
    cpu = m.service(0).cpu[0]
    refs, d1, lld = steady_state('gt_memory', [mode, str(size)], reps)
    pred_d1 = cpu.miss_rate(D1) * refs
    pred_ll = cpu.miss_rate(LL) * refs
    print('%s %d: refs %d D1 measured %d predicted %.0f, LL measured %d predicted %.0f'
          % (mode, size, refs, d1, pred_d1, lld, pred_ll))
    assert refs > 0
    assert abs(pred_d1 - d1) <= BOUND * refs, (pred_d1, d1, refs)
    assert abs(pred_ll - lld) <= BOUND * refs, (pred_ll, lld, refs)
