// SPDX-License-Identifier: MIT
// Audit tier (plain http, no framework): POST /audit reads the body and
// answers 204.
'use strict';

const http = require('http');
const { READY_PATH } = require('./tracing');
const { port, HOST } = require('./env');

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === READY_PATH) {
    res.end('ok');
    return;
  }
  if (req.method !== 'POST' || req.url !== '/audit') {
    res.statusCode = 404;
    res.end();
    return;
  }
  req.on('data', () => {});
  req.on('end', () => {
    res.statusCode = 204;
    res.end();
  });
});
server.listen(port('AUDIT_PORT'), HOST);
