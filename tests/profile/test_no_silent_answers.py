# SPDX-License-Identifier: MIT
"""No silent wrong answers (issue 18): what the CLI cannot do is refused
and what a profile could not learn is said, with an exit status a script
can act on, instead of exit 0 and a wrong or empty result."""

import os
import subprocess

import pytest

from conftest import free_port

CLI = os.environ.get('DITTO_CLI')
SERVERS = os.environ.get('DITTO_SERVERS_DIR') or os.path.join(
    os.environ['DITTO_CLI'].rsplit('/examples/', 1)[0], 'tests', 'servers')


def run(args, timeout=60):
    return subprocess.run([CLI] + [str(a) for a in args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout)


@pytest.mark.parametrize('cmd', ['profile', 'clone'])
def test_several_pids_are_a_usage_error_not_the_last_one(tmp_path, cmd):
    # Before: `--pid A --pid B` profiled B alone and exited 0.
    me = os.getpid()
    r = run([cmd, '--pid', me, '--pid', os.getppid(), '-d', '1', '-o', tmp_path / 'out'])
    assert r.returncode == 2, r.stderr
    assert b'one --pid per profile' in r.stderr and b'not implemented yet' in r.stderr, r.stderr
    assert not (tmp_path / 'out').exists()
