'use strict';
// The Stitch Slop bridge's hot path, as a lean Node server: one page
// WebSocket on / (exact Origin, a one-time token or nothing), and the
// control plane's POST /call (no Origin, x-stitchslop-key compared in
// constant time, body ≤ 1 MiB) relayed to the page under a fresh id and
// answered with the page's reply for it, or 504 after 60 s.
// Pairing secrets are minted on the token handshake and kept in memory.
// Not done: pairing.json, session files, ports 8787-8790,
// the other control routes, agents, MCP, limits on frames and pending
// calls beyond ws's defaults, logging. A floor for Node, not a bridge.
const http = require('node:http');
const { WebSocketServer } = require('ws');
const { KEY, TOKEN, ORIGIN, same, readBody, send, listen, crypto } = require('./common');

let page = null;
let nextId = 0;
const waiting = new Map();
let tokenSpent = false;
const secrets = new Set(); // pairing secrets minted (kept in memory only)

const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/call') return send(res, 404, '{"error":"not_found"}');
  if (req.headers.origin !== undefined) return send(res, 403, '{"error":"origin"}');
  if (!same(req.headers['x-stitchslop-key'], KEY)) return send(res, 401, '{"error":"key"}');
  readBody(req, 1 << 20, (body) => {
    let call;
    try { call = JSON.parse(body); } catch { return send(res, 400, '{"error":"json"}'); }
    if (typeof call.command !== 'string') return send(res, 400, '{"error":"command"}');
    if (!page) return send(res, 503, '{"ok":false,"error":"no_page"}');
    const id = ++nextId;
    const timer = setTimeout(() => { waiting.delete(id); send(res, 504, '{"ok":false,"error":"timeout"}'); }, 60000);
    waiting.set(id, { res, timer });
    page.send(JSON.stringify({ id, command: call.command, args: call.args ?? {} }));
  });
});

const wss = new WebSocketServer({ noServer: true, maxPayload: 16 << 20 });
server.on('upgrade', (req, socket, head) => {
  if (req.url !== '/' || req.headers.origin !== ORIGIN) { socket.destroy(); return; }
  wss.handleUpgrade(req, socket, head, (ws) => {
    let authed = false;
    ws.on('message', (data) => {
      let m;
      try { m = JSON.parse(data); } catch { ws.close(1008); return; }
      if (!authed) {
        const hello = { hello: 'stitchslop-connector', protocol: 1, port: server.address().port };
        if (typeof m.secret === 'string' && [...secrets].some((s) => same(m.secret, s))) {
          // paired already
        } else if (!tokenSpent && same(m.token, TOKEN)) {
          tokenSpent = true;
          hello.pairingSecret = crypto.randomBytes(32).toString('base64url');
          secrets.add(hello.pairingSecret);
        } else { ws.close(1008); return; }
        authed = true;
        page = ws;
        ws.send(JSON.stringify(hello));
        return;
      }
      if (m.id === undefined) return; // tools, events: not on this path
      const w = waiting.get(m.id);
      if (!w) return;
      waiting.delete(m.id);
      clearTimeout(w.timer);
      send(w.res, 200, data.toString());
    });
    ws.on('close', () => { if (page === ws) page = null; });
  });
});

listen(server);
