# SPDX-License-Identifier: MIT
"""The services bench/clone_compare.py clones: how to start each on a port
of 127.0.0.1 and the bounded load that drives it (its own load generator
where it has one). A target's start(port) returns a handle with .pid, .port
(PostgreSQL picks its own) and .stop(); load(port, n) the load's argv (n: a bounded count, or None for
the profiling window's load). A target whose framing `ditto load` does not
speak (MySQL) has rate(port): its own load generator's closed-loop rate in
requests per second, for the throughput rounds."""

import os
import re
import shutil
import subprocess
import tempfile

import apache_httpd
import mariadb_server
from harness import Service, need

SERVERS = os.environ.get('DITTO_SERVERS_DIR', 'build/tests/servers')
NGINX = shutil.which('nginx') or '/usr/sbin/nginx'


class Target:
    def __init__(self, name, start, load, svc_name=None, argv=None, clients=8, rate=None):
        self.name, self.start, self.load = name, start, load
        self.svc_name = svc_name or name
        self.argv = argv    # argv(port): its command line, for cachegrind
        self.clients = clients  # ditto load's connections (a pre-forking server's children)
        self.rate = rate    # rate(port): requests/s by its own generator, else ditto load's


def redis(port):
    return Service([need('redis-server'), '--port', str(port), '--bind', '127.0.0.1', '--save',
                    '', '--appendonly', 'no'], port)


def redis_load(port, n=None):
    return [need('redis-benchmark'), '-p', str(port), '-n', str(n or 3000000), '-c', '20', '-t',
            'get,set', '-q']


def memcached(port):
    return Service([need('memcached'), '-p', str(port), '-l', '127.0.0.1', '-U', '0', '-t', '4',
                    '-u', 'root'], port)


def memcached_load(port, n=None):
    return [need('memcaslap'), '-s', '127.0.0.1:%d' % port, '-t', '3s' if n else '12s', '-c',
            '16']


def gt_argv(name):
    return lambda port: [os.path.join(SERVERS, name), '--port', str(port), '--max-seconds', '300']


def gt_load(port, n=None):
    return [os.path.join(SERVERS, 'srv_client'), '--port', str(port), '--connections', '8',
            '--requests', str(n or 10 ** 7), '--request-bytes', '64', '--max-seconds', '60']


def gt_load_paced(port, n=None):
    """gt_load at 20000 requests/s over all: a process per connection at
    full speed gets very unequal shares of the closed loop (one child of 8
    up to half the requests on 2 cores), and the profiler splits its
    children into two network classes by their weighted call trees
    (tests/synth/test_clone_ground_truth.py, PACED)."""
    return gt_load(port, n) + ['--rate', '20000']


NGINX_CONF = '''daemon off; master_process {master}; worker_processes {workers};
pid {d}/nginx.pid; error_log {d}/error.log;
events {{ worker_connections 256; }}
http {{
  access_log off; sendfile on; tcp_nopush off; keepalive_requests 100000000;
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fcgi;
  uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
  server {{ listen 127.0.0.1:{port}; root {d}/www; {location} }}
}}
'''


class Nginx(Service):
    """nginx from a configuration in its own temporary directory: / is a
    16 KiB file (sent with sendfile), or with static False a 200 "ok"
    (`ditto load` asks for /)."""

    def __init__(self, port, workers, static):
        self.dir = tempfile.mkdtemp(prefix='ditto-nginx-')
        os.mkdir(os.path.join(self.dir, 'www'))
        with open(os.path.join(self.dir, 'www', 'index.html'), 'wb') as f:
            f.write(os.urandom(16384))
        conf = os.path.join(self.dir, 'nginx.conf')
        with open(conf, 'w') as f:
            f.write(NGINX_CONF.format(d=self.dir, port=port, workers=workers,
                                      master='on' if workers > 1 else 'off',
                                      location='' if static else
                                      'location / { return 200 "ok"; }'))
        super().__init__([NGINX, '-c', conf, '-p', self.dir], port)

    def stop(self):
        try:
            super().stop()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def wrk(path):
    return lambda port, n=None: [need('wrk'), '-t1', '-c4', '-d%ds' % (3 if n else 12),
                                 'http://127.0.0.1:%d%s' % (port, path)]


