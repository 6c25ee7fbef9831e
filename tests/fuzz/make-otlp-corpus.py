#!/usr/bin/env python3
"""Write the seed corpora of the OTLP receiver's fuzz targets:
tests/fuzz/corpus/otlp_proto/ (ExportTraceServiceRequest bodies, some
gzip'd, and hostile variants) and tests/fuzz/corpus/http_head/ (request
heads). Needs only the standard library: a few lines of protobuf wire
encoding below (field numbers of lib/profile/traces/otlp_trace.proto).

    tests/fuzz/make-otlp-corpus.py
"""
import gzip
import os
import struct


def varint(n):
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def ld(field, payload):          # length-delimited: bytes, string, message
    return key(field, 2) + varint(len(payload)) + payload


def vi(field, n):
    return key(field, 0) + varint(n)


def f64(field, n):
    return key(field, 1) + struct.pack("<Q", n)


def kv_str(k, v):
    return ld(1, k.encode()) + ld(2, ld(1, v.encode()))


def kv_int(k, v):
    return ld(1, k.encode()) + ld(2, vi(3, v))


def kv_double(k, v):
    return ld(1, k.encode()) + ld(2, key(4, 1) + struct.pack("<d", v))


def span(tid, sid, parent, name, kind, start, end, attrs=()):
    b = ld(1, tid) + ld(2, sid)
    if parent:
        b += ld(4, parent)
    b += ld(5, name.encode()) + vi(6, kind) + f64(7, start) + f64(8, end)
    for a in attrs:
        b += ld(9, a)
    return b


def resource_spans(service, spans, old_field=False):
    res = ld(1, ld(1, kv_str("service.name", service)))
    scope = b"".join(ld(2, s) for s in spans)
    return res + ld(1000 if old_field else 2, scope)


def request(rs_list):
    return b"".join(ld(1, rs) for rs in rs_list)


TID = bytes(range(1, 17))
SID = [struct.pack(">Q", i) for i in range(1, 6)]
T0 = 1700000000000000000


def sample():
    front = [span(TID, SID[0], None, "GET /", 2, T0, T0 + 5000000,
                  [kv_str("http.request.method", "GET"), kv_int("server.port", 8080)]),
             span(TID, SID[1], SID[0], "GET /api", 3, T0 + 1000, T0 + 3000000,
                  [kv_str("server.address", "127.0.0.1"), kv_int("server.port", 8081),
                   kv_double("http.response.body.size", 120.0)]),
             span(TID, SID[2], SID[0], "redis GET", 3, T0 + 2000, T0 + 90000,
                  [kv_str("db.system", "redis"), kv_str("net.peer.name", "localhost"),
                   kv_int("net.peer.port", 6379)])]
    back = [span(TID, SID[3], SID[1], "GET /api", 2, T0 + 5000, T0 + 2900000),
            span(TID, SID[4], SID[3], "publish", 4, T0 + 6000, T0 + 7000,
                 [kv_int("messaging.message.body.size", 64)])]
    return request([resource_spans("front", front), resource_spans("back", back, True)])


def hostile(good):
    yield "empty.pb", b""
    yield "truncated.pb", good[: len(good) // 2]
    yield "bad-ids.pb", request([resource_spans("x", [span(b"\x01" * 3, b"\x02" * 9, b"\x03",
                                                           "s", 2, T0, T0)])])
    yield "end-before-start.pb", request([resource_spans("x", [span(TID, SID[0], None, "s", 2,
                                                                    T0, T0 - 1)])])
    yield "kind-99.pb", request([resource_spans("x", [span(TID, SID[0], None, "s", 99, T0, T0)])])
    yield "huge-length.pb", key(1, 2) + varint(1 << 62) + b"\x00" * 8
    yield "many-empty-spans.pb", ld(1, ld(2, ld(2, b"") * 4000))
    # array and kvlist attribute values: skipped as unknown fields, whatever their depth
    nested = ld(1, b"x")
    for _ in range(200):
        nested = ld(5, ld(1, nested))
    yield "deep-anyvalue.pb", request([resource_spans("x", [span(TID, SID[0], None, "s", 2, T0,
                                                                 T0, [ld(1, b"k") + ld(2, nested)])])])
    yield "wrong-wire-type.pb", vi(1, 5) + good
    yield "sample.pb.gz", gzip.compress(good, mtime=0)
    yield "bomb.gz", gzip.compress(b"\x00" * (4 << 20), mtime=0)


HEADS = {
    "post.txt": b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1:4318\r\n"
                b"Content-Type: application/x-protobuf\r\nContent-Length: 123\r\n"
                b"User-Agent: OTel-OTLP-Exporter-JavaScript/0.52.1\r\nConnection: keep-alive\r\n\r\n",
    "json-gzip.txt": b"POST /v1/traces?x=1 HTTP/1.1\r\nContent-Type: application/json; charset=utf-8\r\n"
                     b"Content-Encoding: gzip\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n",
    "chunked.txt": b"POST /v1/traces HTTP/1.0\nTransfer-Encoding: gzip, chunked\nConnection: Keep-Alive\n\n",
    "smuggle.txt": b"POST /v1/traces HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
    "fold.txt": b"GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n",
    "partial.txt": b"POST /v1/traces HTTP/1.1\r\nContent-Ty",
    # a head and its chunked body, as Node's exporter sends them
    "chunked-body.txt": b"POST /v1/traces HTTP/1.1\r\nContent-Type: application/x-protobuf\r\n"
                        b"Transfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n1\nA\n"
                        b"0\r\nTrailer: 1\r\n\r\nGET / HTTP/1.1\r\n\r\n",
    "chunked-huge.txt": b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                        b"ffffffffffffffffffff\r\n",
}


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    good = sample()
    files = [("otlp_proto", "sample.pb", good)]
    files += [("otlp_proto", n, b) for n, b in hostile(good)]
    files += [("http_head", n, b) for n, b in HEADS.items()]
    for target, name, data in files:
        d = os.path.join(root, target)
        os.makedirs(d, exist_ok=True)
        assert len(data) <= 64 * 1024, name
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
    print("wrote %d files" % len(files))


if __name__ == "__main__":
    main()
