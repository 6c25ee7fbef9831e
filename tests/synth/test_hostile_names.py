# SPDX-License-Identifier: MIT
"""A model cannot inject anything into a clone: names full of C syntax
(quotes, backslashes, newlines, comment markers, '#', printf formats,
trigraphs, escape-like text) give a clone that builds, serves, and keeps
every name verbatim as data; names outside the documented rule (NUL,
control characters, bad UTF-8, over 255 bytes) are refused by validate
and by synth alike."""

import os
import subprocess

import pytest

import ditto as d
import wire
from conftest import Clone, ditto

SERVICE = ('svc "q" \'s\' \\b\\ \\"x\n#include <stdlib.h>\n */ /* // %n%s%x%%'
           ' ??/ ??= ??( \\0 \\x00 \\000 \\n\té ✓')
SERVING = 'serve"); abort(); /* \\\n# define X ??/\n%n'
BACKGROUND = '*/ int evil = 1; /* "\\x41" %s%s%s ??< ??>'
NAMES = (SERVICE, SERVING, BACKGROUND)


def hostile_model(service=SERVICE):
    m = d.Model()
    s = m.add_service(service, framing='resp')
    s.add_thread(SERVING, count=1, role='network', io_model='epoll')
    bg = s.add_thread(BACKGROUND, count=1, role='background', io_model='blocking')
    bg.wakeups = 10
    bg.cpu_ns = 1000
    s.add_syscall(SERVING, 'read', fd_kind='tcp', calls=1000)
    s.add_syscall(SERVING, 'write', fd_kind='tcp', calls=1000)
    s.add_syscall(SERVING, 'epoll_wait', fd_kind='none', calls=1000)
    s.add_syscall(BACKGROUND, 'clock_nanosleep', fd_kind='none', calls=10)
    s.requests.count = 1000
    return m


ESCAPES = {'n': '\n', 't': '\t', '"': '"', '\\': '\\', '?': '?', "'": "'"}


def c_literals(text):
    """The decoded string literals of generated C (octal escapes as
    bytes), and the text with every literal and comment cut out."""
    out, code, i = [], [], 0
    while i < len(text):
        if text.startswith('/*', i):
            i = text.index('*/', i) + 2
        elif text[i] == '"':
            j, buf = i + 1, bytearray()
            while text[j] != '"':
                assert text[j] != '\n', 'raw newline inside a literal'
                if text[j] == '\\':
                    if text[j + 1] in '01234567':
                        buf.append(int(text[j + 1:j + 4], 8))
                        j += 4
                        continue
                    buf += ESCAPES[text[j + 1]].encode()
                    j += 2
                else:
                    buf += text[j].encode()
                    j += 1
            out.append(buf.decode('utf-8'))
            code.append(' ')
            i = j + 1
        else:
            code.append(text[i])
            i += 1
    return out, ''.join(code)


def test_hostile_names_stay_data_in_a_clone_that_builds_and_serves(tmp_path):
    model = tmp_path / 'hostile.msgpack'
    m = hostile_model()
    m.validate()
    m.save(str(model))
    ditto('model', 'validate', model)
    tree = tmp_path / 'tree'
    ditto('synth', model, '-o', tree)
    config = (tree / 'clone_config.c').read_text()
    literals, code = c_literals(config)
    # The serving class's name is not written at all (its class is the
    # skeleton itself); the others are, as literals only.
    for name in (SERVICE, BACKGROUND):
        assert name in literals, name
    # Outside literals nothing of a name is left: no comment, no code.
    for marker in ('abort', 'evil', '%n', '??', 'define X', 'stdlib'):
        assert marker not in code
    directives = [ln.strip() for ln in code.splitlines() if ln.lstrip().startswith('#')]
    assert directives == ['#include'], directives  # its "rt.h" is a literal too
    readme = (tree / 'README.md').read_text()
    assert SERVICE not in readme and c_literals(readme)[0] == [SERVICE]
    assert 'clone' in os.listdir(tree)
    # The clone keeps the name verbatim where it shows it.
    r = subprocess.run([str(tree / 'clone'), '--help'], stderr=subprocess.PIPE, timeout=10)
    assert ('clone of the service: %s\n' % SERVICE).encode() in r.stderr
    clone = Clone(tree)
    try:
        assert wire.drive(clone.port, 'resp', 200) >= 200
        assert clone.proc.poll() is None
    finally:
        assert clone.stop() == 0


# Same length as each replacement, so the msgpack string header still fits.
PLACEHOLDER = 'PLACEHOLDER-NAME-0123456'
BAD = {k: v.ljust(len(PLACEHOLDER), b'.') for k, v in {
    'nul': b'bad\x00name-with-a-nul',
    'escape': b'\x1b[2J\x1b]0;pwned\x07-ansi',
    'c1': b'c1 control \xc2\x9b here',
    'utf8': b'not utf-8 \xff\xfe\xc3\x28',
    'overlong': b'overlong slash \xc0\xaf',
}.items()}


def bad_model(tmp_path, raw):
    m = hostile_model(PLACEHOLDER)
    path = tmp_path / 'good.msgpack'
    m.save(str(path))
    data = path.read_bytes()
    assert len(raw) == len(PLACEHOLDER) and data.count(PLACEHOLDER.encode()) == 1
    bad = tmp_path / 'bad.msgpack'
    bad.write_bytes(data.replace(PLACEHOLDER.encode(), raw))
    return bad


@pytest.mark.parametrize('kind', sorted(BAD))
def test_names_outside_the_rule_are_refused_by_validate_and_synth(tmp_path, kind):
    bad = bad_model(tmp_path, BAD[kind])
    r = ditto('model', 'validate', bad, check=False)
    assert r.returncode != 0 and 'services[0].name' in r.stderr, r.stderr
    assert '\x1b' not in r.stderr
    r = ditto('synth', bad, '-o', tmp_path / 'tree', '--no-build', check=False)
    assert r.returncode != 0 and not (tmp_path / 'tree').exists()


def test_a_name_of_256_bytes_is_refused_and_255_accepted(tmp_path):
    assert d.NAME_MAX == 255
    for n, ok in ((d.NAME_MAX, True), (d.NAME_MAX + 1, False)):
        m = hostile_model('n' * (n - 2) + 'é')
        path = tmp_path / ('%d.msgpack' % n)
        m.save(str(path))
        r = ditto('model', 'validate', path, check=False)
        assert (r.returncode == 0) == ok, r.stderr
        if not ok:
            assert 'longer than 255 bytes' in r.stderr


def test_validation_messages_quote_bad_names_without_their_control_bytes(tmp_path):
    """A dangling reference is quoted in its message: the name's escape
    sequence must reach the terminal as text (\\x1b), never as ESC."""
    m = hostile_model()
    m.service(0).add_syscall(PLACEHOLDER, 'futex', calls=1)
    path = tmp_path / 'ref.msgpack'
    m.save(str(path))
    data = path.read_bytes()
    assert data.count(PLACEHOLDER.encode()) == 1
    path.write_bytes(data.replace(PLACEHOLDER.encode(), BAD['escape']))
    r = ditto('model', 'validate', path, check=False)
    assert r.returncode != 0
    assert 'names no thread class' in r.stderr + r.stdout
    assert '\x1b' not in r.stderr + r.stdout and '\\x1b[2J' in r.stderr + r.stdout
