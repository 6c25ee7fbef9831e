#!/usr/bin/env python3
"""Write the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/).

    tests/fuzz/make-corpus.py BUILDDIR/examples/ditto/ditto

model_decode gets the sample models of seeds 1..4 (written by the CLI) and
hostile variants of them: truncated, trailing bytes, other schema versions,
huge length prefixes, deep nesting, wrong types, broken histograms, rule
violations, unknown keys of every msgpack type. hist gets short programs
for fuzz_hist.c. Every file stays under 64 KiB. Needs only the standard
library: a small msgpack codec is below.
"""
import copy
import math
import os
import struct
import subprocess
import sys
import tempfile

LIMIT = 64 * 1024


class OMap(list):
    """A msgpack map as a list of (key, value) pairs: keeps order, allows duplicates."""

    def get(self, key, default=None):
        return next((v for k, v in self if k == key), default)

    def set(self, key, value):
        for i, (k, _) in enumerate(self):
            if k == key:
                self[i] = (key, value)
                return
        self.append((key, value))


class Ext:
    def __init__(self, code, data):
        self.code, self.data = code, data


class F32(float):
    pass


def unpack(buf):
    pos = 0

    def take(n):
        nonlocal pos
        pos += n
        if pos > len(buf):
            raise ValueError("truncated")
        return buf[pos - n:pos]

    def num(fmt):
        return struct.unpack(">" + fmt, take(struct.calcsize(fmt)))[0]

    def obj():
        b = take(1)[0]
        if b <= 0x7F:
            return b
        if b >= 0xE0:
            return b - 0x100
        if 0xA0 <= b <= 0xBF:
            return take(b & 0x1F).decode()
        if 0x90 <= b <= 0x9F:
            return [obj() for _ in range(b & 0x0F)]
        if 0x80 <= b <= 0x8F:
            return OMap((obj(), obj()) for _ in range(b & 0x0F))
        simple = {0xC0: None, 0xC2: False, 0xC3: True}
        if b in simple:
            return simple[b]
        ints = {0xCC: "B", 0xCD: "H", 0xCE: "I", 0xCF: "Q", 0xD0: "b", 0xD1: "h", 0xD2: "i", 0xD3: "q"}
        if b in ints:
            return num(ints[b])
        if b == 0xCA:
            return F32(num("f"))
        if b == 0xCB:
            return num("d")
        lens = {0xD9: "B", 0xDA: "H", 0xDB: "I", 0xC4: "B", 0xC5: "H", 0xC6: "I",
                0xDC: "H", 0xDD: "I", 0xDE: "H", 0xDF: "I", 0xC7: "B", 0xC8: "H", 0xC9: "I"}
        if b in lens:
            n = num(lens[b])
            if b in (0xD9, 0xDA, 0xDB):
                return take(n).decode()
            if b in (0xC4, 0xC5, 0xC6):
                return bytes(take(n))
            if b in (0xDC, 0xDD):
                return [obj() for _ in range(n)]
            if b in (0xDE, 0xDF):
                return OMap((obj(), obj()) for _ in range(n))
            code = num("b")
            return Ext(code, bytes(take(n)))
        if 0xD4 <= b <= 0xD8:
            code = num("b")
            return Ext(code, bytes(take(1 << (b - 0xD4))))
        raise ValueError("bad byte 0x%02x" % b)

    out = obj()
    if pos != len(buf):
        raise ValueError("trailing bytes")
    return out


def pack(o):
    if o is None:
        return b"\xc0"
    if o is True or o is False:
        return b"\xc3" if o else b"\xc2"
    if isinstance(o, int):
        if 0 <= o <= 0x7F or -32 <= o < 0:
            return struct.pack(">b" if o < 0 else ">B", o)
        for code, fmt in ((0xCC, "B"), (0xCD, "H"), (0xCE, "I"), (0xCF, "Q")) if o >= 0 else \
                ((0xD0, "b"), (0xD1, "h"), (0xD2, "i"), (0xD3, "q")):
            try:
                return bytes([code]) + struct.pack(">" + fmt, o)
            except struct.error:
                pass
        raise ValueError("int out of range")
    if isinstance(o, F32):
        return b"\xca" + struct.pack(">f", o)
    if isinstance(o, float):
        return b"\xcb" + struct.pack(">d", o)
    if isinstance(o, str):
        data = o.encode()
        return sized(len(data), 0xA0, 31, (0xD9, 0xDA, 0xDB)) + data
    if isinstance(o, bytes):
        return sized(len(o), None, 0, (0xC4, 0xC5, 0xC6)) + o
    if isinstance(o, Ext):
        return sized(len(o.data), None, 0, (0xC7, 0xC8, 0xC9)) + struct.pack(">b", o.code) + o.data
    if isinstance(o, OMap):
        return sized(len(o), 0x80, 15, (None, 0xDE, 0xDF)) + b"".join(pack(k) + pack(v) for k, v in o)
    if isinstance(o, list):
        return sized(len(o), 0x90, 15, (None, 0xDC, 0xDD)) + b"".join(pack(v) for v in o)
    raise TypeError(type(o))


