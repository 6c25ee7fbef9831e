# SPDX-License-Identifier: MIT
"""A real proxy: nginx as a reverse proxy (proxy_pass, keep-alive upstream
connections) in front of a second nginx serving a static file, under wrk.
The front's model must answer each request once (its writes to the back
end are not responses) and show the back end in services[].outbound at
one call per request. Skipped when nginx or wrk is not installed
(scripts/bootstrap.sh installs them)."""

import os
import re
import shutil

import pytest

from conftest import free_port, need, profile_during

NGINX = shutil.which('nginx') or ('/usr/sbin/nginx' if os.access('/usr/sbin/nginx', os.X_OK)
                                  else None)
pytestmark = pytest.mark.skipif(not NGINX, reason='nginx is not installed: '
                                'scripts/bootstrap.sh installs the Debian package')

FILE_BYTES = 4096
COMMON = '''daemon off; master_process off; worker_processes 1;
pid {d}/nginx.pid; error_log {d}/error.log;
events {{ worker_connections 256; }}
http {{
  access_log off; keepalive_requests 100000000;
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fcgi;
  uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
  {body}
}}
'''
# Also on 127.0.0.1, where the fixture waits for it to listen.
BACK = 'server {{ listen 127.0.0.1:{port}; {v6} root {d}/www; }}'
FRONT = '''upstream back {{ server {host}:{back}; keepalive 8; }}
  server {{ listen 127.0.0.1:{port};
    location / {{ proxy_pass http://back; proxy_http_version 1.1;
                 proxy_set_header Connection ""; proxy_buffering on; }} }}'''

SEND = {'write', 'writev', 'sendto', 'sendmsg', 'sendfile'}
RECV = {'read', 'readv', 'recvfrom', 'recvmsg'}


def nginx(server_factory, root, port, body):
    root.mkdir()
    conf = root / 'nginx.conf'
    conf.write_text(COMMON.format(d=root, body=body))
    return server_factory([NGINX, '-c', str(conf), '-p', str(root)], port)


def tcp_calls(model, names):
    return sum(s['calls'] - s['errors'] for s in model.get('services[0].syscalls')
               if s['fd_kind'] == 'tcp' and s['name'] in names)


# The back end over IPv4 and IPv6 loopback: the endpoint is named either way.
@pytest.mark.parametrize('family', ['ipv4', 'ipv6'])
def test_nginx_proxy_backend_calls_are_outbound(server_factory, tmp_path, family):
    host, address = ('127.0.0.1', '127.0.0.1') if family == 'ipv4' else ('[::1]', '::1')
    bport, port = free_port(), free_port()
    back = tmp_path / 'back'
    v6 = 'listen [::1]:%d;' % bport if family == 'ipv6' else ''
    nginx(server_factory, back, bport, BACK.format(v6=v6, port=bport, d=back))
    (back / 'www').mkdir()
    (back / 'www' / 'f.bin').write_bytes(os.urandom(FILE_BYTES))
    front = nginx(server_factory, tmp_path / 'front', port,
                  FRONT.format(host=host, back=bport, port=port))
    load = [need('wrk'), '-t1', '-c4', '-d4s', 'http://127.0.0.1:%d/f.bin' % port]
    model, run = profile_during(front.pid, load, duration=2.5)
    assert run.returncode == 0, run.stderr
    assert not re.search(rb'Non-2xx', run.stdout), run.stdout
    count = model.get('services[0].requests.count')
    assert count > 1000, count
    sends, recvs = tcp_calls(model, SEND) / count, tcp_calls(model, RECV) / count
    print('nginx proxy: %d requests; per request %.3f sends, %.3f receives on clients'
          % (count, sends, recvs))
    # One answer per request: the upstream write is outbound, not a second response.
    assert 0.95 <= sends <= 1.05, sends
    resp = model.get('services[0].requests.response_bytes_total') / count
    assert FILE_BYTES < resp < FILE_BYTES + 1024, resp
    out = model.get('services[0].outbound')
    assert [(o['address'], o['port']) for o in out] == [(address, bport)], out
    o = out[0]
    print('  outbound: %.3f calls per request, %.0f B out, %.0f B in per call, %d connections'
          % (o['calls'] / count, o['request_bytes_total'] / o['calls'],
             o['response_bytes_total'] / o['calls'], o['connections']))
    assert o['framing'] == 'http1'
    assert 0.95 <= o['calls'] / count <= 1.05
    assert FILE_BYTES < o['response_bytes_total'] / o['calls'] < FILE_BYTES + 1024
    # Keep-alive upstream connections: pooled (nginx renews one after 1000
    # requests), not one per request.
    assert 1 <= o['connections'] <= count / 200, o['connections']
