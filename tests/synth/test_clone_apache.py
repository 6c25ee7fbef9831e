# SPDX-License-Identifier: MIT
"""Apache httpd with its pre-forking MPM (issue 18, items 1 and 9),
profiled under wrk, cloned, and the clone profiled under the same load: a
master that serves nothing (it wakes every second in select) and
single-threaded children, each of which polls the shared listener,
accepts, and serves that one connection alone (it polls the connection
between requests and reads until EAGAIN), so a further client waits for
a free child. The clone must have the original's process tree (counted
from /proc while wrk's connections are open), thread classes and network
model (serial connections included), and socket calls and bytes per
request within the issue's bounds. A private configuration (its own port,
pid file, error log and document root in the test's directory) is
started in the foreground, in a session of its own, and stopped by its
PID; Debian's own instance is never touched. Skipped when apache2 is not
installed (scripts/bootstrap.sh installs it).

The worker MPM with one child (a master, and a child whose listener thread
accepts only when one of its workers is idle and hands the connection to
it) is the real listener-plus-pool server: its clone has the master as a
parent process of its own (network.master_process), the listener, the
pool and the idle threads."""

import os
import time

import pytest

from apache_httpd import APACHE, PREFORK, PREFORK_CLIENTS, WORKER, WORKER_CLIENTS, Apache
from compare import (assert_requests_match, classes, clone_service, network, profile_clone,
                     tree_while)
from conftest import Clone, free_port, need

pytestmark = [pytest.mark.root,
              pytest.mark.skipif(not APACHE, reason='apache2 is not installed: '
                                 'scripts/bootstrap.sh installs the Debian package'),
              pytest.mark.skipif(os.environ.get('DITTO_SYNTH_QUICK') == '1',
                                 reason='plain build only (sanitizer pass: see meson.build)')]


def wrk(port, conns, seconds=12):
    return [need('wrk'), '-t1', '-c%d' % conns, '-d%ds' % seconds,
            'http://127.0.0.1:%d/index.html' % port]


def tree_under_load(port, conns, pid):
    return tree_while(wrk(port, conns, 3), pid)


def apache(tmp_path, mpm):
    return Apache(free_port(), mpm, tmp_path)


def clone_and_compare(tmp_path, started, mpm, conns):
    """Original and clone under wrk: their /proc trees while loaded, and
    classes, network model, socket calls and bytes per request the same.
    Returns the original's tree and model."""
    srv = apache(tmp_path, mpm)
    started.append(srv)
    time.sleep(1)   # every child and thread started
    orig_tree = tree_under_load(srv.port, conns, srv.pid)
    orig = clone_service(srv.pid, tmp_path / 'clone', wrk(srv.port, conns), duration=3, windows=0)
    srv.stop()
    clone = Clone(tmp_path / 'clone')
    started.append(clone)
    clone_tree = tree_under_load(clone.port, conns, clone.pid)
    cm = profile_clone(clone, 'apache', str(tmp_path / 'clone-profile.msgpack'),
                       wrk(clone.port, conns), duration=3, windows=0)
    assert clone.stop() == 0
    print('tree %s vs %s' % (orig_tree, clone_tree))
    print('  classes: %s vs %s' % (classes(orig), classes(cm)))
    print('  network: %s vs %s' % (network(orig), network(cm)))
    assert clone_tree == orig_tree
    assert network(orig) == network(cm)
    assert classes(orig) == classes(cm)
    assert_requests_match(orig, cm)
    return orig_tree, orig


def test_apache_prefork_clone_keeps_its_shape(tmp_path, started):
    tree, orig = clone_and_compare(tmp_path, started, PREFORK, PREFORK_CLIENTS)
    assert tree == (1, [1] * PREFORK_CLIENTS)
    assert network(orig)['serial_connections']


def test_apache_worker_clone_keeps_its_shape(tmp_path, started):
    tree, orig = clone_and_compare(tmp_path, started, WORKER, WORKER_CLIENTS)
    # the master, and one child: its main thread, the listener and 4 workers
    assert tree == (1, [6])
    assert network(orig)['master_process'] and network(orig)['network_dispatch']
