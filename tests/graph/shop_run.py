# SPDX-License-Identifier: MIT
"""Run the shop behind nginx in the foreground until SIGTERM or SIGINT:
the original graph as one command, for `ditto tune --original-port P --
python3 shop_run.py P` (which starts it in a process group of its own,
and stops it with SIGTERM). NAME=PORT puts tier NAME on PORT (the others
get free ports): the tuner finds each tier of the original by its port in
the profile.

Usage: shop_run.py NGINX_PORT [NAME=PORT...]"""

import signal
import sys
import time

from shop import Shop, install


def main():
    if len(sys.argv) < 2 or not sys.argv[1].isdigit():
        sys.exit(__doc__)
    ports = {'nginx': int(sys.argv[1])}
    for a in sys.argv[2:]:
        name, _, port = a.partition('=')
        if not port.isdigit():
            sys.exit(__doc__)
        ports[name] = int(port)
    install()
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))
    with Shop(nginx=True, ports=ports):
        print('shop: ready on 127.0.0.1:%s' % sys.argv[1], flush=True)
        while not stop:
            time.sleep(0.2)


if __name__ == '__main__':
    main()
