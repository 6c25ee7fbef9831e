# SPDX-License-Identifier: MIT
"""Build time of a clone tree with the object cache warm against without
it (`ditto_build_opts.cache_dir` "off"), rounds interleaved: each round
writes two fresh trees of one model (other seeds) and builds one each way,
the order alternating. Prints each round, the median of each and the
ratio with its spread over the rounds."""

import argparse
import os
import statistics
import subprocess
import tempfile
import time

import ditto


def fresh_tree(tmp, model, seed):
    out = os.path.join(tmp, 'tree-%d' % seed)
    subprocess.run([os.environ['DITTO_CLI'], 'synth', model, '-o', out, '--seed', str(seed),
                    '--no-build', '-q'], check=True, capture_output=True)
    return out


def timed_build(tree, cache):
    t0 = time.monotonic()
    ditto.build(tree, cache=cache)
    return time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--framing', default='resp')
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, 'model.msgpack')
        subprocess.run([os.environ['RANDOM_MODEL'], '7', a.framing, model], check=True)
        cache = os.path.join(tmp, 'cache')
        timed_build(fresh_tree(tmp, model, 1), cache)  # fills the cache
        cold, warm = [], []
        for r in range(a.rounds):
            pair = [('off', cold), (cache, warm)]
            for i, (how, out) in enumerate(pair if r % 2 == 0 else pair[::-1]):
                out.append(timed_build(fresh_tree(tmp, model, 10 + 2 * r + i), how))
            print('round %d: without cache %.2f s, with cache %.2f s' % (r + 1, cold[-1],
                                                                        warm[-1]))
        ratios = sorted(c / w for c, w in zip(cold, warm))
        print('median: without %.2f s, with %.2f s; ratio %.1f (rounds %.1f-%.1f)' % (
            statistics.median(cold), statistics.median(warm), statistics.median(ratios),
            ratios[0], ratios[-1]))


if __name__ == '__main__':
    main()
