'use strict';
// The aiui channel backend's prompt ingest as a lean Node server: /ws
// takes binary frames (4-byte big-endian header length, JSON header,
// payload), a hello naming the text-concat format, then data frames whose
// {"text"} payloads are joined per threadId; fin routes the prompt into
// a record of the last 500; every frame is acked {"ok":true}. Not done:
// Origin lists, other formats and kinds, chunked frames, intents, the
// faces that read the record, the debounce, limits beyond frame size.
const http = require('node:http');
const { WebSocketServer } = require('ws');
const { listen } = require('./common');

const record = [];
const OK = '{"ok":true}';

const server = http.createServer((req, res) => { res.writeHead(404); res.end(); });
const wss = new WebSocketServer({ server, path: '/ws', maxPayload: 32 << 20 });
wss.on('connection', (ws) => {
  let hello = false;
  const threads = new Map();
  ws.on('message', (buf, isBinary) => {
    if (!isBinary || buf.length < 4) { ws.close(1008); return; }
    const n = buf.readUInt32BE(0);
    let hdr;
    try { hdr = JSON.parse(buf.subarray(4, 4 + n)); } catch { ws.close(1008); return; }
    if (!hello) {
      if (hdr.kind !== 'hello' || hdr.format !== 'text-concat') { ws.send('{"ok":false}'); return; }
      hello = true;
      ws.send(OK);
      return;
    }
    if (hdr.kind !== 'data' || typeof hdr.threadId !== 'string') { ws.send('{"ok":false}'); return; }
    let text;
    try { text = JSON.parse(buf.subarray(4 + n)).text; } catch { ws.send('{"ok":false}'); return; }
    const parts = threads.get(hdr.threadId) || [];
    parts.push(text);
    if (hdr.fin) {
      threads.delete(hdr.threadId);
      record.push({ threadId: hdr.threadId, text: parts.join(''), at: Date.now() });
      if (record.length > 500) record.shift();
    } else {
      threads.set(hdr.threadId, parts);
    }
    ws.send(OK);
  });
});

listen(server);
