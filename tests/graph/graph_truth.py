# SPDX-License-Identifier: MIT
"""The shop's call graph as its code builds it (tests/apps/shop), in the
terms of a model's graph: per edge, calls per parent request, the mode
(does the parent's answer wait for the call's?) and the order (do the
parent's calls overlap?). Shared by the tests that check the graph a
profile or an import derives against it."""

# (from, to): (calls per parent request, mode, order)
EDGES = {
    ('nginx', 'front'): (1.0, 'sync', 'sequential'),
    ('front', 'back'): (3.0, 'sync', 'sequential'),
    ('front', 'audit'): (1.0, 'async', 'sequential'),
    ('back', 'redis'): (1.0, 'sync', 'parallel'),
    ('back', 'memcached'): (1.0, 'sync', 'parallel'),
}
# Externals are named after the framing their first request spoke.
EXTERNAL_KIND = {'redis': ('redis', 'resp'), 'memcached': ('memcached', 'memcache-text')}


def node_of(name, ports):
    """The truth's node for a model's node name: services by name,
    externals by '<kind>-<port>' (ports: the shop's ports by tier)."""
    for tier, (kind, _) in EXTERNAL_KIND.items():
        if name == '%s-%d' % (kind, ports[tier]):
            return tier
    return name


def edges_of(model_json, ports, source='kernel'):
    """{(from, to): edge} of one source, nodes named as in EDGES."""
    out = {}
    for e in model_json.get('graph', {}).get('edges', []):
        if e.get('source', 'kernel') != source:
            continue
        out[(node_of(e['from'], ports), node_of(e['to'], ports))] = e
    return out


def fanout_share(edge, k):
    """Share of parent requests that made exactly k calls on the edge."""
    total = sum(b['count'] for b in edge['fanout']['buckets'])
    hit = sum(b['count'] for b in edge['fanout']['buckets'] if b['lo'] == k)
    return hit / total if total else 0.0
