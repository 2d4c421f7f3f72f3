'use strict';
// Shared by the reference servers: secrets from the environment (the
// harness passes them as it would to any server), constant-time compares,
// a bounded body reader, and the {"port":N} line the harness waits for.
const crypto = require('node:crypto');

const KEY = process.env.BENCH_KEY || '';
const TOKEN = process.env.BENCH_TOKEN || '';
const ORIGIN = process.env.BENCH_ORIGIN || '';

function same(a, b) {
  if (typeof a !== 'string' || typeof b !== 'string') return false;
  const x = Buffer.from(a), y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

function readBody(req, limit, cb) {
  const chunks = [];
  let n = 0;
  req.on('data', (c) => {
    n += c.length;
    if (n > limit) { req.destroy(); return; }
    chunks.push(c);
  });
  req.on('end', () => cb(Buffer.concat(chunks)));
}

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function listen(server) {
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(JSON.stringify({ port: server.address().port }) + '\n');
  });
  process.on('SIGINT', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0));
}

module.exports = { KEY, TOKEN, ORIGIN, same, readBody, send, listen, crypto };
