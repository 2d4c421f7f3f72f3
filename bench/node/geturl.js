'use strict';
// geturl's Init answer as a lean Node server: GET /v0/init/<token>, the
// token compared in constant time with BENCH_TOKEN, answered with the
// contract's JSON (the same keys, bases, endpoints and rules the hub's
// Init gives) from a template split once at start, its bases filled in
// per request. Not done: sessions, rotation, the other routes, the
// compatibility alias, logging.
const http = require('node:http');
const { TOKEN, same, send, listen, crypto } = require('./common');

const readTok = crypto.randomBytes(6).toString('base64url');
const mutTok = crypto.randomBytes(6).toString('base64url');
const template = (origin) => JSON.stringify({
  ok: true, protocol: 'geturl/0',
  bases: { r: origin + '/v0/' + readTok, m: origin + '/v0/' + mutTok },
  endpoints: {
    read: ['r', '/r?path=<p>'], find: ['r', '/f?name=<part>'], grep: ['r', '/g?path=<p>&raw=<literal>'],
    outline: ['r', '/o?path=<p>'], stat: ['r', '/t?path=<p>'], project: ['r', '/p'], plugins: ['r', '/k'],
    write: ['m', '/w?path=<p>&wait=1000&raw=<content>'], edit: ['m', '/e?path=<p>&old=<a>&new=<b>&wait=1000'],
    apply_patch: ['m', '/a?wait=1000&raw=<patch>'], stage: ['m', '/s?blob=<id>&i=<n>&count=<N>&raw=<chunk>'],
    result: ['m', '/j?call=<id>'],
  },
  compatibilityEndpoints: '/<tool>', root: '/project', project: 'bench',
  permissions: { read: true, write: true, terminal: false },
  fetch: 'fetch every URL in raw, unconverted mode (no markdown, summary or extraction); without one, stop: transport unavailable',
  rules: [
    'URL = bases[ref]+suffix; replace <…> only; omit unused optional params',
    'raw= goes last: all after it is content. Escapes: ~n newline ~t tab ~h # ~p % ~q + ~s space ~a & ~~ ~ ~uXXXX; + is a space',
    '/r: up to 8 path=, each optionally followed by start=&end=; if truncated, fetch next. /f?name= finds files (raw= by content). /g is literal; regex=1 for regex',
    'errors are HTTP 200 ok:false; fetch repair/next/retry/poll/repeat URLs exactly as returned',
    'cut-off answer: same base+/z?last=1&part=0',
    '/k lists plugins; /k?plugin=<id> gives tool schemas',
    'one hunk in one file: /e; new or whole file: /w (after a complete read); 2+ edits or files: one /a patch; pending: poll /j',
  ],
});
// The origin goes where the template has it; split once.
const MARK = '\u0000ORIGIN\u0000';
const parts = template(MARK).split(JSON.stringify(MARK).slice(1, -1));

const server = http.createServer((req, res) => {
  if (req.method !== 'GET' || !req.url.startsWith('/v0/init/')) return send(res, 404, '{"ok":false}');
  if (!same(req.url.slice('/v0/init/'.length), TOKEN)) return send(res, 404, '{"ok":false}');
  send(res, 200, parts.join('http://' + req.headers.host));
});

listen(server);
