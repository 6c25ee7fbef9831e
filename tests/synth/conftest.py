# SPDX-License-Identifier: MIT
"""Fixtures of the synthesizer's tests (processes: harness.py)."""

import os

import pytest

from harness import CLI, TOOLS, Clone, Service, ditto, free_port, need, stop  # noqa: F401


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
