#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the real exports of tests/graph/data from a short run of the shop
(tests/apps/shop) through nginx, and seed the fuzz corpora with the small
ones (one tier's export each, under 64 KB).

    tests/graph/make_shop_data.py [--requests 12]

Each tier exports once, when it is stopped (a batch delay longer than the
run), so every file holds one export per tier: a line of the OTLP file, a
Zipkin POST, an OTLP/HTTP protobuf POST."""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import urllib.request

from capture import Capture
from shop import TIERS, Shop, install
from shop_spans import check_traces, otlp_spans

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, 'data')
CORPUS = os.path.normpath(os.path.join(HERE, '..', 'fuzz', 'corpus'))
CORPUS_MAX = 64 * 1024
ZIPKIN_PATH, OTLP_PATH = '/api/v2/spans', '/v1/traces'


def tier_of(body):
    """The tier whose export this is: its service.name is in the body
    (Zipkin JSON, OTLP JSON, or OTLP protobuf: the KeyValue's value field 2,
    an AnyValue whose string_value is field 1)."""
    found = [t for t in TIERS if b'"serviceName":"%s"' % t.encode() in body
             or b'"service.name","value":{"stringValue":"%s"}' % t.encode() in body
             or b'service.name' + bytes([0x12, len(t) + 2, 0x0a, len(t)]) + t.encode() in body]
    if len(found) != 1:
        raise RuntimeError('an export of %s tiers' % (found or 'no'))
    return found[0]


def write(path, data):
    with open(path, 'wb') as f:
        f.write(data)
    print('%7d %s' % (len(data), os.path.relpath(path, os.path.join(HERE, '..', '..'))))


def seed_corpus(folder, name, data):
    if len(data) < CORPUS_MAX:
        os.makedirs(os.path.join(CORPUS, folder), exist_ok=True)
        write(os.path.join(CORPUS, folder, name), data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--requests', type=int, default=12)
    args = ap.parse_args()
    install()
    tmp = tempfile.mkdtemp(prefix='ditto-shop-data-')
    try:
        otlp_file = os.path.join(tmp, 'otlp.jsonl')
        with Capture() as cap:
            with Shop(otlp_file=otlp_file, zipkin_url=cap.url(ZIPKIN_PATH), otlp_http_url=cap.url(OTLP_PATH),
                      nginx=True, env={'OTEL_BSP_SCHEDULE_DELAY': '600000'}) as shop:
                for _ in range(args.requests):
                    with urllib.request.urlopen(shop.url('/page'), timeout=10) as r:
                        r.read()
                # The audit calls are not awaited: let the last one end.
                time.sleep(0.5)
                ports = dict(shop.ports)
                codes = shop.stop()
                if any(codes[t] != 0 for t in TIERS):
                    sys.exit('a tier did not flush: %s %s' % (codes, shop.logs))
            zipkin = {tier_of(p.body): p.body for p in cap.posts(ZIPKIN_PATH)}
            proto = {tier_of(p.body): p.body for p in cap.posts(OTLP_PATH)}
        with open(otlp_file, 'rb') as f:
            lines = {tier_of(line): line for line in f}
        for name, got in (('OTLP file lines', lines), ('Zipkin POSTs', zipkin), ('OTLP/HTTP POSTs', proto)):
            if sorted(got) != sorted(TIERS):
                sys.exit('%s: one per tier expected, got %s' % (name, sorted(got)))

        # The data must show the shop's graph, one whole trace per request.
        traces = check_traces(otlp_spans(otlp_file), ports)
        if traces != args.requests:
            sys.exit('%d traces for %d requests' % (traces, args.requests))

        os.makedirs(DATA, exist_ok=True)
        write(os.path.join(DATA, 'shop-otlp.jsonl'), b''.join(lines[t] for t in TIERS))
        # Which port was which service in this run (the spans name ports only).
        write(os.path.join(DATA, 'shop-ports.json'), json.dumps(ports, indent=1, sort_keys=True).encode() + b'\n')
        spans = [s for t in TIERS for s in json.loads(zipkin[t])]
        write(os.path.join(DATA, 'shop-zipkin.json'), json.dumps(spans, separators=(',', ':')).encode() + b'\n')
        # One body as it came: front's, which has both SERVER and CLIENT spans.
        write(os.path.join(DATA, 'shop-otlp.pb'), proto['front'])
        for t in TIERS:
            seed_corpus('otlp_json', 'shop-%s.json' % t, lines[t])
            seed_corpus('zipkin_json', 'shop-%s.json' % t, zipkin[t])
            seed_corpus('otlp_proto', 'shop-%s.pb' % t, proto[t])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
