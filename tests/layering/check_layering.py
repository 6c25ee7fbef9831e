#!/usr/bin/env python3
"""The stages of lib/ as the build enforces them (lib/meson.build).

1. Includes: every object of a stage is compiled with an include path on
   which the headers of the stages it builds on are found and the others
   are not. Each stage's own compile flags (compile_commands.json) are
   used to preprocess an include of each stage's internal header: a
   deliberate upward or sideways include must fail, a downward one work.
2. Links: no stage's objects use a symbol defined by a stage it does not
   build on (an extern declaration written by hand would pass check 1).
3. Files: no cycle among a stage's objects (a.c using b.c using a.c):
   each file can be read, and moved, from the bottom up.
4. The installed libditto.a defines no global outside the ditto_ API.

usage: check_layering.py BUILD_DIR
"""
import json
import os
import shlex
import subprocess
import sys

# stage: (its internal header, the stages it may use, itself included)
STAGES = {
    'core': ('core_int.h', {'core'}),
    'model': ('model_int.h', {'core', 'model'}),
    'profile': ('profile_int.h', {'core', 'model', 'profile'}),
    'synth': ('synth_int.h', {'core', 'model', 'synth'}),
    'tune': ('tune_int.h', {'core', 'model', 'profile', 'synth', 'tune'}),
}
# tune drives the profiler through its public API only: its include path
# does not hold profile's folder, and it links only ditto_ names of it.
PUBLIC_ONLY = {'tune': {'profile'}}
INCLUDES = {s: set(u) - PUBLIC_ONLY.get(s, set()) for s, (_, u) in STAGES.items()}

failures = []


def fail(msg):
    failures.append(msg)
    print('FAIL: ' + msg)


def stage_flags(build):
    """One compile command per stage (its first object's), as argv."""
    with open(os.path.join(build, 'compile_commands.json')) as f:
        cmds = json.load(f)
    flags = {}
    for c in cmds:
        for s in STAGES:
            if 'libditto-%s.a.p' % s in c.get('output', c['command']) and s not in flags:
                flags[s] = (c['directory'], shlex.split(c['command']))
    missing = set(STAGES) - set(flags)
    if missing:
        fail('no compile command for stage(s) %s' % sorted(missing))
    return flags


def preprocess(directory, argv, header):
    """Whether `#include "header"` preprocesses with this stage's flags."""
    keep, skip = [argv[0]], False
    for a in argv[1:]:
        if skip:
            skip = False
        elif a in ('-o', '-MF', '-MQ', '-MT', '-c'):
            skip = a != '-c'
        elif a.endswith('.c') or a in ('-MD',):
            continue
        else:
            keep.append(a)
    r = subprocess.run(keep + ['-E', '-x', 'c', '-', '-o', os.devnull],
                       input='#include "%s"\n' % header, cwd=directory,
                       capture_output=True, text=True)
    # gcc: "No such file or directory"; clang: "file not found"
    if r.returncode and 'No such file' not in r.stderr and 'file not found' not in r.stderr:
        fail('%s: preprocessing failed for another reason: %s' % (header, r.stderr[:300]))
    return r.returncode == 0


def check_includes(build):
    for s, (directory, argv) in sorted(stage_flags(build).items()):
        for other, (header, _) in STAGES.items():
            want = other in INCLUDES[s]
            got = preprocess(directory, argv, header)
            if got != want:
                fail('stage %s %s include %s (%s)' % (s, 'can' if got else 'cannot', header,
                                                      'should not' if got else 'it builds on it'))
            # "profile/profile_int.h": lib/ itself is on no stage's path
            if other != s and preprocess(directory, argv, '%s/%s' % (other, header)):
                fail('stage %s can include %s/%s' % (s, other, header))
        print('includes: %s sees %s' % (s, ', '.join(sorted(INCLUDES[s]))))


def nm(path, *opts):
    r = subprocess.run(['nm', *opts, path], capture_output=True, text=True, check=True)
    return r.stdout.splitlines()


def check_links(build):
    defined, used = {}, {}
    for s in STAGES:
        lib = os.path.join(build, 'lib', 'libditto-%s.a' % s)
        used[s] = set()
        for line in nm(lib):
            p = line.split()
            if len(p) == 3 and p[1] in 'TDBRCVW':
                defined[p[2]] = s
            elif len(p) == 2 and p[0] == 'U':
                used[s].add(p[1])
    for s in STAGES:
        bad = sorted('%s (%s)' % (n, defined[n]) for n in used[s]
                     if n in defined and (defined[n] not in STAGES[s][1] or
                                          (defined[n] in PUBLIC_ONLY.get(s, ()) and
                                           not n.startswith('ditto_'))))
        if bad:
            fail('stage %s uses what it does not build on: %s' % (s, ', '.join(bad[:20])))
        else:
            print('links: %s uses only %s' % (s, ', '.join(sorted(STAGES[s][1]))))


def object_graph(build, stage):
    """Objects of a stage and, for each, the objects of it it uses."""
    lib = os.path.join(build, 'lib', 'libditto-%s.a' % stage)
    defined, used, obj = {}, {}, None
    for line in nm(lib, '-A'):
        path, _, rest = line.rpartition(':')
        path = path.split(':')[-1] if path.endswith('.o') else path
        obj = os.path.basename(path.split('(')[-1].rstrip(')')).replace('.c.o', '')
        p = rest.split()
        used.setdefault(obj, set())
        if len(p) == 3 and p[1] in 'TDBRCVW':
            defined[p[2]] = obj
        elif len(p) == 2 and p[0] == 'U':
            used[obj].add(p[1])
    return {o: {defined[u] for u in us if u in defined and defined[u] != o}
            for o, us in used.items()}


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def check_cycles(build):
    for s in STAGES:
        graph = object_graph(build, s)
        found = cycles(graph)
        for comp in found:
            fail('stage %s: files that use each other: %s' % (s, ', '.join(comp)))
        if not found:
            print('files: no cycle among the %d objects of %s' % (len(graph), s))


def check_archive(build):
    names = [l.split()[2] for l in nm(os.path.join(build, 'lib', 'libditto.a'), '-g',
                                       '--defined-only') if len(l.split()) == 3]
    bad = sorted(n for n in names if not n.startswith('ditto_'))
    if not names:
        fail('libditto.a defines no global at all')
    if bad:
        fail('libditto.a defines %d global(s) outside ditto_: %s' % (len(bad), ', '.join(bad[:20])))
    else:
        print('archive: %d globals, all ditto_' % len(names))


def main():
    build = sys.argv[1]
    check_includes(build)
    check_links(build)
    check_cycles(build)
    check_archive(build)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
