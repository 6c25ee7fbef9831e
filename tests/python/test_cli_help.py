# SPDX-License-Identifier: MIT
"""The CLI's top-level help: each command listed once, each one's own
--help answering. `ditto --help` once listed `graph` twice."""

import os
import re
import subprocess

import pytest


def cli():
    path = os.environ.get('DITTO_CLI')
    if not path:
        pytest.skip('DITTO_CLI not set (run through meson test)')
    return path


def commands(text):
    block = text.split('Commands:\n', 1)[1].split('\n\n', 1)[0]
    return re.findall(r'^  (\S+) ', block, re.M)


def test_each_command_is_listed_once_and_has_its_own_help():
    r = subprocess.run([cli(), '--help'], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    names = commands(r.stdout)
    assert len(names) >= 10, r.stdout
    assert len(names) == len(set(names)), names
    for name in names:
        sub = subprocess.run([cli(), name, '--help'], capture_output=True, text=True,
                             timeout=30)
        assert sub.returncode == 0 and sub.stdout.strip(), (name, sub.stderr)
