# SPDX-License-Identifier: MIT
"""The offline Kubernetes validator (k8s_validate/): its pinned npm
packages installed with npm ci, then validate.js run on folders."""

import os
import shutil
import subprocess

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'k8s_validate')


def install():
    if not shutil.which('node') or not shutil.which('npm'):
        raise AssertionError('node and npm are needed (Debian: apt-get install nodejs npm)')
    r = subprocess.run([os.path.join(HERE, 'install.sh')], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr


def validate(*dirs):
    """(ok, output) of validate.js on dirs."""
    r = subprocess.run(['node', os.path.join(HERE, 'validate.js')] + [str(d) for d in dirs],
                       capture_output=True, text=True, timeout=120)
    return r.returncode == 0, r.stdout + r.stderr