def apache_wrk(clients):
    return lambda port, n=None: [need('wrk'), '-t1', '-c%d' % clients, '-d%ds' % (3 if n else 12),
                                 'http://127.0.0.1:%d/index.html' % port]


def wrk_rate(clients, path):
    """wrk's requests per second over 2 s (`ditto load` asks for /, which
    Apache answers 404 here: no page, no measurement)."""
    def rate(port):
        r = subprocess.run([need('wrk'), '-t1', '-c%d' % clients, '-d2s',
                            'http://127.0.0.1:%d%s' % (port, path)],
                           capture_output=True, text=True, timeout=60)
        m = re.search(r'Requests/sec:\s+([\d.]+)', r.stdout)
        if r.returncode or not m or 'Non-2xx' in r.stdout or 'Socket errors' in r.stdout:
            raise RuntimeError('wrk on port %d: %s' % (port, (r.stdout + r.stderr)[-500:]))
        return float(m.group(1))
    return rate


def postgres(port):
    from pg_cluster import Cluster     # initdb in a temporary directory
    c = Cluster()
    subprocess.run([need('pgbench'), '-i', '-s', '1', '-q', '-h', '127.0.0.1', '-p',
                    str(c.port), '-U', 'postgres', 'postgres'], capture_output=True, check=True,
                   timeout=120)
    return c


def pgbench(port, n=None):
    return [need('pgbench'), '-h', '127.0.0.1', '-p', str(port), '-U', 'postgres', '-c', '4',
            '-T', '3' if n else '12', '-S', 'postgres']


TARGETS = [Target('redis', redis, redis_load, 'redis-server'),
           Target('memcached', memcached, memcached_load),
           Target('nginx-sendfile', lambda p: Nginx(p, 1, True), wrk('/'), 'nginx'),
           Target('nginx-2-workers', lambda p: Nginx(p, 2, False), wrk('/'), 'nginx'),
           Target('postgres', postgres, pgbench)]
if apache_httpd.APACHE:
    TARGETS += [Target('apache-prefork', lambda p: apache_httpd.Apache(p, apache_httpd.PREFORK),
                       apache_wrk(apache_httpd.PREFORK_CLIENTS), 'apache2',
                       clients=apache_httpd.PREFORK_CLIENTS,
                       rate=wrk_rate(apache_httpd.PREFORK_CLIENTS, '/index.html')),
                Target('apache-worker', lambda p: apache_httpd.Apache(p, apache_httpd.WORKER),
                       apache_wrk(apache_httpd.WORKER_CLIENTS), 'apache2',
                       clients=apache_httpd.WORKER_CLIENTS,
                       rate=wrk_rate(apache_httpd.WORKER_CLIENTS, '/index.html'))]
_MARIADB, _missing = mariadb_server.tools()
if not _missing:
    # sysbench oltp_read_only (prepared statements): a request is a
    # command packet, sysbench's queries per second its rate
    TARGETS.append(Target(
        'mariadb', lambda p: mariadb_server.Server(_MARIADB, p),
        lambda port, n=None: mariadb_server.sysbench_argv(_MARIADB, port,
                                                          seconds=3 if n else 12),
        'mariadbd', rate=lambda port: mariadb_server.sysbench_rates(_MARIADB, port, seconds=2)[1]))
for _gt in ('srv_epoll', 'srv_epoll_pool', 'srv_futex_pool', 'srv_prefork', 'srv_forking',
            'srv_poll', 'srv_select', 'srv_blocking', 'srv_busypoll', 'srv_nagle',
            'srv_sendfile'):
    TARGETS.append(Target(_gt, lambda p, a=gt_argv(_gt): Service(a(p), p),
                          gt_load_paced if _gt == 'srv_forking' else gt_load,
                          argv=gt_argv(_gt)))