def sized(n, fix, fixmax, codes):
    if fix is not None and n <= fixmax:
        return bytes([fix | n])
    for code, fmt, top in zip(codes, "BHI", (0xFF, 0xFFFF, 0xFFFFFFFF)):
        if code is not None and n <= top:
            return bytes([code]) + struct.pack(">" + fmt, n)
    raise ValueError("too long")


def walk(o, pred):
    """Yield every map under o (o included) for which pred(map) holds."""
    if isinstance(o, OMap):
        if pred(o):
            yield o
        for _, v in o:
            yield from walk(v, pred)
    elif isinstance(o, list):
        for v in o:
            yield from walk(v, pred)


def first(o, pred):
    return next(walk(o, pred), None)


def hostile_models(model):
    """(name, bytes) of variants of a valid decoded model."""
    def variant(name, edit):
        m = copy.deepcopy(model)
        if edit(m) is not False:
            yield name, pack(m)

    svc = lambda m: m.get("services")[0]
    hist = lambda kind: lambda h: h.get("kind") == kind and isinstance(h.get("buckets"), list) \
        and len(h.get("buckets")) >= 2
    syscall = lambda s: isinstance(s.get("calls"), int) and "errors" in [k for k, _ in s]

    def outbound(m=None, address="127.0.0.1", port=8080, framing="http1", calls=4000):
        """A services[].outbound element (a back end called once per request)."""
        return OMap([("address", address), ("port", port), ("framing", framing),
                     ("connections", 4), ("calls", calls), ("sends", 4000), ("receives", 4100),
                     ("request_bytes_total", 416000), ("response_bytes_total", 1216000),
                     ("request_bytes", OMap([("kind", "log2"), ("buckets", [[64, 4000]])])),
                     ("response_bytes", OMap([("kind", "log2"), ("buckets", [[256, 3999]])]))])

    def setp(getter, key, value):
        def edit(m):
            o = getter(m)
            if o is None:
                return False
            o.set(key, value)
        return edit

    edits = [
        ("schema-2", setp(lambda m: m, "schema", 2)),
        ("schema-0", setp(lambda m: m, "schema", 0)),
        ("schema-huge", setp(lambda m: m, "schema", 2**64 - 1)),
        ("schema-negative", setp(lambda m: m, "schema", -1)),
        ("schema-string", setp(lambda m: m, "schema", "1")),
        ("schema-missing", lambda m: m.__setitem__(slice(None), [(k, v) for k, v in m if k != "schema"])),
        ("schema-twice", lambda m: m.append(("schema", 1))),
        ("services-not-array", setp(lambda m: m, "services", 5)),
        ("service-not-map", lambda m: m.get("services").__setitem__(0, "redis")),
        ("service-name-int", setp(svc, "name", 7)),
        ("service-name-empty", setp(svc, "name", "")),
        ("service-duplicate", lambda m: m.get("services").append(copy.deepcopy(svc(m)))),
        ("service-port-0", setp(svc, "ports", [0])),
        ("service-port-70000", setp(svc, "ports", [70000])),
        ("service-framing-bogus", setp(svc, "framing", "smoke-signals")),
        ("thread-count-string", setp(lambda m: first(svc(m), lambda t: "role" in [k for k, _ in t]), "count", "x")),
        ("thread-count-negative", setp(lambda m: first(svc(m), lambda t: "role" in [k for k, _ in t]), "count", -1)),
        ("thread-count-float", setp(lambda m: first(svc(m), lambda t: "role" in [k for k, _ in t]), "count", 1.5)),
        ("thread-role-bogus", setp(lambda m: first(svc(m), lambda t: "role" in [k for k, _ in t]), "role", "boss")),
        ("syscall-errors-gt-calls", lambda m: (lambda s: s and s.set("errors", s.get("calls") + 1))(first(m, syscall))),
        ("syscall-unknown-thread", setp(lambda m: first(m, syscall), "thread_class", "nobody")),
        ("syscall-calls-max", setp(lambda m: first(m, syscall), "calls", 2**64 - 1)),
        ("window-nan", setp(lambda m: m.get("meta"), "window_s", float("nan"))),
        ("window-inf", setp(lambda m: m.get("meta"), "window_s", float("inf"))),
        ("window-negative", setp(lambda m: m.get("meta"), "window_s", -1.0)),
        ("window-f32", setp(lambda m: m.get("meta"), "window_s", F32(1.5))),
        ("meta-not-map", setp(lambda m: m, "meta", [])),
        ("hist-kind-wrong", setp(lambda m: first(m, hist("log2")), "kind", "exact")),
        ("hist-kind-bogus", setp(lambda m: first(m, hist("log2")), "kind", "log3")),
        ("hist-bucket-not-start", setp(lambda m: first(m, hist("log2")), "buckets", [[3, 1]])),
        ("hist-bucket-unordered", lambda m: (lambda h: h and h.get("buckets").reverse())(first(m, hist("log2")))),
        ("hist-bucket-repeated", lambda m: (lambda h: h and h.get("buckets").append(h.get("buckets")[0]))(first(m, hist("log2")))),
        ("hist-bucket-count-0", setp(lambda m: first(m, hist("log2")), "buckets", [[0, 0]])),
        ("hist-bucket-short", setp(lambda m: first(m, hist("log2")), "buckets", [[1]])),
        ("hist-bucket-overflow", setp(lambda m: first(m, hist("log2")), "buckets", [[1, 2**64 - 1], [2, 2**64 - 1]])),
        ("hist-bucket-top", setp(lambda m: first(m, hist("log2")), "buckets", [[2**63, 1]])),
        ("hist-extra-key", setp(lambda m: first(m, hist("log2")), "mean", 3.0)),
        ("hist-precision-99", setp(lambda m: first(m, hist("loglin")), "precision", 99)),
        ("hist-precision-0", setp(lambda m: first(m, hist("loglin")), "precision", 0)),
        ("hist-as-string", lambda m: (lambda s: s and s.set("size", "big"))(first(m, syscall))),
        ("sockopts-nodelay", setp(lambda m: svc(m).get("network"), "sockopts", [OMap([
            ("level", 6), ("name", 1), ("value", 1), ("connections", 4), ("calls", 0)])])),
        ("sockopts-empty", setp(lambda m: svc(m).get("network"), "sockopts", [])),
        ("sockopts-value-past-int", setp(lambda m: svc(m).get("network"), "sockopts", [OMap([
            ("level", 1), ("name", 7), ("value", 2**31), ("connections", 1)])])),
        ("sockopts-not-array", setp(lambda m: svc(m).get("network"), "sockopts", 6)),
        ("sockopts-twice", setp(lambda m: svc(m).get("network"), "sockopts", [
            OMap([("level", 6), ("name", 3), ("value", 1)]),
            OMap([("level", 6), ("name", 3), ("value", 1)])])),
        ("outbound-backend", setp(svc, "outbound", [outbound(m=None)])),
        ("outbound-ipv6", setp(svc, "outbound", [outbound(address="::1")])),
        ("outbound-two", setp(svc, "outbound", [outbound(), outbound(port=5432, framing="postgres")])),
        ("outbound-empty", setp(svc, "outbound", [])),
        ("outbound-not-array", setp(svc, "outbound", "10.0.0.2:80")),
        ("outbound-hostname", setp(svc, "outbound", [outbound(address="db.internal")])),
        ("outbound-escape", setp(svc, "outbound", [outbound(address="\x1b]0;owned\x07")])),
        ("outbound-address-empty", setp(svc, "outbound", [outbound(address="")])),
        ("outbound-port-0", setp(svc, "outbound", [outbound(port=0)])),
        ("outbound-port-70000", setp(svc, "outbound", [outbound(port=70000)])),
        ("outbound-port-missing", setp(svc, "outbound", [OMap([("address", "10.0.0.2")])])),
        ("outbound-framing-bogus", setp(svc, "outbound", [outbound(framing="carrier-pigeon")])),
        ("outbound-calls-string", setp(svc, "outbound", [outbound(calls="many")])),
        ("outbound-twice", setp(svc, "outbound", [outbound(), outbound()])),
        ("edge-unknown-node", setp(lambda m: first(m, lambda e: "from" in [k for k, _ in e]), "from", "ghost")),
        ("unknown-keys", lambda m: (m.append(("x-future", OMap([
            ("bin", b"\x00\x01\xff"), ("ext", Ext(5, b"abc")), ("fixext", Ext(-1, b"\x00" * 8)),
            ("nested", [1, -2, 3.5, F32(0.25), None, True, OMap([("k", "v")]), 2**64 - 1, -2**63]),
            ("", "empty key")]))), svc(m).append(("x-local", [OMap([(1, "int key")])])))),
        ("int-key", lambda m: m.append((1, 2))),
        ("nil-key", lambda m: m.append((None, None))),
    ]
    for name, edit in edits:
        yield from variant(name, edit)


