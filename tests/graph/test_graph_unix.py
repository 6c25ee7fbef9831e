# SPDX-License-Identifier: MIT
"""Edges over Unix-domain sockets, where both ends are profiled: nginx
(TCP in front) proxies every request to a node HTTP server that listens on
a Unix socket only. The kernel graph has the edge nginx -> node with one
call per request, sync and sequential, whether the connections are opened
in the window (a new one per request) or were opened before it (upstream
keep-alive, connections that predate the window); a Unix socket served by
no profiled service (the node tier profiled alone) makes no edge.

Real nginx, node and wrk; the profiler is the real BPF collector (root)."""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

CLI = os.environ.get('DITTO_CLI', 'ditto')

pytestmark = [
    pytest.mark.skipif(shutil.which('node') is None, reason='node is not installed'),
    pytest.mark.skipif(not os.path.exists('/usr/sbin/nginx'), reason='nginx is not installed'),
    pytest.mark.skipif(os.geteuid() != 0, reason='profiling needs root'),
]

BACK_JS = r"""
const http = require('http');
const fs = require('fs');
const path = process.argv[2];
try { fs.unlinkSync(path); } catch (e) {}
const body = Buffer.alloc(700, 'x');
http.createServer((req, res) => {
  req.resume();
  req.on('end', () => { res.setHeader('Content-Length', body.length); res.end(body); });
}).listen(path, () => { fs.chmodSync(path, 0o777); console.log('ready'); });
"""

NGINX_CONF = """
worker_processes 1;
daemon off;
pid {d}/nginx.pid;
error_log {d}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    upstream back {{
        server unix:{d}/back.sock;
        {keepalive}
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://back;
            {proxy_keepalive}
        }}
    }}
}}
"""


def clean_env():
    return {k: v for k, v in os.environ.items()
            if k not in ('LD_PRELOAD', 'ASAN_OPTIONS', 'UBSAN_OPTIONS')}


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def wait_for(check, what, timeout=15):
    end = time.time() + timeout
    while time.time() < end:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError('%s did not come up' % what)


def get(port):
    with socket.create_connection(('127.0.0.1', port), timeout=2) as s:
        s.sendall(b'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
        data = b''
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return data
            data += chunk


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Pair:
    """nginx on 127.0.0.1:port in front of node on DIR/back.sock."""

    def __init__(self, keepalive):
        self.keepalive = keepalive
        self.dir = tempfile.mkdtemp(prefix='ditto-unix-')
        os.chmod(self.dir, 0o755)  # nginx's worker (nobody) reaches the socket
        self.port = free_port()
        self.procs = {}

    def __enter__(self):
        try:
            self._start()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _start(self):
        js = os.path.join(self.dir, 'back.js')
        with open(js, 'w') as f:
            f.write(BACK_JS)
        sock = os.path.join(self.dir, 'back.sock')
        self.procs['node'] = subprocess.Popen(['node', js, sock], env=clean_env(),
                                              stdout=subprocess.DEVNULL)
        wait_for(lambda: os.path.exists(sock), 'node on %s' % sock)
        conf = os.path.join(self.dir, 'nginx.conf')
        with open(conf, 'w') as f:
            f.write(NGINX_CONF.format(
                d=self.dir, port=self.port,
                keepalive='keepalive 8;' if self.keepalive else '',
                proxy_keepalive=('proxy_http_version 1.1; proxy_set_header Connection "";'
                                 if self.keepalive else '')))
        self.procs['nginx'] = subprocess.Popen(
            ['/usr/sbin/nginx', '-p', self.dir, '-c', conf, '-e',
             os.path.join(self.dir, 'nginx-error.log')], env=clean_env())
        wait_for(lambda: b'200 OK' in get(self.port), 'nginx on port %d' % self.port)

    def __exit__(self, *exc):
        for name in ('nginx', 'node'):
            if name in self.procs:
                stop(self.procs[name])
        shutil.rmtree(self.dir, ignore_errors=True)


def wrk(port, seconds, connections):
    r = subprocess.run(['wrk', '-t1', '-c%d' % connections, '-d%ds' % seconds,
                        'http://127.0.0.1:%d/' % port],
                       capture_output=True, text=True, env=clean_env(), timeout=seconds + 30)
    assert r.returncode == 0 and 'Non-2xx' not in r.stdout, r.stdout
    return int(re.search(r'(\d+) requests in', r.stdout).group(1))


def profile(pair, out, pids, seconds=5, before=0.0):
    """Profile pids while wrk drives nginx; wrk starts `before` seconds
    ahead of the profiler, so its connections (and nginx's upstream ones)
    predate the window. Returns the model as JSON and the stderr."""
    args = [CLI, 'profile', '-q', '-d', str(seconds), '-W', '0', '--graph', '-o', out]
    for pid in pids:
        args += ['--pid', str(pid)]
    load = subprocess.Popen(['wrk', '-t1', '-c2', '-d%ds' % int(seconds + before + 3),
                             'http://127.0.0.1:%d/' % pair.port],
                            stdout=subprocess.PIPE, text=True, env=clean_env())
    try:
        time.sleep(before)
        r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    finally:
        out_wrk, _ = load.communicate(timeout=60)
    assert r.returncode == 0, r.stderr
    assert 'Non-2xx' not in out_wrk, out_wrk
    js = subprocess.run([CLI, 'model', 'json', out], capture_output=True, text=True, check=True)
    return json.loads(js.stdout), r.stderr


def kernel_edges(m):
    return {(e['from'], e['to']): e for e in m.get('graph', {}).get('edges', [])
            if e.get('source', 'kernel') == 'kernel'}


def check_one_call_per_request(m, pair):
    names = {s['name'] for s in m['services']}
    assert names == {'nginx', 'node'}, names
    edges = kernel_edges(m)
    assert ('nginx', 'node') in edges, sorted(edges)
    e = edges[('nginx', 'node')]
    per_req = e['calls'] / e['parent_requests']
    assert abs(per_req - 1.0) <= 0.02, e
    assert (e['mode'], e['order']) == ('sync', 'sequential'), e
    assert e['request_bytes']['total'] > 0 and e['response_bytes']['total'] > 0, e
    # Nothing of the Unix traffic is taken for an external endpoint.
    assert not m['graph'].get('externals'), m['graph']['externals']
    return e


@pytest.mark.parametrize('keepalive', [False, True], ids=['new-connections', 'kept-alive'])
def test_unix_socket_edge_between_profiled_services(tmp_path, keepalive):
    with Pair(keepalive) as pair:
        pids = [pair.procs['nginx'].pid, pair.procs['node'].pid]
        m, err = profile(pair, str(tmp_path / 'u.dm'), pids, before=2.0 if keepalive else 0.0)
    e = check_one_call_per_request(m, pair)
    assert 'listens on no TCP port' not in err, err  # it listens on a Unix socket
    node = next(s for s in m['services'] if s['name'] == 'node')
    # node served its requests over the Unix socket: they are its requests.
    assert node['requests']['count'] >= e['calls'] * 0.9, (node['requests'], e)


def test_unix_socket_without_its_server_makes_no_edge(tmp_path):
    with Pair(True) as pair:
        m, err = profile(pair, str(tmp_path / 'u.dm'), [pair.procs['nginx'].pid])
    assert not kernel_edges(m), kernel_edges(m)
    assert not m['graph'].get('externals'), m['graph']
