# SPDX-License-Identifier: MIT
"""ditto deploy / ditto.deploy(): the files written for a graph tree say
what graph.json says (ports, upstream addresses, start order, CPU), the
Kubernetes manifests validate against the API schema offline, and hostile
or broken graph.json files give valid files or a clear error."""

import json
import os
import shutil

import pytest
import yaml

import ditto as pyditto
import k8s
from graph_tree import ditto, make_tree, node, sample_model, write_graph


def load_docs(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def k8s_objects(d):
    kdir = os.path.join(d, 'deploy', 'kubernetes')
    out = {}
    for f in sorted(os.listdir(kdir)):
        for doc in load_docs(os.path.join(kdir, f)):
            out[(doc['kind'], doc['metadata']['name'])] = doc
    return sorted(os.listdir(kdir)), out


def test_compose_file_wires_every_tier_on_localhost(tmp_path):
    d, g = make_tree(tmp_path, kept=('db', '127.0.0.1:5432'))
    front, leaf, kept = g['nodes']
    r = ditto('deploy', d)
    assert 'docker-compose -f %s/deploy/compose.yaml up' % d in r.stdout
    with open(os.path.join(d, 'deploy', 'compose.yaml')) as f:
        compose = yaml.safe_load(f)
    assert set(compose['services']) == {'front', 'cache'}      # kept: address only
    for n in (front, leaf):
        s = compose['services'][n['name']]
        assert s['network_mode'] == 'host'
        assert s['command'] == ['--port', str(n['port'])]
        assert s['build'] == {'context': '..',
                              'dockerfile': 'deploy/docker/%s.Dockerfile' % n['name']}
        with open(os.path.join(d, s['build']['dockerfile'])) as f:
            lines = [x for x in f.read().splitlines() if x and not x.startswith('#')]
        assert lines[0] == 'FROM scratch'
        assert 'COPY %s/clone-static /clone' % n['name'] in lines
        assert 'EXPOSE %d' % n['port'] in lines
    fs = compose['services']['front']
    assert fs['environment'] == {'DITTO_UPSTREAM_CACHE': '127.0.0.1:%d' % leaf['port'],
                                 'DITTO_UPSTREAM_DB': '127.0.0.1:5432'}
    assert fs['depends_on'] == ['cache']
    assert 'depends_on' not in compose['services']['cache']
    assert 'environment' not in compose['services']['cache']


def test_kubernetes_manifests_per_tier(tmp_path):
    d, g = make_tree(tmp_path, kept=('db', 'db.example.internal:5432'))
    front, leaf, _ = g['nodes']
    ditto('deploy', d, '--targets', 'kubernetes', '--namespace', 'clones')
    assert not os.path.exists(os.path.join(d, 'deploy', 'compose.yaml'))
    files, objs = k8s_objects(d)
    assert files == ['000-cache.yaml', '001-front.yaml']      # start order: leaves first
    dep = objs[('Deployment', 'front')]
    assert dep['metadata']['namespace'] == 'clones'
    assert dep['spec']['replicas'] == 1
    c = dep['spec']['template']['spec']['containers'][0]
    assert c['args'] == ['--port', str(front['port'])]
    assert c['resources']['requests']['cpu'] == '250m'
    assert c['envFrom'][0]['configMapRef']['name'] == 'front-upstreams'
    assert 'resources' not in objs[('Deployment', 'cache')]['spec']['template']['spec'][
        'containers'][0]                                       # no CPU measured: no request
    cm = objs[('ConfigMap', 'front-upstreams')]
    assert cm['data'] == {
        'DITTO_UPSTREAM_CACHE': 'cache.clones.svc.cluster.local:%d' % leaf['port'],
        'DITTO_UPSTREAM_DB': 'db.example.internal:5432'}
    assert objs[('ConfigMap', 'cache-upstreams')]['data'] == {}
    svc = objs[('Service', 'cache')]
    assert svc['spec']['ports'][0]['port'] == leaf['port']
    assert svc['spec']['selector'] == objs[('Deployment', 'cache')]['spec']['selector'][
        'matchLabels']


def test_kubernetes_manifests_validate_against_the_api_schema(tmp_path):
    k8s.install()
    d, _ = make_tree(tmp_path, kept=('db', '127.0.0.1:5432'))
    r = ditto('deploy', d)
    assert 'kept node db is at 127.0.0.1:5432, a loopback address' in r.stderr, r.stderr
    ok, out = k8s.validate(os.path.join(d, 'deploy', 'kubernetes'))
    assert ok, out
    assert '6 objects valid' in out
    # The validator can fail: a port as a string is refused.
    bad = tmp_path / 'bad'
    bad.mkdir()
    text = (tmp_path / 'graph' / 'deploy' / 'kubernetes' / '001-front.yaml').read_text()
    (bad / 'x.yaml').write_text(text.replace('replicas: 1', 'replicas: "one"'))
    ok, out = k8s.validate(bad)
    assert not ok and 'replicas must be integer' in out, out


HOSTILE = ['Front.API_v2', '9lives', 'a--b__c', 'UPPER-case', '-lead', 'x' * 120]


def test_hostile_node_names_give_valid_names(tmp_path):
    k8s.install()
    model = sample_model(tmp_path)
    d = tmp_path / 'graph'
    d.mkdir()
    ports = list(range(31001, 31001 + len(HOSTILE)))
    for name in HOSTILE:
        ditto('synth', model, '--service', 'memcached', '-o', d / name, '-n', '-q')
    nodes = [node(HOSTILE[0], ports[0], 'resp', HOSTILE[1:])]
    nodes += [node(n, p, 'memcache-text') for n, p in zip(HOSTILE[1:], ports[1:])]
    write_graph(d, nodes, HOSTILE[0], HOSTILE[1:] + HOSTILE[:1])
    ditto('deploy', d)
    ok, out = k8s.validate(d / 'deploy' / 'kubernetes')
    assert ok, out
    with open(d / 'deploy' / 'compose.yaml') as f:
        compose = yaml.safe_load(f)
    assert set(compose['services']) == set(HOSTILE)
    env = compose['services'][HOSTILE[0]]['environment']
    assert env['DITTO_UPSTREAM_9LIVES'] == '127.0.0.1:%d' % ports[1]
    assert env['DITTO_UPSTREAM_A__B__C'] == '127.0.0.1:%d' % ports[2]
    _, objs = k8s_objects(str(d))
    names = {k[1] for k in objs if k[0] == 'Service'}
    assert names == {'front-api-v2', 'n-9lives', 'a-b-c', 'upper-case', 'lead', 'x' * 63}
    cm = objs[('ConfigMap', 'front-api-v2-upstreams')]['data']
    assert cm['DITTO_UPSTREAM_9LIVES'] == 'n-9lives.default.svc.cluster.local:%d' % ports[1]


def _graph(tmp_path):
    d, g = make_tree(tmp_path)
    return d, g


def _refused(d, doc, *words):
    with open(os.path.join(d, 'graph.json'), 'w') as f:
        f.write(doc if isinstance(doc, str) else json.dumps(doc))
    r = ditto('deploy', d, check=False)
    assert r.returncode == 1, r.stdout + r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(d, 'deploy'))
    return r.stderr


