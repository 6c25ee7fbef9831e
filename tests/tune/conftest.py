# SPDX-License-Identifier: MIT
"""Fixtures of the tune stage's tests. Processes (the CLI, free ports,
clones and services stopped by PID) come from tests/synth/harness.py."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'synth'))

from harness import CLI, Clone, Service, ditto, free_port, need, stop  # noqa: E402,F401

QUICK = bool(os.environ.get('DITTO_TUNE_QUICK'))
SERVERS = os.environ.get('DITTO_SERVERS_DIR', '.')


def pytest_configure(config):
    config.addinivalue_line('markers', 'root: needs root (BPF, ptrace)')


def pytest_collection_modifyitems(config, items):
    if os.geteuid() != 0:
        skip = pytest.mark.skip(reason='profiling needs root')
        for item in items:
            if 'root' in item.keywords:
                item.add_marker(skip)


@pytest.fixture
def started():
    """Collects Clones and Services; stops what is still running."""
    objs = []
    yield objs
    for o in objs:
        if o.proc.poll() is None:
            try:
                o.stop()
            except AssertionError:
                pass
