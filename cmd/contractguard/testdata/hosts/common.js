// What the hosts share: the counter the tests read, the echo of what a
// handler received, the upgrade (websocket-style) echo, and the start-up
// line the tests wait for.
'use strict';
const crypto = require('node:crypto');

function counter() {
  const c = { total: 0, routes: {} };
  c.hit = (key) => { c.routes[key] = (c.routes[key] || 0) + 1; };
  return c;
}

// echo is what a handler answers: what it was given, so the tests can
// check that the proxy forwarded it unchanged.
function echo(host, route, req, body, raw) {
  return {
    host,
    route,
    method: req.method,
    url: req.url,
    params: req.params || {},
    body: body === undefined ? null : body,
    rawLength: raw ? raw.length : null,
    rawSha256: raw ? crypto.createHash('sha256').update(raw).digest('hex') : null,
    headers: {
      host: req.headers['host'] || null,
      'x-forwarded-for': req.headers['x-forwarded-for'] || null,
      'x-forwarded-host': req.headers['x-forwarded-host'] || null,
      'x-forwarded-proto': req.headers['x-forwarded-proto'] || null,
      'x-user': req.headers['x-user'] || null,
      'x-http-method-override': req.headers['x-http-method-override'] || null,
      'content-length': req.headers['content-length'] || null,
      'transfer-encoding': req.headers['transfer-encoding'] || null,
      connection: req.headers['connection'] || null,
      'keep-alive': req.headers['keep-alive'] || null,
      'x-hop': req.headers['x-hop'] || null,
    },
  };
}

// onUpgrade answers an Upgrade: websocket request with 101 (a real
// Sec-WebSocket-Accept) and then echoes whatever bytes arrive.
function onUpgrade(c) {
  return (req, socket) => {
    c.total++;
    c.hit('UPGRADE ' + req.url);
    const key = req.headers['sec-websocket-key'] || '';
    const accept = crypto.createHash('sha1').update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ' + accept + '\r\n\r\n');
    socket.on('data', (d) => socket.write(d));
    socket.on('error', () => {});
  };
}

// listening prints the line the tests wait for.
function listening(server) {
  process.stdout.write('LISTENING ' + server.address().port + '\n');
}

// rawBody reads a request's bytes.
function rawBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

module.exports = { counter, echo, onUpgrade, listening, rawBody };
