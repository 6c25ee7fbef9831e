# SPDX-License-Identifier: MIT
"""The generated Docker Compose deployment, for real: static clone
binaries built, FROM scratch images built from the generated Dockerfiles,
the graph brought up with host networking on 127.0.0.1, the HTTP front
tier driven by wrk and every other tier by `ditto load` in its framing
(bounded loads), then brought down with no container (and no image of
ours) left."""

import json
import os
import re
import shutil
import socket
import subprocess
import time

import pytest

from docker_env import Docker
from graph_tree import CLI, ditto, make_tree


@pytest.fixture(scope='module')
def docker():
    d = Docker()
    yield d
    d.close()


def wait_port(port, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(('127.0.0.1', port)) == 0:
                return True
        time.sleep(0.2)
    return False


def drive(port, framing, n):
    r = subprocess.run([CLI, 'load', '--port', str(port), '--framing', framing, '-n', str(n),
                        '-c', '4', '--json'], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout)


def wrk(port, seconds=2):
    """Requests wrk completed against the front tier, after checking that
    none failed."""
    assert shutil.which('wrk'), 'wrk is missing: scripts/bootstrap.sh installs it'
    r = subprocess.run(['wrk', '-t1', '-c4', '-d%ds' % seconds, 'http://127.0.0.1:%d/' % port],
                       capture_output=True, text=True, timeout=seconds + 60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert 'Socket errors' not in r.stdout and 'Non-2xx' not in r.stdout, r.stdout
    return int(re.search(r'(\d+) requests in', r.stdout).group(1))


def test_compose_runs_the_graph_on_localhost(tmp_path, docker):
    d, g = make_tree(tmp_path, kept=('db', '127.0.0.1:5432'))
    front, leaf, _ = g['nodes']
    project = 'dittotest%d' % os.getpid()
    prefix = 'ditto-test-%d-' % os.getpid()
    ditto('deploy', d, '--build', '--targets', 'compose', '--image-prefix', prefix)
    for n in (front, leaf):
        # Static: no program interpreter, nothing for an empty image to lack.
        out = subprocess.run(['readelf', '-lW', os.path.join(d, n['name'], 'clone-static')],
                             capture_output=True, text=True, check=True).stdout
        assert 'LOAD' in out and 'INTERP' not in out, out
    compose = os.path.join(d, 'deploy', 'compose.yaml')
    try:
        docker.compose_run(project, compose, 'build', timeout=600)
        docker.compose_run(project, compose, 'up', '-d', timeout=300)
        for n in (front, leaf):
            assert wait_port(n['port']), 'tier %s did not listen on 127.0.0.1:%d' % (
                n['name'], n['port'])
        # Every tier serves, in its own framing, at its manifest port.
        assert wrk(front['port']) > 100
        res = drive(leaf['port'], 'memcache-text', 500)
        assert res['completed'] == 500 and not res['errors'], res
        # The front tier was given its children's addresses.
        cid = docker.compose_run(project, compose, 'ps', '-q', 'front').stdout.strip()
        env = json.loads(docker.run('inspect', cid).stdout)[0]['Config']['Env']
        assert 'DITTO_UPSTREAM_CACHE=127.0.0.1:%d' % leaf['port'] in env
        assert 'DITTO_UPSTREAM_DB=127.0.0.1:5432' in env
        logs = docker.compose_run(project, compose, 'logs', '--no-color').stdout
        assert logs.count('ready') >= 2, logs
    finally:
        docker.compose_run(project, compose, 'down', '--rmi', 'all', '-t', '5', check=False)
    left = docker.run('ps', '-aq', '--filter', 'label=com.docker.compose.project=' + project)
    assert left.stdout.strip() == ''
    images = docker.run('images', '-q', '--filter', 'reference=%s*' % prefix)
    assert images.stdout.strip() == ''
    for n in (front, leaf):
        with socket.socket() as s:
            assert s.connect_ex(('127.0.0.1', n['port'])) != 0, 'tier %s still serves' % (
                n['name'])
