# SPDX-License-Identifier: MIT
"""The shop of tests/apps/shop running on 127.0.0.1: redis-server,
memcached, the audit, back and front tiers (node, traced) and optionally
nginx as a reverse proxy in front. Started in dependency order, each one
waited for until it answers, stopped by PID (SIGTERM, then SIGKILL) in
reverse order, also when a start fails midway.

    with Shop(otlp_file=path, zipkin_url=url, nginx=True) as shop:
        ... shop.url('/page') ... shop.pids['back'] ...
        shop.stop()          # the tiers flush their spans on SIGTERM

No pytest here: the tests and the script writing tests/graph/data use it."""

import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from capture import PORT_FIRST, PORT_LAST

APP_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                        '..', 'apps', 'shop'))
INSTALL = os.path.join(APP_DIR, 'install.sh')
TIERS = ('audit', 'back', 'front')
# The start order; stop goes the other way, so that no tier outlives a
# caller it would still answer (and no caller loses its callee first).
ORDER = ('redis', 'memcached') + TIERS + ('nginx',)

# The services are not instrumented builds: keep a sanitizer run's
# preloads out of them.
_DROP_ENV = ('LD_PRELOAD', 'ASAN_OPTIONS', 'UBSAN_OPTIONS')

NGINX_CONF = """\
daemon off;
master_process on;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {d}/client_body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    upstream front {{
        server 127.0.0.1:{front};
        keepalive 16;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://front;
            # Keep-alive to the upstream needs HTTP/1.1 without "Connection: close".
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }}
    }}
}}
"""


