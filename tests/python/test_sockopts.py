# SPDX-License-Identifier: MIT
"""services[].network.sockopts: the serving connections' socket options
(absent: unknown; empty: none set), through the C API and the codec."""

import pytest

import ditto
import mpack
from ditto import Model

TCP, NODELAY, SOCK, SNDBUF = 6, 1, 1, 7


def service():
    m = Model()
    return m, m.add_service('svc')


def test_absent_is_unknown_and_empty_is_known():
    m, s = service()
    assert s.network.sockopts is None
    s.network.set_sockopts_known()
    assert s.network.sockopts == []
    back = Model.from_bytes(m.to_bytes())
    assert back.service('svc').network.sockopts == []
    assert 'sockopts' not in Model.from_bytes(service()[0].to_bytes()).json()['services'][0].get(
        'network', {})


def test_counts_add_up_per_option_and_round_trip():
    m, s = service()
    n = s.network
    n.sockopt_connections = 4
    n.add_sockopt(TCP, NODELAY, 1, connections=3)
    n.add_sockopt(TCP, NODELAY, 1, connections=1, calls=2)
    n.add_sockopt(SOCK, SNDBUF, 65536, connections=4)
    want = [{'level': TCP, 'name': NODELAY, 'value': 1, 'connections': 4, 'calls': 2},
            {'level': SOCK, 'name': SNDBUF, 'value': 65536, 'connections': 4, 'calls': 0}]
    assert n.sockopts == want
    m.validate()
    back = Model.from_bytes(m.to_bytes())
    assert back.service('svc').network.sockopts == want
    assert back.service('svc').network.sockopt_connections == 4
    assert back.get('services[0].network.sockopts[1].value') == 65536


def test_values_past_an_int_are_refused():
    _, s = service()
    with pytest.raises(ditto.DittoError):
        s.network.add_sockopt(TCP, NODELAY, 2 ** 31)


def test_validation_names_an_option_past_an_int():
    m, s = service()
    s.network.add_sockopt(TCP, NODELAY, 1)
    d = mpack.unpackb(m.to_bytes())
    d['services'][0]['network']['sockopts'][0]['value'] = 2 ** 31
    problems = Model.from_bytes(mpack.packb(d), validate=False).problems()
    assert any('sockopts' in p and 'value' in p for p, _ in problems), problems


@pytest.mark.parametrize('field', ['serial_connections', 'master_process'])
def test_network_flag_round_trips_and_defaults_to_false(field):
    """network.serial_connections and network.master_process (model.h):
    absent in older models they are false; set, they survive the codec
    and show in the JSON."""
    m, s = service()
    assert getattr(s.network, field) is False
    setattr(s.network, field, True)
    back = Model.from_bytes(m.to_bytes())
    assert getattr(back.service('svc').network, field) is True
    assert back.json()['services'][0]['network'][field] is True
    assert back.get('services[0].network.' + field) is True
