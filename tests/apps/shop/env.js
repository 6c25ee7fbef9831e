// SPDX-License-Identifier: MIT
// The tiers' shared settings: ports from the environment, fixed sizes.
'use strict';

function port(name) {
  const v = Number(process.env[name]);
  if (!Number.isInteger(v) || v <= 0 || v > 65535) throw new Error(`${name} is not a port: ${process.env[name]}`);
  return v;
}

module.exports = {
  port,
  HOST: '127.0.0.1',
  // Fixed sizes, so that a profile of the graph has known bytes per edge.
  PAGE_BYTES: 1000, // front's answer to GET /page
  ITEM_BYTES: 512, // back's answer to GET /item
  AUDIT_BYTES: 200, // front's POST /audit body
  REDIS_VALUE_BYTES: 100,
  MEMCACHED_VALUE_BYTES: 150,
  ITEMS: 3, // back calls per page, and keys seeded
};