def test_broken_graph_json_is_refused_with_a_clear_error(tmp_path):
    d, g = _graph(tmp_path)
    good = json.loads(json.dumps(g))

    def variant(f):
        doc = json.loads(json.dumps(good))
        f(doc)
        return doc

    _refused(d, variant(lambda x: x['nodes'][0].update(name='../etc')),
             'nodes[0].name', 'outside [A-Za-z0-9._-]')
    _refused(d, variant(lambda x: x['nodes'][0].update(name='..')), "directory's own name")
    _refused(d, variant(lambda x: x['nodes'][1].update(upstreams=['front'])),
             'start_order', 'cache starts before front')                    # a cycle
    _refused(d, variant(lambda x: x['nodes'][1].update(upstreams=['cache'])), 'a cycle')
    _refused(d, variant(lambda x: x['nodes'][0].update(upstreams=['nobody'])),
             "not a node's name")
    _refused(d, variant(lambda x: x['nodes'][0].update(env='DITTO_UPSTREAM_X\nEVIL=1')),
             'nodes[0].env')
    _refused(d, variant(lambda x: x['nodes'][0].update(dir='../../tmp')), 'nodes[0].dir')
    _refused(d, variant(lambda x: x['nodes'][0].update(port=70000)), 'nodes[0].port')
    _refused(d, variant(lambda x: x.update(schema=2)), 'schema')
    _refused(d, variant(lambda x: x.update(front='nobody')), 'front')
    _refused(d, variant(lambda x: x['start_order'].reverse()), 'start_order')
    _refused(d, variant(lambda x: x['nodes'].append(node('a.b', 1, 'resp')) or
                        x['nodes'].append(node('a_b', 2, 'resp'))), 'same name')
    _refused(d, variant(lambda x: x['nodes'].append(
        node('db', 0, 'raw', kind='kept', address='evil host:1;rm'))), 'nodes[2].address')
    _refused(d, '[' * 100000, 'nested deeper')
    _refused(d, '{"schema":1,"nodes":[' + ','.join(['{}'] * 300) + ']}', 'nodes')
    _refused(d, ' ' * (5 << 20), 'limit')
    # A clone node without its tree.
    shutil.rmtree(os.path.join(d, 'cache'))
    _refused(d, good, 'cache', 'holds no clone tree')
    os.remove(os.path.join(d, 'graph.json'))
    r = ditto('deploy', d, check=False)
    assert r.returncode == 1 and 'not a graph tree' in r.stderr


