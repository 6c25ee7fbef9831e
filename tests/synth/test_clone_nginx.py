# SPDX-License-Identifier: MIT
"""nginx serving a static file with sendfile on, cloned (issue 18, item 4):
one process (master_process off) on 127.0.0.1 under wrk, profiled and
cloned; its clone, profiled under the same load, has its socket options,
socket calls per request by kind (sendfile among them) and iovecs per
writev within 5%, response bytes within 1%. Both throughputs are printed. Skipped when nginx
is not installed (scripts/bootstrap.sh installs it)."""

import os
import shutil

import pytest

import ditto as d
from compare import clone_service, profile_clone, rel
from conftest import Clone, Service, free_port, need
from test_clone_sockopts import by_kind, response_mean, sockopts, throughput

NGINX = shutil.which('nginx') or ('/usr/sbin/nginx' if os.access('/usr/sbin/nginx', os.X_OK)
                                  else None)
pytestmark = [pytest.mark.root,
              pytest.mark.skipif(not NGINX, reason='nginx is not installed: scripts/bootstrap.sh '
                                 'installs the Debian package'),
              pytest.mark.skipif(os.environ.get('DITTO_SYNTH_QUICK') == '1',
                                 reason='plain build only (sanitizer pass: see meson.build)')]

FILE_BYTES = 16384
CONF = '''daemon off; master_process off; worker_processes 1;
pid {d}/nginx.pid; error_log {d}/error.log;
events {{ worker_connections 256; }}
http {{
  access_log off; sendfile on; tcp_nopush off; keepalive_requests 100000000;
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fcgi;
  uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
  server {{ listen 127.0.0.1:{port}; root {d}/www; }}
}}
'''


def iovecs_per_writev(path):
    calls = iov = 0
    for s in d.Model.load(path).get('services[0].syscalls'):
        if s['name'] == 'writev' and s['fd_kind'] == 'tcp':
            calls += s['calls']
            iov += s.get('iovecs_total', 0)
    return iov / calls if calls else 0.0


def wrk(port, seconds=12):
    return [need('wrk'), '-t1', '-c4', '-d%ds' % seconds, 'http://127.0.0.1:%d/f.bin' % port]


def test_nginx_sendfile_clone_matches(tmp_path, started):
    port = free_port()
    (tmp_path / 'www').mkdir()
    (tmp_path / 'www' / 'f.bin').write_bytes(os.urandom(FILE_BYTES))
    conf = tmp_path / 'nginx.conf'
    conf.write_text(CONF.format(d=tmp_path, port=port))
    srv = Service([NGINX, '-c', str(conf), '-p', str(tmp_path)], port)
    started.append(srv)
    tree = tmp_path / 'clone'
    orig = clone_service(srv.pid, tree, wrk(port), duration=2.5, windows=0)
    srv.stop()
    clone = Clone(tree)
    started.append(clone)
    cm = profile_clone(clone, 'nginx', str(tmp_path / 'clone-profile.msgpack'),
                       wrk(clone.port), duration=2.5, windows=0)
    assert clone.stop() == 0
    print('nginx: original %.0f requests/s, clone %.0f requests/s'
          % (throughput(orig), throughput(cm)))
    calls_o, calls_c = by_kind(orig), by_kind(cm)
    assert ('sendfile', 'tcp') in calls_o, calls_o
    for key, rate in sorted(calls_o.items()):
        if key[1] == 'tcp' and rate >= 0.05:
            print('  %s/%s: %.3f vs %.3f per request' % (key[0], key[1], rate,
                                                          calls_c.get(key, 0)))
    resp_o, resp_c = response_mean(orig), response_mean(cm)
    print('  response bytes: %.1f vs %.1f' % (resp_o, resp_c))
    print('  socket options: %s vs %s' % (sockopts(orig), sockopts(cm)))
    print('  iovecs per writev: %.2f vs %.2f' % (iovecs_per_writev(orig), iovecs_per_writev(cm)))
    assert sockopts(orig) == sockopts(cm)
    assert rel(iovecs_per_writev(orig), iovecs_per_writev(cm)) <= 0.05
    for key, rate in calls_o.items():
        if key[1] == 'tcp' and rate >= 0.05:
            assert key in calls_c and rel(rate, calls_c[key]) <= 0.05, (key, rate, calls_c)
    assert rel(resp_o, resp_c) <= 0.01, (resp_o, resp_c)
