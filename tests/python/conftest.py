# SPDX-License-Identifier: MIT
"""Fixtures of the Python binding tests.

Run by `meson test --suite python`, which sets DITTO_LIBRARY (the built
libditto.so), PYTHONPATH (bindings/python) and DITTO_CLI (the built ditto
CLI, used for `ditto model sample`)."""

import os
import subprocess

import pytest

import ditto

SAMPLE_SEED = 3


def pytest_report_header(config):
    return 'libditto %s from %s; ditto package from %s; CLI %s' % (
        ditto.version(), os.environ.get('DITTO_LIBRARY', 'libditto.so.0'),
        os.path.dirname(ditto.__file__), os.environ.get('DITTO_CLI', '(unset)'))


def write_sample(path, seed=SAMPLE_SEED):
    """Write the CLI's fully populated sample model to path."""
    cli = os.environ.get('DITTO_CLI')
    if not cli:
        pytest.skip('DITTO_CLI not set (run through meson test)')
    r = subprocess.run([cli, 'model', 'sample', '-o', str(path), '--seed', str(seed)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 0, 'ditto model sample failed (%d): %s' % (
        r.returncode, r.stderr.decode(errors='replace'))
    return path


@pytest.fixture(scope='session')
def sample_path(tmp_path_factory):
    return write_sample(tmp_path_factory.mktemp('sample') / 'sample.model')


@pytest.fixture(scope='session')
def sample_bytes(sample_path):
    with open(sample_path, 'rb') as f:
        return f.read()


@pytest.fixture
def sample(sample_path):
    """A fresh Model loaded from the sample file (tests may change it)."""
    return ditto.Model.load(sample_path)


@pytest.fixture
def sample_json(sample):
    return sample.json()


def first_with(items, pred, what):
    """First element of items satisfying pred, else skip (the sample lacks it)."""
    for i, x in enumerate(items):
        if pred(x):
            return i, x
    pytest.fail('sample model has no %s' % what)
