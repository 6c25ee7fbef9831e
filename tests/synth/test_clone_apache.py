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
import shutil
import time

import pytest

from compare import assert_requests_match, classes, clone_service, network, profile_clone
from conftest import Clone, Service, free_port, need
from test_clone_processes import tree_while

APACHE = shutil.which('apache2') or ('/usr/sbin/apache2' if os.access('/usr/sbin/apache2', os.X_OK)
                                     else None)
MODULES = '/usr/lib/apache2/modules'
pytestmark = [pytest.mark.root,
              pytest.mark.skipif(not APACHE, reason='apache2 is not installed: '
                                 'scripts/bootstrap.sh installs the Debian package'),
              pytest.mark.skipif(os.environ.get('DITTO_SYNTH_QUICK') == '1',
                                 reason='plain build only (sanitizer pass: see meson.build)')]

COMMON = '''LoadModule authz_core_module {mods}/mod_authz_core.so
User www-data
Group www-data
ServerName localhost
Listen 127.0.0.1:{port}
PidFile {d}/httpd.pid
ErrorLog {d}/error.log
DocumentRoot {d}/www
<Directory {d}/www>
  Require all granted
</Directory>
KeepAlive On
MaxKeepAliveRequests 0
'''
# A fixed number of children: no spare-server churn during the window,
# so the tree is the configuration's; as many wrk connections.
PREFORK = '''LoadModule mpm_prefork_module {mods}/mod_mpm_prefork.so
StartServers 3
MinSpareServers 3
MaxSpareServers 3
ServerLimit 3
MaxRequestWorkers 3
'''
CONNECTIONS = 3
# The worker MPM with one child: a listener thread that accepts only when
# one of the child's workers is idle, and hands the connection to it; the
# worker serves it (blocking, between poll timeouts) until it closes.
WORKER = '''LoadModule mpm_worker_module {mods}/mod_mpm_worker.so
StartServers 1
ServerLimit 1
ThreadsPerChild 4
MinSpareThreads 1
MaxSpareThreads 4
MaxRequestWorkers 4
ThreadLimit 4
'''
WORKER_CONNECTIONS = 3


def wrk(port, conns, seconds=12):
    return [need('wrk'), '-t1', '-c%d' % conns, '-d%ds' % seconds,
            'http://127.0.0.1:%d/index.html' % port]


def tree_under_load(port, conns, pid):
    return tree_while(wrk(port, conns, 3), pid)


def apache(tmp_path, mpm=PREFORK):
    port = free_port()
    (tmp_path / 'www').mkdir()
    (tmp_path / 'www' / 'index.html').write_text('<html>hello</html>\n' * 8)
    conf = tmp_path / 'httpd.conf'
    conf.write_text((mpm + COMMON).format(mods=MODULES, d=tmp_path, port=port))
    # www-data reads the document root through the test's directory
    for p in (tmp_path, tmp_path / 'www'):
        os.chmod(p, 0o755)
    # its own session: at its stop the master signals its whole process
    # group, which would otherwise be pytest's
    return Service([need('setsid'), APACHE, '-f', str(conf), '-DFOREGROUND'], port)


def test_apache_prefork_clone_keeps_its_shape(tmp_path, started):
    conns = CONNECTIONS
    srv = apache(tmp_path)
    started.append(srv)
    time.sleep(1)   # every child started
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
    assert orig_tree == (1, [1] * CONNECTIONS)
    assert network(orig)['serial_connections']
    assert network(orig) == network(cm)
    assert classes(orig) == classes(cm)
    assert_requests_match(orig, cm)


def test_apache_worker_clone_keeps_its_shape(tmp_path, started):
    conns = WORKER_CONNECTIONS
    srv = apache(tmp_path, WORKER)
    started.append(srv)
    time.sleep(1)   # the child and its threads started
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
