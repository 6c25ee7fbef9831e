# SPDX-License-Identifier: MIT
"""The build's object cache (lib/synth/build_cache.c): a second clone
reuses the runtime's compiled objects and still serves; a changed header
or CFLAGS is a miss; a bad cached object is dropped and the tree built
anyway; objects another build left in a tree are never stored; only the
cache's own stale entries are removed; a cache directory others may
write to, a symbolic link, or 'off' is not used."""

import os
import re
import subprocess
import sys

import pytest

import ditto as d
import wire
from conftest import TOOLS, Clone, ditto
from harness import SANITIZER_ENV

QUICK = os.environ.get('DITTO_SYNTH_QUICK') == '1'


def tree(tmp_path, seed, name):
    model = tmp_path / 'model.msgpack'
    if not model.exists():
        subprocess.run([os.path.join(TOOLS, 'random_model'), '7', 'resp', str(model)],
                       check=True)
    out = tmp_path / name
    ditto('synth', model, '-o', out, '--seed', seed, '--no-build')
    return out


def cache_line(out):
    """(cache dir or 'off', objects reused, stored, dropped) from build.log."""
    text = (out / 'build.log').read_text()
    m = re.search(r'^ditto: build cache (\S+): (\d+) objects reused, (\d+) stored'
                  r'(?: \((\d+) cached objects failed)?', text, re.M)
    assert m, text[-2000:]
    return m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4) or 0)


def runtime_sources(out):
    return sorted(n for n in os.listdir(out) if n.startswith('rt_') and n.endswith('.c'))


def serves(out):
    if QUICK:  # the clone is not instrumented: driving it is the plain build's
        return
    clone = Clone(out)
    try:
        assert wire.drive(clone.port, 'resp', 300) >= 300
    finally:
        assert clone.stop() == 0


def test_a_second_build_reuses_the_runtime_objects(tmp_path):
    cache = tmp_path / 'cache'
    first = tree(tmp_path, 1, 'a')
    d.build(first, cache=cache)
    n = len(runtime_sources(first))
    assert n >= 40
    assert cache_line(first) == (str(cache), 0, n, 0)
    assert oct(cache.stat().st_mode & 0o777) == '0o700'
    second = tree(tmp_path, 2, 'b')
    d.build(second, cache=cache)
    assert cache_line(second) == (str(cache), n, 0, 0)
    for src in runtime_sources(second):
        obj = src[:-2] + '.o'
        assert (second / obj).read_bytes() == (first / obj).read_bytes(), obj
    serves(second)


def test_a_changed_header_or_cflags_is_a_miss(tmp_path, monkeypatch):
    cache = tmp_path / 'cache'
    d.build(tree(tmp_path, 1, 'a'), cache=cache)
    changed = tree(tmp_path, 1, 'b')
    with open(changed / 'rt.h', 'a') as f:
        f.write('\n/* another runtime */\n')
    d.build(changed, cache=cache)
    n = len(runtime_sources(changed))
    assert cache_line(changed)[1:] == (0, n, 0)
    monkeypatch.setenv('CFLAGS', '-O1 -g')
    flags = tree(tmp_path, 1, 'c')
    d.build(flags, cache=cache)
    assert cache_line(flags)[1:] == (0, n, 0)


def test_a_bad_cached_object_is_dropped_and_the_tree_built(tmp_path):
    cache = tmp_path / 'cache'
    d.build(tree(tmp_path, 1, 'a'), cache=cache)
    for obj in cache.iterdir():
        obj.write_bytes(b'not an object\n')
    out = tree(tmp_path, 2, 'b')
    d.build(out, cache=cache)
    n = len(runtime_sources(out))
    assert cache_line(out) == (str(cache), 0, n, n)
    serves(out)
    again = tree(tmp_path, 3, 'c')
    d.build(again, cache=cache)
    assert cache_line(again)[1:] == (n, 0, 0)


@pytest.mark.parametrize('how', ['shared', 'link'])
def test_a_cache_others_may_write_to_is_not_used(tmp_path, how):
    cache = tmp_path / how
    if how == 'shared':
        cache.mkdir()
        cache.chmod(0o777)
    else:  # a symbolic link is not followed: it could be made to point elsewhere
        (tmp_path / 'real').mkdir(mode=0o700)
        cache.symlink_to(tmp_path / 'real')
    out = tree(tmp_path, 1, 'a')
    r = ditto('synth', tmp_path / 'model.msgpack', '-o', out, '--force', '--build-cache',
              cache, check=False)
    assert r.returncode == 0, r.stderr
    assert 'build cache %s is not a directory of this user' % cache in r.stderr
    refused = 'ditto: build cache %s refused (not this user' % cache
    assert refused in (out / 'build.log').read_text()
    assert list(cache.iterdir()) == []
    # A tuner builds a clone per iteration: the warning comes once per
    # process (a process of its own here), build.log says it each time.
    trees = [str(tree(tmp_path, 1, name)) for name in ('b', 'c')]
    r = subprocess.run([sys.executable, '-c', 'import sys, ditto\n'
                        'for t in sys.argv[2:]: ditto.build(t, cache=sys.argv[1])',
                        str(cache)] + trees, stderr=subprocess.PIPE, text=True, timeout=120,
                       env=dict(os.environ, **SANITIZER_ENV))
    assert r.returncode == 0, r.stderr
    assert r.stderr.count('is not a directory of this user') == 1, r.stderr
    for t in trees:
        assert refused in open(os.path.join(t, 'build.log')).read()
    assert list(cache.iterdir()) == []


@pytest.mark.parametrize('how', ['cli', 'env'])
def test_off_compiles_everything(tmp_path, monkeypatch, how):
    if how == 'env':
        monkeypatch.setenv('DITTO_BUILD_CACHE', 'off')
        d.build(tree(tmp_path, 1, 'a'))
    else:
        out = tree(tmp_path, 1, 'a')
        ditto('synth', tmp_path / 'model.msgpack', '-o', out, '--force', '--build-cache', 'off',
              '-q')
    assert cache_line(tmp_path / 'a') == ('off', 0, 0, 0)


def test_objects_another_build_left_in_the_tree_are_not_stored(tmp_path, monkeypatch):
    # A tree built by hand at -O0: rebuilt with the cache at the default
    # flags, every runtime object is compiled again, none stored as it was.
    out = tree(tmp_path, 1, 'a')
    monkeypatch.setenv('CFLAGS', '-O0')
    d.build(out, cache='off')
    before = {s: (out / (s[:-2] + '.o')).read_bytes() for s in runtime_sources(out)}
    monkeypatch.delenv('CFLAGS')
    cache = tmp_path / 'cache'
    d.build(out, cache=cache)
    n = len(before)
    assert cache_line(out) == (str(cache), 0, n, 0)
    changed = [s for s in before if (out / (s[:-2] + '.o')).read_bytes() != before[s]]
    assert len(changed) > n // 2, changed
    stored = {p.read_bytes() for p in cache.iterdir()}
    assert not stored & set(before.values())


def test_only_stale_entries_of_the_cache_are_dropped(tmp_path):
    cache = tmp_path / 'cache'
    cache.mkdir(mode=0o700)
    old = 1_000_000_000  # 2001
    entry = cache / ('0123456789abcdef' * 2 + '.o')
    mine = cache / 'notes.txt'
    for p in (entry, mine):
        p.write_bytes(b'x')
        os.utime(p, (old, old))
    d.build(tree(tmp_path, 1, 'a'), cache=cache)
    assert not entry.exists()
    assert mine.read_bytes() == b'x'
