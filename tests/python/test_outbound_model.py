# SPDX-License-Identifier: MIT
"""services[].outbound: calls a service made to other endpoints, kept
apart from its requests, through the C API, the codec and validation (the
address is untrusted input: only an IP literal passes)."""

import pytest

import ditto
import mpack
from ditto import Model


def service():
    m = Model()
    return m, m.add_service('proxy')


def test_endpoints_round_trip_with_their_counts():
    m, s = service()
    s.requests.count = 1000
    o = s.add_outbound('10.0.0.2', 5432, calls=1000, framing='postgres')
    o.connections = 4
    o.sends, o.receives = 1000, 1200
    o.request_bytes_total, o.response_bytes_total = 80000, 300000
    o.request_bytes.add(80, 1000)
    s.add_outbound('::1', 6379, calls=2000, framing='resp')
    m.validate()
    back = Model.from_bytes(m.to_bytes()).service('proxy')
    got = [(x.address, x.port, x.framing, x.calls) for x in back.outbound]
    assert got == [('10.0.0.2', 5432, 'postgres', 1000), ('::1', 6379, 'resp', 2000)]
    first = back.outbound[0]
    assert (first.connections, first.sends, first.receives) == (4, 1000, 1200)
    assert (first.request_bytes_total, first.response_bytes_total) == (80000, 300000)
    assert first.request_bytes.total == 1000
    # Outbound calls are not requests.
    assert back.requests.count == 1000


def test_an_endpoint_is_added_once():
    _, s = service()
    s.add_outbound('127.0.0.1', 80)
    with pytest.raises(ditto.DittoError):
        s.add_outbound('127.0.0.1', 80)
    with pytest.raises(ditto.DittoError):
        s.add_outbound('127.0.0.1', 0)
    with pytest.raises(ditto.DittoError):
        s.add_outbound('', 80)


@pytest.mark.parametrize('address', ['db.internal', '10.0.0.2:80', '\x1b]0;x\x07', '1.2.3'])
def test_validation_refuses_an_address_that_is_no_ip_literal(address):
    m, s = service()
    s.add_outbound('127.0.0.1', 80, calls=1)
    d = mpack.unpackb(m.to_bytes())
    d['services'][0]['outbound'][0]['address'] = address
    problems = Model.from_bytes(mpack.packb(d), validate=False).problems()
    assert any('outbound' in p and 'address' in p for p, _ in problems), problems


def test_diff_compares_calls_per_request():
    a, s = service()
    s.requests.count = 100
    s.add_outbound('127.0.0.1', 8080, calls=100)
    b, t = service()
    t.requests.count = 100
    t.add_outbound('127.0.0.1', 8080, calls=200)
    paths = {x.path: x for x in a.compare(b)}
    rate = paths['services[proxy].outbound[127.0.0.1:port=8080].calls_per_request']
    assert (rate.a, rate.b) == (1.0, 2.0)
