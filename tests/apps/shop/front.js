// SPDX-License-Identifier: MIT
// Front tier: GET /page calls back three times one after the other (a
// sequential fan-out of synchronous calls), then posts to audit without
// waiting for it (an asynchronous call), and answers PAGE_BYTES.
'use strict';

const http = require('http');
const express = require('express');
const { READY_PATH } = require('./tracing');
const { port, HOST, PAGE_BYTES, AUDIT_BYTES, ITEMS } = require('./env');

const FRONT_PORT = port('FRONT_PORT');
const BACK_PORT = port('BACK_PORT');
const AUDIT_PORT = port('AUDIT_PORT');
const PAGE = Buffer.alloc(PAGE_BYTES, 'p');
const AUDIT_BODY = Buffer.alloc(AUDIT_BYTES, 'a');
const CALL_TIMEOUT_MS = 5000;

// Keep-alive connections to both tiers, as a service with a client pool has.
const agent = new http.Agent({ keepAlive: true });

function getBack(path) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: HOST, port: BACK_PORT, path, agent }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`back ${path}: status ${res.statusCode}`));
        else resolve(Buffer.concat(chunks));
      });
      res.on('error', reject);
    });
    req.setTimeout(CALL_TIMEOUT_MS, () => req.destroy(new Error(`back ${path}: timeout`)));
    req.on('error', reject);
  });
}

// Fire and forget: nothing waits for the answer, and a failure is only
// logged (an unhandled 'error' event would end the process).
function postAudit() {
  const req = http.request({
    host: HOST, port: AUDIT_PORT, path: '/audit', method: 'POST', agent,
    headers: { 'content-type': 'application/octet-stream', 'content-length': AUDIT_BODY.length },
  }, (res) => res.resume());
  req.setTimeout(CALL_TIMEOUT_MS, () => req.destroy(new Error('audit: timeout')));
  req.on('error', (err) => process.stderr.write(`front: audit call failed: ${err.message}\n`));
  req.end(AUDIT_BODY);
}

const app = express();
app.get(READY_PATH, (req, res) => res.send('ok'));
// Express 5 turns a rejected handler into a 500 answer.
app.get('/page', async (req, res) => {
  for (let k = 0; k < ITEMS; k++) await getBack(`/item?i=${k}`);
  postAudit();
  res.type('application/octet-stream').send(PAGE);
});

app.listen(FRONT_PORT, HOST);
