# SPDX-License-Identifier: MIT
"""Apache httpd from a private configuration (its own port, pid file,
error log and document root in a directory of its own), started in the
foreground in a session of its own and stopped by its PID: Debian's own
instance is never touched. Used by test_clone_apache.py and
bench/clone-compare."""

import os
import shutil
import tempfile

from harness import Service, need

APACHE = shutil.which('apache2') or ('/usr/sbin/apache2' if os.access('/usr/sbin/apache2', os.X_OK)
                                     else None)
MODULES = '/usr/lib/apache2/modules'

COMMON = '''LoadModule authz_core_module {mods}/mod_authz_core.so
User www-data
Group www-data
ServerName localhost
Listen 127.0.0.1:{port}
PidFile {d}/httpd.pid
ErrorLog {d}/error.log
DocumentRoot {d}/www
<Directory {d}/www>
  Require all granted
</Directory>
KeepAlive On
MaxKeepAliveRequests 0
'''
# A fixed number of children: no spare-server churn during the window,
# so the tree is the configuration's; as many clients as children.
PREFORK = '''LoadModule mpm_prefork_module {mods}/mod_mpm_prefork.so
StartServers 3
MinSpareServers 3
MaxSpareServers 3
ServerLimit 3
MaxRequestWorkers 3
'''
PREFORK_CLIENTS = 3
# The worker MPM with one child: a listener thread that accepts only when
# one of the child's workers is idle, and hands the connection to it; the
# worker serves it (blocking, between poll timeouts) until it closes.
WORKER = '''LoadModule mpm_worker_module {mods}/mod_mpm_worker.so
StartServers 1
ServerLimit 1
ThreadsPerChild 4
MinSpareThreads 1
MaxSpareThreads 4
MaxRequestWorkers 4
ThreadLimit 4
'''
WORKER_CLIENTS = 3


class Apache(Service):
    """httpd with mpm (PREFORK or WORKER) on port; files in directory d
    (a temporary one, removed at the stop, when None)."""

    def __init__(self, port, mpm, d=None):
        self.tmp = d is None
        self.dir = str(d) if d else tempfile.mkdtemp(prefix='ditto-apache-')
        www = os.path.join(self.dir, 'www')
        os.mkdir(www)
        with open(os.path.join(www, 'index.html'), 'w') as f:
            f.write('<html>hello</html>\n' * 8)
        conf = os.path.join(self.dir, 'httpd.conf')
        with open(conf, 'w') as f:
            f.write((mpm + COMMON).format(mods=MODULES, d=self.dir, port=port))
        # www-data reads the document root through the directory
        for p in (self.dir, www):
            os.chmod(p, 0o755)
        # its own session: at its stop the master signals its whole
        # process group, which would otherwise be its caller's
        super().__init__([need('setsid'), APACHE, '-f', conf, '-DFOREGROUND'], port)

    def stop(self):
        try:
            super().stop()
        finally:
            if self.tmp:
                shutil.rmtree(self.dir, ignore_errors=True)
