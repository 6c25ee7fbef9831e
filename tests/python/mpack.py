# SPDX-License-Identifier: MIT
"""A small msgpack encoder/decoder for the tests: enough to take a model
apart, change it (wrong types, other schema, unknown keys) and put it back,
independently of libditto's own codec. Maps decode to dicts (key order
kept), bin to bytes, ext to Ext."""

import collections
import struct

Ext = collections.namedtuple('Ext', 'type data')


class Truncated(ValueError):
    pass


def unpackb(b):
    v, pos = _unpack(memoryview(bytes(b)), 0)
    if pos != len(b):
        raise ValueError('%d trailing bytes' % (len(b) - pos))
    return v


def _take(b, pos, n):
    if pos + n > len(b):
        raise Truncated('truncated at %d' % pos)
    return bytes(b[pos:pos + n]), pos + n


def _unpack(b, pos):
    t, pos = _take(b, pos, 1)
    t = t[0]
    if t <= 0x7f:
        return t, pos
    if t >= 0xe0:
        return t - 0x100, pos
    if 0x80 <= t <= 0x8f:
        return _map(b, pos, t & 0x0f)
    if 0x90 <= t <= 0x9f:
        return _array(b, pos, t & 0x0f)
    if 0xa0 <= t <= 0xbf:
        s, pos = _take(b, pos, t & 0x1f)
        return s.decode('utf-8'), pos
    if t == 0xc0:
        return None, pos
    if t == 0xc2:
        return False, pos
    if t == 0xc3:
        return True, pos
    fixed = {0xcc: '>B', 0xcd: '>H', 0xce: '>I', 0xcf: '>Q',
             0xd0: '>b', 0xd1: '>h', 0xd2: '>i', 0xd3: '>q',
             0xca: '>f', 0xcb: '>d'}
    if t in fixed:
        fmt = fixed[t]
        raw, pos = _take(b, pos, struct.calcsize(fmt))
        return struct.unpack(fmt, raw)[0], pos
    lens = {0xd9: ('>B', 'str'), 0xda: ('>H', 'str'), 0xdb: ('>I', 'str'),
            0xc4: ('>B', 'bin'), 0xc5: ('>H', 'bin'), 0xc6: ('>I', 'bin'),
            0xdc: ('>H', 'array'), 0xdd: ('>I', 'array'),
            0xde: ('>H', 'map'), 0xdf: ('>I', 'map'),
            0xc7: ('>B', 'ext'), 0xc8: ('>H', 'ext'), 0xc9: ('>I', 'ext')}
    if t in lens:
        fmt, what = lens[t]
        raw, pos = _take(b, pos, struct.calcsize(fmt))
        n = struct.unpack(fmt, raw)[0]
        if what == 'array':
            return _array(b, pos, n)
        if what == 'map':
            return _map(b, pos, n)
        if what == 'ext':
            et, pos = _take(b, pos, 1)
            data, pos = _take(b, pos, n)
            return Ext(struct.unpack('b', et)[0], data), pos
        s, pos = _take(b, pos, n)
        return (s.decode('utf-8') if what == 'str' else s), pos
    if t in (0xd4, 0xd5, 0xd6, 0xd7, 0xd8):
        et, pos = _take(b, pos, 1)
        data, pos = _take(b, pos, 1 << (t - 0xd4))
        return Ext(struct.unpack('b', et)[0], data), pos
    raise ValueError('byte 0x%02x at %d is not msgpack' % (t, pos - 1))


def _array(b, pos, n):
    out = []
    for _ in range(n):
        v, pos = _unpack(b, pos)
        out.append(v)
    return out, pos


def _map(b, pos, n):
    out = {}
    for _ in range(n):
        k, pos = _unpack(b, pos)
        v, pos = _unpack(b, pos)
        out[k] = v
    return out, pos


def packb(v):
    out = bytearray()
    _pack(v, out)
    return bytes(out)


def _len_header(out, n, fix_base, fix_max, codes):
    if fix_base is not None and n <= fix_max:
        out.append(fix_base | n)
    elif n <= 0xff and codes[0] is not None:
        out += bytes([codes[0], n])
    elif n <= 0xffff:
        out += bytes([codes[1]]) + struct.pack('>H', n)
    else:
        out += bytes([codes[2]]) + struct.pack('>I', n)


def _pack(v, out):
    if v is None:
        out.append(0xc0)
    elif v is True:
        out.append(0xc3)
    elif v is False:
        out.append(0xc2)
    elif isinstance(v, int):
        if 0 <= v <= 0x7f:
            out.append(v)
        elif -32 <= v < 0:
            out.append(v & 0xff)
        elif v >= 0:
            for code, fmt, lim in ((0xcc, '>B', 0xff), (0xcd, '>H', 0xffff),
                                   (0xce, '>I', 0xffffffff), (0xcf, '>Q', (1 << 64) - 1)):
                if v <= lim:
                    out += bytes([code]) + struct.pack(fmt, v)
                    break
            else:
                raise OverflowError(v)
        else:
            for code, fmt, lim in ((0xd0, '>b', 1 << 7), (0xd1, '>h', 1 << 15),
                                   (0xd2, '>i', 1 << 31), (0xd3, '>q', 1 << 63)):
                if v >= -lim:
                    out += bytes([code]) + struct.pack(fmt, v)
                    break
            else:
                raise OverflowError(v)
    elif isinstance(v, float):
        out += b'\xcb' + struct.pack('>d', v)
    elif isinstance(v, str):
        s = v.encode('utf-8')
        _len_header(out, len(s), 0xa0, 31, (0xd9, 0xda, 0xdb))
        out += s
    elif isinstance(v, Ext):
        n = len(v.data)
        fix = {1: 0xd4, 2: 0xd5, 4: 0xd6, 8: 0xd7, 16: 0xd8}
        if n in fix:
            out.append(fix[n])
        else:
            _len_header(out, n, None, 0, (0xc7, 0xc8, 0xc9))
        out += struct.pack('b', v.type) + bytes(v.data)
    elif isinstance(v, (bytes, bytearray)):
        _len_header(out, len(v), None, 0, (0xc4, 0xc5, 0xc6))
        out += v
    elif isinstance(v, (list, tuple)):
        _len_header(out, len(v), 0x90, 15, (None, 0xdc, 0xdd))
        for x in v:
            _pack(x, out)
    elif isinstance(v, dict):
        _len_header(out, len(v), 0x80, 15, (None, 0xde, 0xdf))
        for k, x in v.items():
            _pack(k, out)
            _pack(x, out)
    else:
        raise TypeError('cannot pack %r' % (v,))
