// SPDX-License-Identifier: MIT
// Back tier: GET /item?i=K reads key item:K from redis and from memcached at
// once (a parallel pair of synchronous calls), then answers ITEM_BYTES.
// It listens only once the keys are seeded, so a connection means ready.
'use strict';

const express = require('express');
const Redis = require('ioredis');
const Memcached = require('memcached');
const { READY_PATH, untraced } = require('./tracing');
const { port, HOST, ITEM_BYTES, REDIS_VALUE_BYTES, MEMCACHED_VALUE_BYTES, ITEMS } = require('./env');

const BACK_PORT = port('BACK_PORT');
const redis = new Redis({ host: HOST, port: port('REDIS_PORT'), maxRetriesPerRequest: 2 });
const memcached = new Memcached(`${HOST}:${port('MEMCACHED_PORT')}`, { retries: 1, timeout: 2000 });
const ITEM = Buffer.alloc(ITEM_BYTES, 'i');

function mcGet(key) {
  return new Promise((resolve, reject) =>
    memcached.get(key, (err, data) => (err ? reject(err) : resolve(data))));
}

function mcSet(key, value) {
  return new Promise((resolve, reject) =>
    memcached.set(key, value, 0, (err) => (err ? reject(err) : resolve())));
}

// Seeding is set-up, not request work: untraced, so every redis or memcached
// span in an export belongs to a request.
async function seed() {
  for (let k = 0; k < ITEMS; k++) {
    await redis.set(`item:${k}`, 'r'.repeat(REDIS_VALUE_BYTES));
    await mcSet(`item:${k}`, 'm'.repeat(MEMCACHED_VALUE_BYTES));
  }
}

const app = express();
app.get(READY_PATH, (req, res) => res.send('ok'));
app.get('/item', async (req, res) => {
  const key = `item:${Number(req.query.i) || 0}`;
  const [r, m] = await Promise.all([redis.get(key), mcGet(key)]);
  if (r === null || m === undefined) throw new Error(`${key} is missing`);
  res.type('application/octet-stream').send(ITEM);
});

untraced(seed).then(
  () => app.listen(BACK_PORT, HOST),
  (err) => {
    process.stderr.write(`back: seeding failed: ${err.message}\n`);
    process.exit(1);
  });
