# SPDX-License-Identifier: MIT
"""`ditto model diff` tells through its exit status whether two models
are within a bound of each other (0), differ beyond it (1), or could not
be compared (2), as diff(1) does, so a script need not parse its table."""

import os
import subprocess

import pytest

from conftest import write_sample



def diff(*args):
    cli = os.environ.get('DITTO_CLI')
    if not cli:
        pytest.skip('DITTO_CLI not set (run through meson test)')
    return subprocess.run([cli, 'model', 'diff'] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=60)


def test_model_diff_exit_status_says_within_or_beyond_the_bound(sample_path, tmp_path):
    same = diff(sample_path, sample_path)
    assert same.returncode == 0, same.stdout + same.stderr
    assert 'models within the bound' in same.stdout
    other = write_sample(tmp_path / 'other.model', seed=11)
    beyond = diff(sample_path, other)
    assert beyond.returncode == 1, beyond.stdout + beyond.stderr
    assert 'models differ beyond the bound 0.05' in beyond.stdout
    assert diff('--json', sample_path, other).returncode == 1
    # --min-error hides rows, not the verdict.
    assert diff('--min-error', '5', sample_path, other).returncode == 1
    assert diff('--bound', '1e9', sample_path, other).returncode == 0

def test_model_diff_trouble_is_not_a_difference(sample_path, tmp_path):
    assert diff(sample_path, tmp_path / 'missing.model').returncode == 2
    assert diff(sample_path).returncode == 2
    assert diff('--bound', 'x', sample_path, sample_path).returncode == 2
