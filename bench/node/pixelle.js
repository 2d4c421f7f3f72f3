'use strict';
// The Pixelle relay (pixelle-relay/0.2) as a lean Node server: sessions
// (POST /api/sessions from the exact website Origin), pairing codes
// (pair.create, POST /api/pair), the /relay hello of either role with
// constant-time token checks, and command routing: every agent command
// gets a fresh relay id, goes to the session's browser, and its result
// goes back to that agent under the agent's own id, with the spec's 12 s
// OUTCOME_UNKNOWN timer. Not done: rate limits, BUSY bounds, revoke,
// the browser-offline and disconnect answers' finer points, workspaces,
// logging. A floor for Node, not a relay.
const http = require('node:http');
const { WebSocketServer } = require('ws');
const { ORIGIN, same, readBody, send, listen, crypto } = require('./common');

const sessions = new Map(); // id -> {browserToken, agentToken, browser, code}
const codes = new Map(); // code -> session
const pending = new Map(); // relay id -> {agent, id, timer}
let nextId = 0;
const rand = (n) => crypto.randomBytes(n).toString('base64url');

const server = http.createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/api/sessions') {
    if (req.headers.origin !== ORIGIN) return send(res, 403, '{"error":"ORIGIN"}');
    const s = { id: rand(16), browserToken: rand(32), agentToken: null, browser: null, agents: new Set() };
    sessions.set(s.id, s);
    return send(res, 201, JSON.stringify({ id: s.id, browserToken: s.browserToken }));
  }
  if (req.method === 'POST' && req.url === '/api/pair') {
    return readBody(req, 4096, (body) => {
      let code;
      try { code = String(JSON.parse(body).code).toUpperCase(); } catch { return send(res, 400, '{"error":"INVALID_OR_EXPIRED_CODE"}'); }
      const s = codes.get(code);
      if (!s || s.codeExpires < Date.now() || !s.browser) return send(res, 400, '{"error":"INVALID_OR_EXPIRED_CODE"}');
      codes.delete(code);
      s.agentToken = rand(32);
      for (const a of s.agents) a.close(1008);
      s.browser.send('{"type":"paired"}');
      send(res, 200, JSON.stringify({ sessionId: s.id, token: s.agentToken, url: 'relay' }));
    });
  }
  send(res, 404, '{"error":"NOT_FOUND"}');
});

const wss = new WebSocketServer({ noServer: true, maxPayload: 4 << 20 });
server.on('upgrade', (req, socket, head) => {
  const origin = req.headers.origin;
  if (req.url !== '/relay' || (origin !== undefined && origin !== ORIGIN)) { socket.destroy(); return; }
  wss.handleUpgrade(req, socket, head, (ws) => {
    let s = null, role = null;
    ws.on('message', (data) => {
      let m;
      try { m = JSON.parse(data); } catch { ws.close(1008); return; }
      if (!role) {
        const cand = sessions.get(m.sessionId);
        if (m.type !== 'hello' || !cand) { ws.close(1008); return; }
        if (m.role === 'browser' && origin === ORIGIN && same(m.token, cand.browserToken) && !cand.browser) {
          cand.browser = ws;
        } else if (m.role === 'agent' && cand.agentToken && same(m.token, cand.agentToken)) {
          cand.agents.add(ws);
        } else { ws.close(1008); return; }
        s = cand; role = m.role;
        ws.send(JSON.stringify({ type: 'ready', role, paired: !!s.agentToken }));
        return;
      }
      if (role === 'browser') {
        if (m.type === 'pair.create') {
          if (s.code) codes.delete(s.code);
          s.code = crypto.randomBytes(6).toString('hex').toUpperCase();
          s.codeExpires = Date.now() + 300000;
          codes.set(s.code, s);
          ws.send(JSON.stringify({ type: 'pair.code', code: s.code, expires: s.codeExpires }));
        } else if (m.type === 'result') {
          const p = pending.get(m.id);
          if (!p || p.session !== s) return;
          pending.delete(m.id);
          clearTimeout(p.timer);
          m.id = p.id;
          p.agent.send(JSON.stringify(m));
        }
        return;
      }
      if (m.type !== 'command' || typeof m.id !== 'string' || m.id.length > 100 || typeof m.command !== 'object') { ws.close(1008); return; }
      if (!s.browser) { ws.send(JSON.stringify({ type: 'result', id: m.id, error: { code: 'BROWSER_OFFLINE' } })); return; }
      const rid = 'r' + (++nextId);
      const timer = setTimeout(() => {
        pending.delete(rid);
        ws.send(JSON.stringify({ type: 'result', id: m.id, error: { code: 'OUTCOME_UNKNOWN' } }));
      }, 12000);
      pending.set(rid, { agent: ws, id: m.id, session: s, timer });
      s.browser.send(JSON.stringify({ type: 'command', id: rid, command: m.command, actor: 'agent' }));
    });
    ws.on('close', () => {
      if (!s) return;
      if (role === 'browser' && s.browser === ws) s.browser = null;
      if (role === 'agent') s.agents.delete(ws);
    });
  });
});

listen(server);
