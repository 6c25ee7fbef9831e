#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What profiling a graph of services costs, and how well the kernel's
graph matches the shop's construction: the traced shop of tests/apps/shop
behind nginx, driven by wrk, with no profiler and with `ditto profile`
on its four tiers (nginx, front, back, audit), rounds interleaved. Prints
the throughput ratio per round and its spread, then the kernel graph of
the last profiled round against the construction (tests/graph/graph_truth.py).
Needs root, node, redis-server, memcached, nginx, wrk.

    bench/graph-profile.sh [BUILDDIR] [ROUNDS] [SECONDS] [CONNECTIONS]"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'tests', 'graph'))

from graph_truth import EDGES, edges_of  # noqa: E402
from shop import Shop, install  # noqa: E402

TIERS = ('nginx', 'front', 'back', 'audit')


def free_port():
    import socket
    for port in range(32000, 29500, -1):
        with socket.socket() as sk:
            try:
                sk.bind(('127.0.0.1', port))
                return port
            except OSError:
                continue
    sys.exit('no free port')


class Sink:
    """An OTLP/HTTP endpoint that answers 200 and keeps nothing, on the
    receiver's port during the plain rounds: the tiers export in both
    arms alike, and no batch refused in a plain round reaches the
    profile's receiver later as half a trace."""

    def __init__(self, port):
        import http.server
        import socketserver
        import threading

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def do_POST(self):
                length = self.headers.get('Content-Length')
                if length:
                    self.rfile.read(int(length))
                else:  # chunked, as node sends it
                    while True:
                        size = int(self.rfile.readline().split(b';')[0], 16)
                        self.rfile.read(size + 2)
                        if size == 0:
                            break
                # One request per connection: a kept-alive one would go on
                # feeding this sink after close() (its thread outlives it).
                self.send_response(200)
                self.send_header('Content-Length', '0')
                self.send_header('Connection', 'close')
                self.end_headers()
                self.close_connection = True

            def log_message(self, *args):
                pass

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.server = Server(('127.0.0.1', port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def wrk(url, seconds, connections):
    r = subprocess.run(['wrk', '-t1', '-c%d' % connections, '-d%ds' % seconds, url],
                       capture_output=True, text=True, timeout=seconds + 60)
    if r.returncode != 0 or 'Non-2xx' in r.stdout:
        sys.exit('wrk failed: ' + r.stdout)
    return float(re.search(r'Requests/sec:\s+([0-9.]+)', r.stdout).group(1))


def profiled(cli, shop, seconds, connections, out, otlp_port):
    args = [cli, 'profile', '-q', '-d', str(seconds + 3), '-W', '0', '-o', out,
            '--otlp-listen', '127.0.0.1:%d' % otlp_port]
    for t in TIERS:
        args += ['--pid', str(shop.pids[t]), '--name', '%d=%s' % (shop.ports[t], t)]
    prof = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    rate = wrk(shop.url('/page'), seconds, connections)
    _, err = prof.communicate(timeout=120)
    if prof.returncode:
        sys.exit('profile failed: ' + err)
    return rate


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else 'build'
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    seconds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    conns = int(sys.argv[4]) if len(sys.argv) > 4 else 4
    cli = os.path.join(build, 'examples', 'ditto', 'ditto')
    install()
    ratios = []
    otlp_port = free_port()
    # The tiers export to the profile's receiver (when one listens: the
    # plain rounds' exports fail, as they would with a collector down).
    with tempfile.TemporaryDirectory() as tmp, Shop(
            nginx=True, otlp_http_url='http://127.0.0.1:%d/v1/traces' % otlp_port,
            env={'OTEL_BSP_SCHEDULE_DELAY': '200'}) as shop:
        out = os.path.join(tmp, 'g.dm')
        wrk(shop.url('/page'), 2, conns)  # warm up node's JIT
        print('round  plain_rps  profiled_rps  ratio')
        for r in range(rounds):
            sink = Sink(otlp_port)
            plain = wrk(shop.url('/page'), seconds, conns)
            time.sleep(1)  # the last batches go to the sink
            sink.close()
            prof = profiled(cli, shop, seconds, conns, out, otlp_port)
            ratios.append(prof / plain)
            print('%5d  %9.1f  %12.1f  %5.3f' % (r + 1, plain, prof, prof / plain))
        ports = dict(shop.ports)
        m = json.loads(subprocess.run([cli, 'model', 'json', out], capture_output=True,
                                      text=True, check=True).stdout)
    print('throughput ratio profiled/plain: median %.3f, min %.3f, max %.3f (%d rounds, '
          'wrk -c%d, %d s)' % (statistics.median(ratios), min(ratios), max(ratios), rounds,
                               conns, seconds))
    print('\nthe last profiled round\'s graph, kernel (eBPF) and traces (OTLP received), '
          'against the construction:')
    print('%-20s %-7s %9s %9s %6s %6s %-11s %-11s' % ('edge', 'source', 'truth/req',
                                                      'calls/req', 'err%', 'amb%', 'mode',
                                                      'order'))
    for source in ('kernel', 'traces'):
        edges = edges_of(m, ports, source)
        for key, (per_req, mode, order) in EDGES.items():
            e = edges.get(key)
            if not e:
                print('%-20s %-7s %s' % ('->'.join(key), source,
                                          'none (nginx exports no spans)' if key[0] == 'nginx'
                                          else 'missing'))
                continue
            got = e['calls'] / max(e['parent_requests'], 1)
            print('%-20s %-7s %9.2f %9.2f %6.1f %6.1f %-11s %-11s' % (
                '->'.join(key), source, per_req, got, 100 * abs(got - per_req) / per_req,
                100.0 * e.get('ambiguous', 0) / max(e['calls'], 1),
                e.get('mode', '?') + ('' if e.get('mode') == mode else '(!)'),
                e.get('order', '?') + ('' if e.get('order') == order else '(!)')))


if __name__ == '__main__':
    main()
