// A Fastify 5 application with its JSON body parsing. Its router's options
// come from FASTIFY_ROUTER (JSON: ignoreTrailingSlash, caseSensitive,
// ignoreDuplicateSlashes, useSemicolonDelimiter), so the tests can try the
// settings applications use. It listens on PORT (0: any); GET /_count.
'use strict';
const fastify = require('fastify');
const { counter, echo, onUpgrade, listening } = require('./common');

const c = counter();
const app = fastify({ logger: false, routerOptions: JSON.parse(process.env.FASTIFY_ROUTER || '{}') });

app.get('/_count', async () => c);
app.addHook('onRequest', async (req) => { if (!req.url.startsWith('/_count')) c.total++; });
app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (req, body, done) => done(null, body));

app.post('/api/users', async (req, reply) => {
  c.hit('POST /api/users');
  reply.code(201).header('X-Host', 'fastify').header('Set-Cookie', 'session=abc; Path=/; HttpOnly')
    .header('Cache-Control', 'no-store');
  return echo('fastify', 'POST /api/users', req.raw, req.body);
});
app.put('/api/users/:id', async (req) => {
  c.hit('PUT /api/users/:id');
  return { ...echo('fastify', 'PUT /api/users/:id', req.raw, req.body), params: req.params };
});
app.get('/api/users/:id', async (req, reply) => {
  c.hit('GET /api/users/:id');
  reply.header('X-Host', 'fastify');
  return { ...echo('fastify', 'GET /api/users/:id', req.raw), params: req.params };
});
app.post('/api/transfers', async (req) => {
  c.hit('POST /api/transfers');
  return echo('fastify', 'POST /api/transfers', req.raw, req.body);
});
app.post('/orders', async (req, reply) => {
  c.hit('POST /orders');
  reply.code(201);
  return { ok: true, items: req.body.items.length };
});
app.get('/slow', async (req) => {
  c.hit('GET /slow');
  await new Promise((r) => setTimeout(r, Number(req.query.ms)));
  return { slept: Number(req.query.ms) };
});

app.listen({ port: Number(process.env.PORT || 0), host: '127.0.0.1' }).then(() => {
  app.server.keepAliveTimeout = 65000;
  app.server.on('upgrade', onUpgrade(c));
  listening(app.server);
}).catch((e) => { console.error(e); process.exit(1); });
