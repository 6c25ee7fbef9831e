# SPDX-License-Identifier: MIT
"""nginx as a master and two worker processes (issue 18, item 1): profiled
under wrk, cloned, and the clone, under the same load, has the same
process tree counted from /proc (a parent that serves nothing and two
serving processes, with as many threads in each as the original's), and,
profiled the same way, the same network model and thread classes. The
location answers `return 200`, so no file is read. Skipped when nginx is
not installed (scripts/bootstrap.sh installs it)."""

import os
import shutil

import pytest

from compare import classes, clone_service, network, profile_clone, tree_while
from conftest import Clone, Service, free_port, need

NGINX = shutil.which('nginx') or ('/usr/sbin/nginx' if os.access('/usr/sbin/nginx', os.X_OK)
                                  else None)
pytestmark = [pytest.mark.root,
              pytest.mark.skipif(not NGINX, reason='nginx is not installed: scripts/bootstrap.sh '
                                 'installs the Debian package'),
              pytest.mark.skipif(os.environ.get('DITTO_SYNTH_QUICK') == '1',
                                 reason='plain build only (sanitizer pass: see meson.build)')]

# Each worker listens on a socket of its own (reuseport): on one shared
# socket the kernel may give every connection of a short load to one
# worker, and the other would serve nothing (a tree the clone keeps, but
# not the one this test is about). 16 connections leave no worker idle.
CONF = '''daemon off; master_process on; worker_processes 2;
pid {d}/nginx.pid; error_log {d}/error.log;
events {{ worker_connections 256; }}
http {{
  access_log off; keepalive_requests 100000000;
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fcgi;
  uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
  server {{ listen 127.0.0.1:{port} reuseport; location / {{ return 200 "ok"; }} }}
}}
'''
CONNECTIONS = 16


def wrk(port, seconds=12):
    return [need('wrk'), '-t2', '-c%d' % CONNECTIONS, '-d%ds' % seconds,
            'http://127.0.0.1:%d/' % port]


def tree_under_load(port, pid):
    """The process tree while wrk's connections are open."""
    return tree_while(wrk(port, 3), pid)


def test_nginx_workers_clone_keeps_the_process_tree(tmp_path, started):
    port = free_port()
    conf = tmp_path / 'nginx.conf'
    conf.write_text(CONF.format(d=tmp_path, port=port))
    srv = Service([NGINX, '-c', str(conf), '-p', str(tmp_path)], port)
    started.append(srv)
    orig_tree = tree_under_load(port, srv.pid)
    orig = clone_service(srv.pid, tmp_path / 'clone', wrk(port), duration=2.5, windows=0)
    srv.stop()
    clone = Clone(tmp_path / 'clone')
    started.append(clone)
    clone_tree = tree_under_load(clone.port, clone.pid)
    cm = profile_clone(clone, 'nginx', str(tmp_path / 'clone-profile.msgpack'),
                       wrk(clone.port), duration=2.5, windows=0)
    assert clone.stop() == 0
    print('nginx: original %s, clone %s' % (orig_tree, clone_tree))
    print('  classes: %s vs %s' % (classes(orig), classes(cm)))
    print('  network: %s vs %s' % (network(orig), network(cm)))
    # a master of one thread and two single-threaded workers
    assert orig_tree == (1, [1, 1])
    assert clone_tree == orig_tree
    assert network(orig)['processes'] == 2
    assert network(orig) == network(cm)
    assert classes(orig) == classes(cm)