def raw_hostile():
    deep = 20000
    yield "empty", b""
    yield "nil", b"\xc0"
    yield "empty-map", b"\x80"
    yield "reserved-byte", b"\xc1"
    yield "array32-huge", b"\xdd\xff\xff\xff\xff"
    yield "map32-huge", b"\xdf\xff\xff\xff\xff"
    yield "str32-huge", b"\xdb\xff\xff\xff\xff"
    yield "bin32-huge", b"\xc6\xff\xff\xff\xff"
    yield "ext32-huge", b"\xc9\xff\xff\xff\xff\x01"
    yield "array16-short", b"\xdc\xff\xff" + b"\xc0" * 100
    yield "model-services-array32-huge", b"\x82" + pack("schema") + pack(1) + pack("services") + \
        b"\xdd\xff\xff\xff\xff"
    yield "model-meta-map32-huge", b"\x82" + pack("schema") + pack(1) + pack("meta") + b"\xdf\x7f\xff\xff\xff"
    yield "model-key-str32-huge", b"\x81\xdb\x7f\xff\xff\xff" + b"a" * 64
    yield "deep-arrays", b"\x91" * deep + b"\xc0"
    yield "deep-maps", b"\x81\xa1a" * (deep // 3) + b"\xc0"
    yield "model-deep-unknown", b"\x82" + pack("schema") + pack(1) + pack("x") + b"\x91" * deep + b"\xc0"
    yield "model-minimal", pack(OMap([("schema", 1)]))


def hist_programs():
    """Inputs for fuzz_hist.c: two kind bytes, then (op, operands...) steps."""
    yield "log2-adds", bytes([0, 0]) + bytes([0, 0, 5, 3]) + bytes([2] + [0xFF] * 8 + [1]) + bytes([6, 1, 0, 0])
    yield "exact-merge", bytes([1, 1, 0, 0, 7, 1, 1, 0, 9, 2, 6, 7])
    yield "loglin-p8", bytes([2 + 3 * 8, 2 + 3 * 8]) + bytes([2] + [0x12] * 8 + [4, 3] + [0x80] + [0] * 7 + [1, 6, 8, 10, 12])
    yield "mismatch", bytes([0, 2, 6, 8, 9])
    yield "overflow", bytes([0, 0, 4, 1, 0, 4, 1, 0, 6, 4, 0, 0])
    yield "bad-precision", bytes([2 + 3 * 9, 14, 1, 0, 0, 1])


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    ditto = sys.argv[1]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    seeds = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(1, 5):
            path = os.path.join(tmp, "s.msgpack")
            subprocess.run([ditto, "model", "sample", "-o", path, "--seed", str(seed)], check=True)
            with open(path, "rb") as f:
                seeds.append(f.read())
    sample = seeds[0]
    model = unpack(sample)
    assert pack(model) == sample, "make-corpus.py's msgpack codec does not round-trip the sample"

    files = {"model_decode/sample-%d.msgpack" % (i + 1): s for i, s in enumerate(seeds)}
    for cut in (1, 16, len(sample) // 2, len(sample) - 1):
        files["model_decode/truncated-%d.msgpack" % cut] = sample[:cut]
    files["model_decode/trailing-nil.msgpack"] = sample + b"\xc0"
    for name, data in list(hostile_models(model)) + list(raw_hostile()):
        files["model_decode/%s.msgpack" % name] = data
    for name, data in hist_programs():
        files["hist/%s.bin" % name] = data

    for rel, data in sorted(files.items()):
        assert len(data) < LIMIT, "%s is %d bytes" % (rel, len(data))
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    print("wrote %d files under %s" % (len(files), root))


if __name__ == "__main__":
    main()
