// An Express 5 application as its authors would write one: express.json(),
// the default router (case-insensitive, non-strict about trailing slashes),
// and a method-override middleware like the method-override package's. The
// tests start it on PORT (0: any) and read GET /_count.
'use strict';
const express = require('express');
const { counter, echo, onUpgrade, listening, rawBody } = require('./common');

const c = counter();
const app = express();
app.disable('x-powered-by');

app.get('/_count', (req, res) => res.json(c));
app.use((req, res, next) => { c.total++; next(); });

// As the method-override package does with its default getter.
app.use((req, res, next) => {
  const o = req.headers['x-http-method-override'];
  if (req.method === 'POST' && o) req.method = String(o).toUpperCase();
  next();
});

// Raw bytes, before express.json() reads them.
app.post('/api/raw', async (req, res) => {
  const raw = await rawBody(req);
  c.hit('POST /api/raw');
  res.status(200).json(echo('express', 'POST /api/raw', req, undefined, raw));
});

// Not guarded: a streamed upload, counted in bytes.
app.post('/upload', async (req, res) => {
  const raw = await rawBody(req);
  c.hit('POST /upload');
  res.json({ bytes: raw.length });
});

app.use(express.json());

app.post('/api/users', (req, res) => {
  c.hit('POST /api/users');
  res.status(201).set('X-Host', 'express').cookie('session', 'abc', { httpOnly: true })
    .set('Cache-Control', 'no-store').json(echo('express', 'POST /api/users', req, req.body));
});
app.put('/api/users/:id', (req, res) => {
  c.hit('PUT /api/users/:id');
  res.json(echo('express', 'PUT /api/users/:id', req, req.body));
});
app.get('/api/users/:id', (req, res) => {
  c.hit('GET /api/users/:id');
  res.set('X-Host', 'express').json(echo('express', 'GET /api/users/:id', req));
});
app.post('/api/transfers', (req, res) => {
  c.hit('POST /api/transfers');
  res.json(echo('express', 'POST /api/transfers', req, req.body));
});
app.post('/orders', (req, res) => {
  c.hit('POST /orders');
  res.status(201).json({ ok: true, items: req.body.items.length });
});

app.get('/events', (req, res) => {
  c.hit('GET /events');
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  let n = 0;
  const t = setInterval(() => {
    res.write('data: ' + n + '\n\n');
    if (++n === 3) { clearInterval(t); res.end(); }
  }, 150);
  req.on('close', () => clearInterval(t));
});
app.get('/slow', (req, res) => {
  c.hit('GET /slow');
  setTimeout(() => res.json({ slept: Number(req.query.ms) }), Number(req.query.ms));
});

const server = app.listen(Number(process.env.PORT || 0), '127.0.0.1', () => listening(server));
server.keepAliveTimeout = 65000;
server.on('upgrade', onUpgrade(c));