def install():
    """Run tests/apps/shop/install.sh (npm ci when needed); raises with its
    output when it fails."""
    r = subprocess.run([INSTALL], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    if r.returncode != 0:
        raise RuntimeError('%s failed (%d):\n%s' % (INSTALL, r.returncode, r.stdout.decode(errors='replace')))


def _program(name):
    path = shutil.which(name) or next(
        (p for p in ('/usr/sbin/' + name, '/usr/bin/' + name) if os.access(p, os.X_OK)), None)
    if not path:
        raise RuntimeError('%s is missing' % name)
    return path


def _free_port(taken):
    """A port in the graph tests' range that binds now and was not handed out."""
    for _ in range(200):
        port = random.randint(PORT_FIRST, PORT_LAST)
        if port in taken:
            continue
        with socket.socket() as s:
            try:
                s.bind(('127.0.0.1', port))
            except OSError:
                continue
        taken.add(port)
        return port
    raise RuntimeError('no free port in %d..%d' % (PORT_FIRST, PORT_LAST))


def _exchange(port, request, expect, timeout=1.0):
    """True when the server on port answers request with bytes starting with expect."""
    try:
        with socket.create_connection(('127.0.0.1', port), timeout=timeout) as s:
            s.sendall(request)
            got = b''
            while len(got) < len(expect):
                chunk = s.recv(4096)
                if not chunk:
                    break
                got += chunk
            return got.startswith(expect)
    except OSError:
        return False


# What each kind of service answers when ready (the node tiers and nginx:
# GET /ready, which the tiers leave untraced).
_READY = {
    'redis': (b'PING\r\n', b'+PONG'),
    'memcached': (b'version\r\n', b'VERSION '),
    'http': (b'GET /ready HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n', b'HTTP/1.1 200'),
}


class Shop:
    """The whole shop. Options: the tiers' exporters (otlp_file: a path all
    three append to; otlp_http_url, otlp_http_json_url, zipkin_url: URLs),
    sample_ratio (parent-based TraceIdRatio; None: AlwaysOn), nginx (a
    reverse proxy in front), env (more environment for the tiers, e.g.
    OTEL_BSP_SCHEDULE_DELAY), ports ({tier: port} to use; the others get
    free ports)."""

    def __init__(self, otlp_file=None, otlp_http_url=None, otlp_http_json_url=None,
                 zipkin_url=None, sample_ratio=None, nginx=False, env=None, start_timeout=20,
                 ports=None):
        self.exporters = {'OTLP_FILE': otlp_file, 'OTLP_HTTP_URL': otlp_http_url,
                          'OTLP_HTTP_JSON_URL': otlp_http_json_url, 'ZIPKIN_URL': zipkin_url}
        self.sample_ratio = sample_ratio
        self.with_nginx = nginx
        self.extra_env = dict(env or {})
        self.start_timeout = start_timeout
        self.ports = dict(ports or {})
        self.procs = {}
        self.returncodes = {}
        self.logs = {}
        self.dir = None

    @property
    def pids(self):
        return {name: p.pid for name, p in self.procs.items()}

    def url(self, path='/page'):
        """Where clients go: nginx when there is one, else front."""
        return 'http://127.0.0.1:%d%s' % (self.ports['nginx' if self.with_nginx else 'front'], path)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        self.dir = tempfile.mkdtemp(prefix='ditto-shop-')
        # nginx's workers (nobody, under root) read under this prefix.
        os.chmod(self.dir, 0o755)
        taken = set(self.ports.values())
        for name in ORDER:
            if (name != 'nginx' or self.with_nginx) and name not in self.ports:
                self.ports[name] = _free_port(taken)
        try:
            for name in ORDER:
                if name in self.ports:
                    self._start(name)
        except BaseException:
            self.stop()
            raise

    def _tier_env(self, name):
        env = {k: v for k, v in os.environ.items() if k not in _DROP_ENV}
        env.update(self.extra_env)
        env['SERVICE_NAME'] = name
        for var in ('FRONT', 'BACK', 'AUDIT', 'REDIS', 'MEMCACHED'):
            env[var + '_PORT'] = str(self.ports[var.lower()])
        for var, value in self.exporters.items():
            env.pop(var, None)
            if value:
                env[var] = str(value)
        env.pop('OTEL_SAMPLE_RATIO', None)
        if self.sample_ratio is not None:
            env['OTEL_SAMPLE_RATIO'] = repr(float(self.sample_ratio))
        return env

    def _argv(self, name):
        port = str(self.ports[name])
        if name == 'redis':
            return [_program('redis-server'), '--port', port, '--bind', '127.0.0.1',
                    '--save', '', '--appendonly', 'no']
        if name == 'memcached':
            argv = [_program('memcached'), '-l', '127.0.0.1', '-p', port, '-U', '0']
            # memcached refuses to run as root unless told which user to be.
            return argv + ['-u', 'root'] if os.geteuid() == 0 else argv
        if name == 'nginx':
            conf = os.path.join(self.dir, 'nginx.conf')
            with open(conf, 'w') as f:
                f.write(NGINX_CONF.format(d=self.dir, front=self.ports['front'], port=port))
            return [_program('nginx'), '-p', self.dir, '-c', conf, '-e', os.path.join(self.dir, 'nginx-error.log')]
        return [_program('node'), '-r', './tracing.js', name + '.js']

    def _start(self, name):
        log = open(os.path.join(self.dir, name + '.log'), 'wb')
        is_tier = name in TIERS
        try:
            proc = subprocess.Popen(self._argv(name), stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT,
                                    cwd=APP_DIR if is_tier else self.dir,
                                    env=self._tier_env(name) if is_tier else
                                    {k: v for k, v in os.environ.items() if k not in _DROP_ENV})
        finally:
            log.close()
        self.procs[name] = proc
        request, expect = _READY[name if name in ('redis', 'memcached') else 'http']
        deadline = time.monotonic() + self.start_timeout
        while not _exchange(self.ports[name], request, expect):
            if proc.poll() is not None:
                raise RuntimeError('%s exited with %d before answering:\n%s' % (name, proc.returncode, self.log(name)))
            if time.monotonic() > deadline:
                raise RuntimeError('%s did not answer on port %d within %d s:\n%s'
                                   % (name, self.ports[name], self.start_timeout, self.log(name)))
            time.sleep(0.05)

    def log(self, name, tail=4000):
        """The end of what name wrote to stdout and stderr."""
        try:
            with open(os.path.join(self.dir, name + '.log'), 'rb') as f:
                return f.read()[-tail:].decode(errors='replace')
        except OSError:
            return ''

    def stop_one(self, name, timeout=10):
        """Stop name by its PID: SIGTERM, SIGKILL after timeout s; returns
        its exit status (negative: the signal that ended it)."""
        proc = self.procs.get(name)
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.returncodes[name] = proc.returncode
        return proc.returncode

    def stop(self, timeout=10):
        """Stop everything still running, last started first; returns
        {name: exit status}. Removes the temporary directory."""
        for name in reversed(ORDER):
            self.stop_one(name, timeout)
        # What they wrote, for a test's failure message: the directory goes.
        if self.dir:
            self.logs = {name: self.log(name) for name in self.procs}
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        return dict(self.returncodes)