def test_options_and_replacing(tmp_path):
    d, _ = _graph(tmp_path)
    r = ditto('deploy', d, '--namespace', 'Not_A_Label', check=False)
    assert r.returncode == 1 and 'DNS-1123' in r.stderr
    r = ditto('deploy', d, '--targets', 'compose,swarm', check=False)
    assert r.returncode == 2 and 'swarm' in r.stderr
    r = ditto('deploy', d, '--image-prefix', 'Bad Prefix', check=False)
    assert r.returncode == 1 and 'image prefix' in r.stderr
    # A deploy folder libditto wrote is replaced; any other is not.
    ditto('deploy', d, '--targets', 'compose')
    ditto('deploy', d, '--targets', 'k8s')
    assert sorted(os.listdir(os.path.join(d, 'deploy'))) == ['.ditto-deploy', 'docker',
                                                            'kubernetes']
    shutil.rmtree(os.path.join(d, 'deploy'))
    os.makedirs(os.path.join(d, 'deploy'))
    (tmp_path / 'graph' / 'deploy' / 'mine.txt').write_text('keep me')
    r = ditto('deploy', d, check=False)
    assert r.returncode == 1 and 'not a folder libditto wrote' in r.stderr
    assert (tmp_path / 'graph' / 'deploy' / 'mine.txt').read_text() == 'keep me'


def test_python_binding(tmp_path):
    d, g = _graph(tmp_path)
    out = pyditto.deploy(d, targets=['compose'], image_prefix='reg.local:5000/ditto-')
    assert out == d + '/deploy'
    with open(os.path.join(out, 'compose.yaml')) as f:
        compose = yaml.safe_load(f)
    assert compose['services']['front']['image'] == 'reg.local:5000/ditto-front:latest'
    assert not os.path.exists(os.path.join(out, 'kubernetes'))
    assert sorted(os.listdir(os.path.join(out, 'docker'))) == ['cache.Dockerfile',
                                                               'front.Dockerfile']
    with pytest.raises(pyditto.DittoError, match='neither compose nor kubernetes'):
        pyditto.deploy(d, targets='helm')
    with pytest.raises(pyditto.DittoError, match='DNS-1123'):
        pyditto.deploy(d, namespace='UPPER')


def test_synth_deploy_flag_needs_a_graph_tree(tmp_path):
    # A one-service tree (--service) has no graph.json: --deploy says so
    # after writing the tree.
    out = tmp_path / 'one'
    r = ditto('synth', sample_model(tmp_path), '--service', 'memcached', '-o', out, '-n',
              '--deploy', 'compose', check=False)
    assert r.returncode == 1 and 'not a graph tree' in r.stderr, r.stderr
    assert (out / 'Makefile').exists()
    r = ditto('synth', sample_model(tmp_path), '-o', tmp_path / 'two', '-n', '--deploy', 'helm',
              check=False)
    assert r.returncode == 2 and 'helm' in r.stderr


def test_listen_address_moves_the_clone_for_pods(tmp_path):
    # The manifests set DITTO_LISTEN_ADDRESS=0.0.0.0 (a Service reaches
    # the pod's address); here another loopback address stands for it.
    import subprocess
    from graph_tree import CLI, free_port
    tree = tmp_path / 'one'
    ditto('synth', sample_model(tmp_path), '--service', 'memcached', '-o', tree, '-q')
    port = free_port()
    env = dict(os.environ, DITTO_LISTEN_ADDRESS='127.0.0.2')
    p = subprocess.Popen([str(tree / 'clone'), '--port', str(port), '--max-seconds', '60'],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert p.stdout.readline().strip() == b'ready'
        r = subprocess.run([CLI, 'load', '--host', '127.0.0.2', '--port', str(port), '--framing',
                            'memcache-text', '-n', '200', '--json'], capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0 and json.loads(r.stdout)['completed'] == 200, r.stderr
        r = subprocess.run([CLI, 'load', '--port', str(port), '--framing', 'memcache-text', '-n',
                            '10'], capture_output=True, text=True, timeout=60)
        assert r.returncode != 0 and 'refused' in r.stderr
    finally:
        p.terminate()
        p.wait(10)
        p.stdout.close()
        p.stderr.close()
    env['DITTO_LISTEN_ADDRESS'] = '0.0.0.0:80'
    r = subprocess.run([str(tree / 'clone'), '--port', str(port), '--max-seconds', '5'], env=env,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and 'DITTO_LISTEN_ADDRESS=0.0.0.0:80 is not an IPv4 address' in \
        r.stderr
    # The same objects linked -static, through the binding.
    path = pyditto.build(tree, static=True)
    assert path == str(tree) + '/clone-static'
    out = subprocess.run(['readelf', '-lW', path], capture_output=True, text=True,
                         check=True).stdout
    assert 'LOAD' in out and 'INTERP' not in out


def test_a_tier_that_fails_to_build_leaves_no_files(tmp_path):
    d, _ = _graph(tmp_path)
    with open(os.path.join(d, 'cache', 'body.S'), 'a') as f:
        f.write('\n\tthis is not an instruction\n')
    r = ditto('deploy', d, '--build', check=False)
    assert r.returncode == 1, r.stdout + r.stderr
    assert 'building the clone in %s/cache failed' % d in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(d, 'deploy'))
    assert not os.path.exists(os.path.join(d, 'cache', 'clone-static'))
