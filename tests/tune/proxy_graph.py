# SPDX-License-Identifier: MIT
"""A graph of two ground-truth servers for the graph tuner's tests:
srv_proxy (a thread per connection, one call per request to its back end)
in front of srv_epoll (an event loop), both with known work per request,
the back end also once per wake-up that read requests (--wake-work: its
CPU per request falls as its load packs requests into a wake-up)."""

import contextlib
import json
import os
import shlex
import subprocess

from conftest import SERVERS, Service, ditto, free_port

WORK = '20000'


def back_argv(port, seconds=120):
    return [os.path.join(SERVERS, 'srv_epoll'), '--port', str(port), '--response-bytes', '300',
            '--work', WORK, '--wake-work', WORK, '--max-seconds', str(seconds)]


def front_argv(port, back_port, seconds=120):
    # known work in the front too: a proxy of some 50 us a request moved by
    # 10-20% between runs, and the best iteration is the least largest error
    return [os.path.join(SERVERS, 'srv_proxy'), '--port', str(port), '--backend',
            str(back_port), '--response-bytes', '128', '--work', WORK,
            '--max-seconds', str(seconds)]


def client(port, conns, seconds=60):
    return [os.path.join(SERVERS, 'srv_client'), '--port', str(port), '--connections',
            str(conns), '--requests', str(10 ** 7), '--request-bytes', '100',
            '--response-bytes', '128', '--max-seconds', str(seconds)]


def profile(front, back, out, conns):
    """The graph profiled with the kernel graph under conns connections."""
    load = subprocess.Popen(client(front.port, conns), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        ditto('profile', '-q', '-d', '3', '-W', '0', '--graph', '-o', out,
              '--pid', front.pid, '--name', '%d=front' % front.port,
              '--pid', back.pid, '--name', '%d=back' % back.port)
    finally:
        load.kill()
        load.wait()
    return out


def cpu_per_request(path):
    """Each tier's CPU ns per front request in a profile."""
    m = json.loads(ditto('model', 'json', path).stdout)
    svc = {s['name']: s for s in m['services']}
    req = svc['front']['requests']['count']
    return {n: sum(t.get('cpu_ns', 0) for t in svc[n].get('threads', [])) / req
            for n in ('front', 'back')}


@contextlib.contextmanager
def running(back_extra=()):
    """The graph on free ports, (front, back), the back end's command
    with back_extra appended; stopped after."""
    bport, fport = free_port(), free_port()
    back = Service(back_argv(bport) + list(back_extra), bport)
    try:
        front = Service(front_argv(fport, bport), fport)
    except BaseException:
        back.stop()
        raise
    try:
        yield front, back
    finally:
        front.stop()
        back.stop()


def original_command(fport, bport, back_extra=()):
    """The original graph started by one command (as `ditto tune` takes it)."""
    return ['sh', '-c', '%s & %s & wait' % (shlex.join(back_argv(bport, 300) + list(back_extra)),
                                            shlex.join(front_argv(fport, bport, 300)))]


def tune_original(base, d, args, command):
    """`ditto tune base` into d with args against the original command:
    (the completed process, its JSON report or None)."""
    r = subprocess.run([os.environ.get('DITTO_CLI', 'ditto'), 'tune', base, '-o', str(d / 'tree'),
                        '-c', '1'] + args + ['-j', str(d / 'report.json'),
                                             '--save', str(d / 'tuned.dm'), '--'] + command,
                       capture_output=True, text=True, timeout=900)
    print(r.stdout)
    print('\n'.join(l for l in r.stderr.splitlines() if 'warning: synth' not in l))
    report = json.load(open(d / 'report.json')) if (d / 'report.json').exists() else None
    return r, report
