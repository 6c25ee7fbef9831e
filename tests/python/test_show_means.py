# SPDX-License-Identifier: MIT
"""`ditto model show` prints exact means where the model keeps exact
totals (syscall size_total and ret_total, requests' byte totals) and marks
as estimates ('~', with a legend) the means it can only take from log2
buckets: the bucket midpoint made exactly 4096-byte calls read as 6.0 KiB
(issue 18, item 7)."""

import os
import re
import subprocess

import pytest

from ditto import Model


def show(path):
    cli = os.environ.get('DITTO_CLI')
    if not cli:
        pytest.skip('DITTO_CLI not set (run through meson test)')
    r = subprocess.run([cli, 'model', 'show', str(path)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 0, r.stderr.decode(errors='replace')
    return r.stdout.decode()


def model_of_4096_byte_calls(path, totals):
    m = Model()
    s = m.add_service('files', framing='raw', processes=1)
    s.add_thread('main', count=1, role='main', io_model='epoll')
    c = s.add_syscall('main', 'sendfile', 'tcp', calls=10)
    c.size.add(4096, 10)
    c.ret.add(4096, 10)
    r = s.requests
    r.count = 10
    r.request_bytes.add(4096, 10)
    r.response_bytes.add(4096, 10)
    if totals:
        c.size_total = c.ret_total = 40960
        r.request_bytes_total = r.response_bytes_total = 40960
    m.save(str(path))
    return m


def syscall_row(out, call):
    return next(l for l in out.splitlines() if re.search(r'\s%s\s' % call, l))


def test_exact_totals_give_exact_means(tmp_path):
    m = model_of_4096_byte_calls(tmp_path / 'm', totals=True)
    assert m.service(0).syscalls[0].size_total == 40960
    out = show(tmp_path / 'm')
    row = syscall_row(out, 'sendfile')
    assert row.count('4.0 KiB') == 2 and '6.0 KiB' not in row, row
    assert 'mean request 4.0 KiB, mean response 4.0 KiB' in out, out
    assert '~' not in out.split('  cpu:')[0], out


def test_without_totals_means_are_labelled_estimates(tmp_path):
    model_of_4096_byte_calls(tmp_path / 'm', totals=False)
    out = show(tmp_path / 'm')
    row = syscall_row(out, 'sendfile')
    assert row.count('~6.0 KiB') == 2, row
    assert 'mean request ~6.0 KiB, mean response ~6.0 KiB' in out, out
    assert 'estimated from histogram buckets' in out
