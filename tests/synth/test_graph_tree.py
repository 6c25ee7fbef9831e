# SPDX-License-Identifier: MIT
"""Graph trees: `ditto synth` of a model of several services writes one
clone per node and graph.json (every field checked against the model it
came from); `ditto up` runs the tiers on 127.0.0.1 with their children's
addresses in DITTO_UPSTREAM_<NAME>, serves a real load at the front, and
leaves nothing running however it ends (max-seconds, `ditto down`, a tier
killed, the runner killed). Processes are found and checked by PID."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

import ditto as dt
from harness import CLI, ditto, free_port

WINDOW_S = 4.0


def graph_model(front_port, back_port, redis_port=6379, back_name='back'):
    """front (http1) -> back (http1, 2 processes) -> redis-N (an external
    seen only from back's side), as a profile of the three would give."""
    m = dt.Model()
    m.meta.window_s = WINDOW_S
    f = m.add_service('front', framing='http1', processes=1)
    f.add_port(front_port)
    t = f.add_thread('main', count=1)
    t.cpu_ns = 1_200_000_000            # 0.3 CPU over the window: 300 millicores
    b = m.add_service(back_name, framing='http1', processes=2)
    b.add_port(back_port)
    t = b.add_thread('main', count=3)
    t.cpu_ns = 2_000_000_000            # 500 millicores
    g = m.graph
    ext = 'redis-%d' % redis_port
    g.add_external(ext, address='127.0.0.1', port=redis_port, framing='resp')
    g.add_edge('front', back_name, mode='sync', order='sequential', calls=300,
               parent_requests=100)
    g.add_edge(back_name, ext, mode='async', order='parallel', calls=150, parent_requests=300)
    return m


def manifest(path):
    with open(os.path.join(str(path), 'graph.json')) as f:
        return json.load(f)


def node(man, name):
    return next(n for n in man['nodes'] if n['name'] == name)


def alive(pid):
    """Whether pid runs (a zombie does not)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] not in ('Z', 'X')
    except OSError:
        return False


def wait_gone(pids, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def environ(pid):
    with open('/proc/%d/environ' % pid, 'rb') as f:
        return dict(e.split('=', 1) for e in f.read().decode().split('\0') if '=' in e)


def up_json(tree, timeout=30):
    """up.json once it lists every clone tier."""
    want = sum(1 for n in manifest(tree)['nodes'] if n['kind'] == 'clone')
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with open(os.path.join(str(tree), 'up.json')) as f:
                u = json.load(f)
            if len(u['tiers']) == want:
                return u
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    raise AssertionError('up.json of %s never listed %d tiers' % (tree, want))


def start_up(tree, *args):
    # an upstream variable of the caller's own is not handed to the tiers
    env = dict(os.environ, DITTO_UPSTREAM_BACK='192.0.2.1:9')
    return subprocess.Popen([CLI, 'up', str(tree)] + [str(a) for a in args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc, timeout=30):
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError('ditto up did not end:\n' + err)
    return proc.returncode, out, err


# --- the tree and its manifest ---

def test_manifest_says_what_the_model_says(tmp_path):
    m = graph_model(free_port(), free_port())
    tree = tmp_path / 'g'
    man = dt.synth_graph(m, tree)
    assert man['schema'] == 1
    assert man['front'] == 'front'
    assert [n['name'] for n in man['nodes']] == ['front', 'back', 'redis-6379']
    ports = {'front': m.service('front').ports[0], 'back': m.service('back').ports[0],
             'redis-6379': 6379}
    procs = {'front': 1, 'back': 2, 'redis-6379': 1}
    threads = {'front': 1, 'back': 3, 'redis-6379': 1}
    cpu = {'front': 300, 'back': 500, 'redis-6379': 0}
    framing = {'front': 'http1', 'back': 'http1', 'redis-6379': 'resp'}
    ups = {'front': ['back'], 'back': ['redis-6379'], 'redis-6379': []}
    envs = {'front': 'DITTO_UPSTREAM_FRONT', 'back': 'DITTO_UPSTREAM_BACK',
            'redis-6379': 'DITTO_UPSTREAM_REDIS_6379'}
    for n in man['nodes']:
        name = n['name']
        assert n['kind'] == 'clone' and n['dir'] == name
        assert (n['port'], n['framing'], n['env']) == (ports[name], framing[name], envs[name])
        assert (n['processes'], n['threads'], n['cpu_millicores']) == \
            (procs[name], threads[name], cpu[name])
        assert n['upstreams'] == ups[name]
        assert 'address' not in n
        # each a clone tree as `ditto synth` of one service writes it
        for f in ('Makefile', 'clone_config.c', 'body.S', '.ditto-clone'):
            assert (tree / name / f).is_file(), (name, f)
    cfg = (tree / 'redis-6379' / 'clone_config.c').read_text()
    assert 'RT_FRAMING_RESP' in cfg and str(6379) in cfg
    edges = {(e['from'], e['to']): e for e in man['edges']}
    assert set(edges) == {('front', 'back'), ('back', 'redis-6379')}
    fb, br = edges[('front', 'back')], edges[('back', 'redis-6379')]
    assert (fb['calls_per_request'], fb['mode'], fb['order'], fb['framing']) == \
        (3, 'sync', 'sequential', 'http1')
    assert (br['calls_per_request'], br['mode'], br['order'], br['framing']) == \
        (0.5, 'async', 'parallel', 'resp')
    order = man['start_order']
    assert sorted(order) == sorted(ports) and order[-1] == 'front'
    for e in man['edges']:
        assert order.index(e['to']) < order.index(e['from'])
    # the library wrote nothing next to the tree
    assert sorted(os.listdir(tmp_path)) == ['g']


def test_two_nodes_on_one_port_get_distinct_ports(tmp_path):
    p = free_port()
    r = subprocess.run([CLI, 'synth', '--no-build', '-o', str(tmp_path / 'g'),
                        save(graph_model(p, p), tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    man = manifest(tmp_path / 'g')
    assert node(man, 'front')['port'] == p
    assert node(man, 'back')['port'] not in (p, 0)
    assert "'back' listens on port %d like another node" % p in r.stderr


def save(m, d):
    path = str(d / 'model.msgpack')
    m.save(path)
    return path


def test_cycle_is_accepted_and_broken_in_the_start_order(tmp_path):
    m = graph_model(free_port(), free_port())
    m.graph.add_edge('back', 'front', mode='sync', order='sequential', calls=10,
                     parent_requests=300)
    r = subprocess.run([CLI, 'synth', '--no-build', '-o', str(tmp_path / 'g'), save(m, tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert 'cycle' in r.stderr
    man = manifest(tmp_path / 'g')
    # every node has a caller: the first in the model is the front
    assert man['front'] == 'front' and man['start_order'][-1] == 'front'
    assert sorted(man['start_order']) == ['back', 'front', 'redis-6379']
    assert node(man, 'back')['upstreams'] == ['redis-6379', 'front']


@pytest.mark.parametrize('bad', ['../evil', 'a b', 'x/y', '..', 'caf\u00e9'])
def test_hostile_node_name_is_refused_naming_it(tmp_path, bad):
    m = graph_model(free_port(), free_port(), back_name=bad)
    with pytest.raises(dt.DittoError) as ei:
        dt.synth_graph(m, tmp_path / 'g')
    assert ei.value.code == -22
    assert bad in str(ei.value) and 'A-Za-z0-9._-' in str(ei.value)
    assert os.listdir(tmp_path) == []


def test_keep_leaves_a_node_to_the_real_service(tmp_path):
    m = graph_model(free_port(), free_port())
    man = dt.synth_graph(m, tmp_path / 'g', keep=['redis-6379=127.0.0.1:6390'])
    r = node(man, 'redis-6379')
    assert (r['kind'], r['address'], r['port']) == ('kept', '127.0.0.1:6390', 6390)
    assert 'dir' not in r and not (tmp_path / 'g' / 'redis-6379').exists()
    assert node(man, 'back')['upstreams'] == ['redis-6379']
    for bad, code in (('nosuch=127.0.0.1:1', -4005), ('redis-6379=127.0.0.1', -22),
                      ('redis-6379=h:0', -22), ('redis-6379=h:70000', -22),
                      ('redis-6379=a b:1', -22), ('redis-6379=my_host:1', -22)):
        with pytest.raises(dt.DittoError) as ei:
            dt.synth_graph(m, tmp_path / 'h', keep=[bad])
        assert ei.value.code == code, bad
    r = subprocess.run([CLI, 'synth', '--no-build', '--keep', 'redis-6379=db.example:6379', '-o',
                        str(tmp_path / 'c'), save(m, tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert node(manifest(tmp_path / 'c'), 'redis-6379')['address'] == 'db.example:6379'


def test_a_tree_with_a_kept_node_starts_its_clones_only(tmp_path):
    """The start order names clones only (a kept node is not started): a
    tree with one used to be refused by its own reader."""
    rp, kept = free_port(), free_port()
    m = graph_model(free_port(), free_port(), redis_port=rp)
    ditto('synth', '-q', '--keep', 'redis-%d=127.0.0.1:%d' % (rp, kept), '-o', tmp_path / 'g',
          save(m, tmp_path), timeout=600)
    man = manifest(tmp_path / 'g')
    assert man['start_order'] == ['back', 'front'], man['start_order']
    with dt.up(tmp_path / 'g') as g:
        assert sorted(t['name'] for t in g.tiers) == ['back', 'front']
        back = next(t for t in g.tiers if t['name'] == 'back')
        assert environ(back['pid'])['DITTO_UPSTREAM_REDIS_%d' % rp] == '127.0.0.1:%d' % kept


def test_tree_replaces_only_what_libditto_wrote(tmp_path):
    m = graph_model(free_port(), free_port())
    other = tmp_path / 'mine'
    other.mkdir()
    (other / 'precious').write_text('x')
    with pytest.raises(dt.DittoError) as ei:
        dt.synth_graph(m, other, force=True)
    assert ei.value.code == -39            # ENOTEMPTY
    assert (other / 'precious').read_text() == 'x'
    tree = tmp_path / 'g'
    dt.synth_graph(m, tree)
    with pytest.raises(dt.DittoError) as ei:
        dt.synth_graph(m, tree)
    assert ei.value.code == -17            # EEXIST
    dt.synth_graph(graph_model(free_port(), free_port(), back_name='other'), tree, force=True)
    assert [n['name'] for n in manifest(tree)['nodes']] == ['front', 'other', 'redis-6379']
    assert not (tree / 'back').exists()


def test_one_service_with_service_option_stays_one_clone(tmp_path):
    r = ditto('synth', '--no-build', '--service', 'back', '-o', tmp_path / 'one',
              save(graph_model(free_port(), free_port()), tmp_path))
    assert (tmp_path / 'one' / 'clone_config.c').is_file()
    assert not (tmp_path / 'one' / 'graph.json').exists(), r.stderr


# --- running it ---

@pytest.fixture(scope='module')
def built(tmp_path_factory):
    """The three-tier graph, written and built once by `ditto synth`."""
    d = tmp_path_factory.mktemp('built')
    m = graph_model(free_port(), free_port(), redis_port=free_port())
    ditto('synth', '-q', '-o', d / 'g', save(m, d), timeout=600)
    return d / 'g'


def tier_pids(u):
    return {t['name']: t['pid'] for t in u['tiers']}


def test_up_wires_upstreams_serves_load_and_max_seconds_stops_all(built):
    man = manifest(built)
    p = start_up(built, '--max-seconds', 8)
    try:
        u = up_json(built)
        pids = tier_pids(u)
        ports = {t['name']: t['port'] for t in u['tiers']}
        assert list(pids) == man['start_order']
        for name, pid in pids.items():
            assert alive(pid)
            assert os.readlink('/proc/%d/exe' % pid) == str(built / name / 'clone')
            env = environ(pid)
            want = {'DITTO_UPSTREAM_' + c.upper().replace('-', '_'): '127.0.0.1:%d' % ports[c]
                    for c in node(man, name)['upstreams']}
            got = {k: v for k, v in env.items() if k.startswith('DITTO_UPSTREAM_')}
            assert got == want, name
            assert os.getpgid(pid) == os.getpgid(pids[man['start_order'][0]])
        assert u['front'] == '127.0.0.1:%d' % node(man, 'front')['port']
        # a real load at the front tier, and at the cloned external in RESP
        r = ditto('load', '--port', ports['front'], '--framing', 'http1', '-n', 300,
                  '-c', 4, '--json')
        res = json.loads(r.stdout)
        assert res['errors'] == 0 and res['completed'] == 300, r.stdout
        r = ditto('load', '--port', ports[man['start_order'][0]], '--framing', 'resp',
                  '-n', 100, '--json')
        assert json.loads(r.stdout)['errors'] == 0, r.stdout
        rc, out, err = finish(p)
    finally:
        if p.poll() is None:
            p.kill()
    assert rc == 0, err
    assert out.strip() == 'front: ' + u['front']
    assert '--max-seconds' in err
    assert wait_gone(list(pids.values()), 1) == []
    assert not (built / 'up.json').exists()
    for name in pids:
        assert 'ready' in (built / 'logs' / (name + '.log')).read_text()


def test_down_from_another_process_stops_all(built):
    p = start_up(built)
    try:
        pids = tier_pids(up_json(built))
        r = ditto('down', built)
        assert 'stopped' in r.stderr
        rc, out, err = finish(p)
    finally:
        if p.poll() is None:
            p.kill()
    assert rc == 0 and "stopped by 'ditto down'" in err, err
    assert wait_gone(list(pids.values()), 1) == []
    assert ditto('down', built, check=False).returncode == 1


def test_second_up_of_a_running_graph_is_refused(built):
    p = start_up(built)
    try:
        u = up_json(built)
        r = ditto('up', built, '--max-seconds', 1, check=False)
        assert r.returncode == 1 and 'already up' in r.stderr, r.stderr
        assert all(alive(pid) for pid in tier_pids(u).values())
        assert (built / 'up.json').exists()
        ditto('down', built)
        rc, out, err = finish(p)
    finally:
        if p.poll() is None:
            p.kill()
    assert rc == 0, err
    assert wait_gone(list(tier_pids(u).values()), 1) == []


def test_a_tier_that_dies_is_reported_and_the_rest_stopped(built):
    p = start_up(built)
    try:
        pids = tier_pids(up_json(built))
        os.kill(pids['back'], signal.SIGKILL)
        rc, out, err = finish(p)
    finally:
        if p.poll() is None:
            p.kill()
    assert rc == 1
    assert "tier 'back'" in err and 'killed by signal 9' in err, err
    assert wait_gone(list(pids.values()), 1) == []
    assert not (built / 'up.json').exists()


def test_runner_killed_takes_every_tier_with_it(built):
    p = start_up(built)
    try:
        pids = tier_pids(up_json(built))
    finally:
        p.kill()
        p.wait()
    assert wait_gone(list(pids.values()), 10) == []
    # a stale up.json does not block the next run
    p = start_up(built, '--max-seconds', 1)
    rc, out, err = finish(p)
    assert rc == 0, err


def test_taken_port_is_replaced_and_wired(built):
    man = manifest(built)
    back_port = node(man, 'back')['port']
    with socket.socket() as s:
        # The earlier tests' back tier closed its connections first: their
        # TIME_WAIT would refuse a plain bind; a listener still holds it.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(('127.0.0.1', back_port))
        s.listen()
        with dt.up(built) as g:
            tiers = {t['name']: t for t in g.tiers}
            assert tiers['back']['port'] != back_port
            env = environ(tiers['front']['pid'])
            assert env['DITTO_UPSTREAM_BACK'] == '127.0.0.1:%d' % tiers['back']['port']
            g.wait(0.5)
            pids = [t['pid'] for t in g.tiers]
        assert wait_gone(pids, 1) == []


def test_python_up_port_base_and_down_cancels_the_runner(built):
    base = free_port()
    while any(not port_is_free(base + i) for i in range(3)):
        base = free_port()
    with dt.up(built, port_base=base) as g:
        ports = {t['name']: t['port'] for t in g.tiers}
        assert ports == {n['name']: base + i for i, n in enumerate(manifest(built)['nodes'])}
        assert g.front == '127.0.0.1:%d' % base
        pids = [t['pid'] for t in g.tiers]
        r = subprocess.run([CLI, 'down', str(built)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        with pytest.raises(dt.DittoError) as ei:
            g.wait(5)
        assert ei.value.code == -125      # ECANCELED
    assert wait_gone(pids, 1) == []


def port_is_free(port):
    with socket.socket() as s:
        try:
            s.bind(('127.0.0.1', port))
            return True
        except OSError:
            return False


def test_up_of_a_tree_not_built_fails_clearly(tmp_path):
    dt.synth_graph(graph_model(free_port(), free_port()), tmp_path / 'g')
    r = ditto('up', tmp_path / 'g', check=False)
    assert r.returncode == 1
    assert 'is not built' in r.stderr
    assert not (tmp_path / 'g' / 'up.json').exists()


def test_up_and_down_refuse_broken_files_naming_the_json_path(tmp_path):
    """graph.json and up.json are read by the checked readers: an edited
    file is refused with the JSON path of what is wrong, before anything
    starts or is signalled."""
    tree = tmp_path / 'g'
    dt.synth_graph(graph_model(free_port(), free_port()), tree)
    good = manifest(tree)
    cases = ((lambda m: node(m, 'front').update(upstreams=['nobody']),
              ('nodes[0].upstreams[0]', "not a node's name")),
             (lambda m: m['start_order'].reverse(), ('start_order', 'front starts before back')),
             (lambda m: node(m, 'back').update(port=0), ('nodes[1].port', '1..65535')),
             (lambda m: node(m, 'back').update(dir='../front'), ('nodes[1].dir',)))
    for change, words in cases:
        m = json.loads(json.dumps(good))
        change(m)
        (tree / 'graph.json').write_text(json.dumps(m))
        r = ditto('up', tree, check=False)
        assert r.returncode == 1, r.stderr
        for w in words:
            assert w in r.stderr, r.stderr
        assert not (tree / 'up.json').exists() and not (tree / 'logs').exists()
    # up.json: a tier whose pid is no pid is refused by `ditto down`, and a
    # process that is not the tier written there (another start time) is
    # left alone.
    sleeper = subprocess.Popen(['sleep', '30'])
    try:
        for tiers, rc, word in (([{'pid': 0, 'start_ticks': 1, 'exe': '/bin/sleep'}], 1,
                                 'tiers[0].pid'),
                                ([{'pid': sleeper.pid, 'start_ticks': 1, 'exe': '/'}], 0, '')):
            (tree / 'up.json').write_text(json.dumps(
                {'schema': 1, 'runner': sleeper.pid, 'runner_start_ticks': 1, 'tiers': tiers}))
            r = ditto('down', tree, check=False)
            assert r.returncode == rc and word in r.stderr, r.stderr
            assert alive(sleeper.pid)
            assert not [f for f in os.listdir(str(tree)) if f.startswith('up.json')]
    finally:
        sleeper.kill()
        sleeper.wait()


def test_graph_build_stops_at_the_node_that_fails_naming_it(tmp_path):
    tree = tmp_path / 'g'
    dt.synth_graph(graph_model(free_port(), free_port()), tree)
    # clone_config.c is the first source make compiles: the failure comes at once
    cfg = tree / 'front' / 'clone_config.c'
    cfg.write_text('#error not_a_clone_config\n' + cfg.read_text())
    with pytest.raises(dt.BuildError) as ei:
        dt.build_graph(tree)
    assert "graph node 'front'" in str(ei.value)
    assert 'not_a_clone_config' in (tree / 'front' / 'build.log').read_text()
    assert not (tree / 'back' / 'build.log').exists()


# --- ditto clone of two live services ---

def wait_listening(port, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with socket.socket() as s:
            if s.connect_ex(('127.0.0.1', port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError('nothing listens on %d' % port)


@pytest.mark.root
def test_clone_of_two_pids_writes_a_graph_tree(tmp_path):
    ports = [free_port(), free_port()]
    servers = [subprocess.Popen([sys.executable, '-m', 'http.server', str(p), '--bind',
                                 '127.0.0.1'], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, cwd=str(tmp_path)) for p in ports]
    loads = []
    try:
        for p in ports:
            wait_listening(p)
        loads = [subprocess.Popen([CLI, 'load', '--port', str(p), '--framing', 'http1', '-d', '8',
                                   '-c', '2'], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL) for p in ports]
        r = ditto('clone', '--pid', servers[0].pid, '--pid', servers[1].pid, '-d', 3, '-W', 0,
                  '-n', '-o', tmp_path / 'g', timeout=120)
    finally:
        for p in loads + servers:
            p.terminate()
            p.wait(10)
    man = manifest(tmp_path / 'g')
    assert sorted(n['port'] for n in man['nodes']) == sorted(ports)
    assert all(n['kind'] == 'clone' and n['framing'] == 'http1' for n in man['nodes'])
    assert man['front'] == man['nodes'][0]['name'] and 'graph tree written' in r.stderr
    assert (tmp_path / 'g.msgpack').is_file()
