// The geturl companion's service worker: the only place that holds the
// device secret. It pairs with the hub's loopback control plane, binds chat
// tabs to fresh geturl sessions, and keeps each binding's lease alive with
// heartbeats while the tab that got the prompt is open.
//
// Wire contract: the hub's docs/protocols/geturl.md, "Browser companion".
//
// Secret: 32 bytes from crypto.getRandomValues, base64url, kept in
// chrome.storage.local. It is only ever sent in the Authorization header of
// requests to http://127.0.0.1:<control port>/companion/…; it is never
// returned to the popup, never sent to a tab, never logged.
//
// Staying awake (MV3 service workers are stopped after ~30 s without
// events): the bound tab's content script (inject.js) holds a runtime port
// to this worker and posts a ping on it every few seconds. Since Chrome 110
// every extension event, port messages included, resets the worker's idle
// timer, so the worker lives exactly as long as some bound tab is open. If
// Chrome stops the worker anyway (an update, a crash), the port breaks, the
// content script reconnects, and that connect starts the worker again, which
// reloads its state from storage and heartbeats at once. The same port is
// how the worker learns that the tab went away: when the bound document
// unloads (tab closed, reloaded or navigated), the port disconnects and the
// worker disconnects the binding on the hub, so its authority ends at once
// rather than at the end of the lease. When the whole browser closes,
// nothing is sent and the lease runs out on the hub (seconds).
//
// Messages: only this extension's own pages (the popup) may send requests
// (checked by the sender's URL); content scripts only talk over the port,
// and only pings for the binding of their own tab are accepted.
"use strict";

const DEFAULT_PORT = 47433;
const PAIR_POLL_MS = 1500;
const MAX_CONVERSATION = 512;
const PING_PORT = "geturl-binding";

// state is the persisted state, loaded once per worker start.
// { port, name, device, secret, request, code, pairState, pairExpires,
//   seq, bindings: [{binding, session, generation, project, conversation,
//   tabId, lease_ms, heartbeat_ms, created}] }
let state = null;
let loading = null;
const ports = new Map(); // binding id → the bound tab's port
let beatTimer = 0;
let beating = false;
let lastBeat = 0;
let pairTimer = 0;

function load() {
  if (state) return Promise.resolve(state);
  if (!loading) {
    loading = chrome.storage.local.get("companion").then((v) => {
      state = Object.assign({ port: DEFAULT_PORT, bindings: [], seq: 0 }, v.companion || {});
      if (!Array.isArray(state.bindings)) state.bindings = [];
      return state;
    });
  }
  return loading;
}

function save() {
  return chrome.storage.local.set({ companion: state });
}

// view is the state as the popup may see it: never the secret.
function view() {
  return {
    port: state.port,
    name: state.name || "",
    device: state.device || "",
    paired: state.pairState === "approved",
    pairState: state.pairState || "",
    code: state.pairState === "pending" ? state.code : "",
    bindings: state.bindings.map((b) => ({
      binding: b.binding, project: b.project, conversation: b.conversation, tabId: b.tabId,
      live: ports.has(b.binding), created: b.created,
    })),
  };
}

function newSecret() {
  const b = new Uint8Array(32);
  crypto.getRandomValues(b);
  let s = "";
  for (const x of b) s += String.fromCharCode(x);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

class HubError extends Error {
  constructor(status, code, message) {
    super(message || code || "the hub answered " + status);
    this.status = status;
    this.code = code || "";
  }
}

// call is one request to the control plane's /companion/ API. auth adds
// the device credential.
async function call(method, path, body, auth) {
  const port = Number(state.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new HubError(0, "bad_port", "the control port is not a port number");
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (auth) headers["Authorization"] = "Bearer " + state.device + "." + state.secret;
  let resp;
  try {
    resp = await fetch("http://127.0.0.1:" + port + path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "omit", cache: "no-store", redirect: "error", referrerPolicy: "no-referrer",
    });
  } catch (e) {
    throw new HubError(0, "unreachable", "the hub's control plane is not reachable on 127.0.0.1:" + port);
  }
  let ans = {};
  try { ans = await resp.json(); } catch (e) { ans = {}; }
  if (!resp.ok) throw new HubError(resp.status, ans.error, ans.message || ans.error);
  return ans;
}

// authed is call with the device credential. A 401 means the operator
// revoked this device (or the hub forgot it): the credential is dropped and
// the popup offers pairing again.
async function authed(method, path, body) {
  try {
    return await call(method, path, body, true);
  } catch (e) {
    if (e.status === 401 && state.pairState === "approved") {
      forgetLocal("revoked");
      await save();
    }
    throw e;
  }
}

function validName(name) {
  return typeof name === "string" && name.length >= 1 && name.length <= 64 && /^[\x20-\x7e]+$/.test(name);
}

async function pair(port, name) {
  if (state.pairState === "approved") throw new HubError(0, "paired", "already paired; forget the device first");
  if (!validName(name)) throw new HubError(0, "bad_name", "the device name must be 1 to 64 printable ASCII characters");
  const p = Number(port);
  if (!Number.isInteger(p) || p < 1 || p > 65535) throw new HubError(0, "bad_port", "the control port is not a port number");
  state.port = p;
  state.name = name;
  const secret = newSecret();
  const ans = await call("POST", "/companion/pair", { name, secret });
  Object.assign(state, {
    secret, device: ans.device, request: ans.request, code: ans.code, pairState: "pending",
    pairExpires: Date.now() + (ans.expires_in_ms || 300000),
  });
  await save();
  pollPair();
  return view();
}

// pollPair asks the hub for the pending request's state until the operator
// approves or refuses it, or it expires.
function pollPair() {
  clearTimeout(pairTimer);
  if (state.pairState !== "pending") return;
  pairTimer = setTimeout(async () => {
    if (state.pairState !== "pending") return;
    let next = "pending";
    if (Date.now() > state.pairExpires) {
      next = "expired";
    } else {
      try {
        next = (await call("GET", "/companion/pair/" + encodeURIComponent(state.request), undefined, true)).state;
      } catch (e) {
        if (e.status === 401 || e.status === 404) next = "expired";
      }
    }
    if (next === "approved") {
      state.pairState = "approved";
      delete state.request;
      delete state.code;
    } else if (next === "refused" || next === "expired") {
      forgetLocal(next);
    }
    await save();
    pollPair();
  }, PAIR_POLL_MS);
}

// forgetLocal drops the credential and every binding (their tabs stop
// pinging when their ports close).
function forgetLocal(pairState) {
  for (const [, p] of ports) release(p);
  ports.clear();
  const port = state.port;
  const name = state.name;
  const seq = state.seq;
  state = { port, name, seq, bindings: [], pairState: pairState || "" };
}

async function forget() {
  for (const b of state.bindings.slice()) {
    try { await authed("POST", "/companion/disconnect", { binding: b.binding }); } catch (e) { /* ended anyway below */ }
  }
  forgetLocal("");
  await save();
  return view();
}

function requirePaired() {
  if (state.pairState !== "approved") throw new HubError(0, "not_paired", "pair this browser with the hub first");
}

async function projects() {
  requirePaired();
  const ans = await authed("GET", "/companion/projects");
  return ans.projects || [];
}

// conversationOf is what the hub is told about the chat: the tab's origin
// and path (no query, no fragment), at most 512 characters.
function conversationOf(url) {
  const u = new URL(url);
  if (u.protocol !== "https:" && u.protocol !== "http:") throw new HubError(0, "bad_tab", "the tab is not a web page");
  // Both parts are ASCII (punycode host, percent-encoded path); a cut must
  // not leave half an escape.
  return (u.origin + u.pathname).slice(0, MAX_CONVERSATION).replace(/%[0-9A-Fa-f]?$/, "");
}

async function bind(tabId, project) {
  requirePaired();
  if (!Number.isInteger(tabId)) throw new HubError(0, "bad_tab", "no tab to bind");
  if (typeof project !== "string" || project === "") throw new HubError(0, "bad_project", "choose a project");
  const tab = await chrome.tabs.get(tabId);
  if (!tab.url) throw new HubError(0, "no_access", "no access to this tab: open the companion from the chat tab's toolbar button");
  const conversation = conversationOf(tab.url);
  // The content script first: if the page cannot take it, no session is made.
  await chrome.scripting.executeScript({ target: { tabId }, files: ["inject.js"] });
  const ans = await authed("POST", "/companion/bind", { project, conversation });
  // A binding of this tab made before is over: the hub ended it if the
  // conversation is the same (reconnect); end it here in any case.
  for (const old of state.bindings.filter((b) => b.tabId === tabId)) await end(old.binding, true);
  const b = {
    binding: ans.binding, session: ans.session, generation: ans.generation, project, conversation, tabId,
    lease_ms: ans.lease_ms, heartbeat_ms: ans.heartbeat_ms, created: new Date().toISOString(),
  };
  state.bindings.push(b);
  await save();
  let put;
  try {
    put = await chrome.tabs.sendMessage(tabId, { op: "insert", prompt: ans.prompt, binding: b.binding, ping_ms: pingInterval(b) });
  } catch (e) {
    put = { ok: false, error: String(e && e.message || e) };
  }
  if (!put || !put.ok) {
    await end(b.binding, true);
    throw new HubError(0, "no_input", (put && put.error) || "the page has no input to put the prompt in");
  }
  scheduleBeat(0);
  return { view: view(), into: put.into };
}

// release tells a bound tab's content script that its binding is over, so
// it stops pinging instead of reconnecting.
function release(port) {
  try { port.postMessage({ op: "end" }); } catch (e) { /* already gone */ }
  port.disconnect();
}

// end drops a binding here and, if tell, disconnects it on the hub first,
// so the popup shows it gone only once its authority has ended (or the hub
// could not be told, and the lease ends it).
async function end(id, tell) {
  const p = ports.get(id);
  ports.delete(id);
  if (p) release(p);
  const had = state.bindings.some((b) => b.binding === id);
  if (had && tell && state.pairState === "approved") {
    try { await authed("POST", "/companion/disconnect", { binding: id }); } catch (e) { /* the lease ends it */ }
  }
  state.bindings = state.bindings.filter((b) => b.binding !== id);
  await save();
}

function pingInterval(b) {
  return Math.max(1000, Math.min(20000, b.heartbeat_ms || 5000));
}

function beatInterval() {
  let ms = 0;
  for (const b of state.bindings) if (b.heartbeat_ms > 0 && (ms === 0 || b.heartbeat_ms < ms)) ms = b.heartbeat_ms;
  return ms || 5000;
}

function scheduleBeat(ms) {
  clearTimeout(beatTimer);
  if (state.pairState !== "approved" || state.bindings.length === 0) return;
  beatTimer = setTimeout(beat, ms);
}

// beat sends one heartbeat for every binding; the seq is stored before the
// request leaves, so it grows across worker restarts.
async function beat() {
  if (beating) return;
  if (state.pairState !== "approved" || state.bindings.length === 0) return;
  beating = true;
  try {
    state.seq = (Number(state.seq) || 0) + 1;
    await save();
    lastBeat = Date.now();
    const sent = state.bindings.map((b) => ({ binding: b.binding, generation: b.generation }));
    const ans = await authed("POST", "/companion/heartbeat", { seq: state.seq, bindings: sent });
    for (const r of ans.bindings || []) if (r.state === "ended") await end(r.binding, false);
  } catch (e) {
    // Unreachable or refused: the next beat tries again (a 409 only means
    // a larger seq is needed, and the next one is larger); a revoked device
    // was dropped by authed.
  } finally {
    beating = false;
    scheduleBeat(beatInterval());
  }
}

chrome.runtime.onConnect.addListener((port) => {
  if (port.name !== PING_PORT || !port.sender || !port.sender.tab) {
    port.disconnect();
    return;
  }
  const tabId = port.sender.tab.id;
  let id = "";
  port.onMessage.addListener(async (msg) => {
    await load();
    const b = state.bindings.find((x) => msg && x.binding === msg.binding && x.tabId === tabId);
    if (!b) {
      release(port);
      return;
    }
    if (id === "") {
      id = b.binding;
      const old = ports.get(id);
      if (old && old !== port) old.disconnect();
      ports.set(id, port);
    }
    port.postMessage({ op: "ok" });
    if (Date.now() - lastBeat >= beatInterval()) beat();
    else if (!beating) scheduleBeat(Math.max(0, beatInterval() - (Date.now() - lastBeat)));
  });
  port.onDisconnect.addListener(async () => {
    if (id === "" || ports.get(id) !== port) return;
    ports.delete(id);
    await load();
    await end(id, true);
  });
});

// A browser start: no binding outlived the browser (tab ids start over).
chrome.runtime.onStartup.addListener(async () => {
  await load();
  for (const b of state.bindings.slice()) await end(b.binding, true);
});

chrome.tabs.onRemoved.addListener(async (tabId) => {
  await load();
  for (const b of state.bindings.filter((x) => x.tabId === tabId)) await end(b.binding, true);
});

// fromOwnPage tells the popup (or another page of this extension) from a
// content script or anything else.
function fromOwnPage(sender) {
  return sender && sender.id === chrome.runtime.id && typeof sender.url === "string" &&
    sender.url.startsWith(chrome.runtime.getURL(""));
}

async function handle(msg) {
  await load();
  switch (msg && msg.op) {
    case "state": return view();
    case "pair": return pair(msg.port, msg.name);
    case "projects": return { projects: await projects() };
    case "bind": return bind(msg.tabId, msg.project);
    case "disconnect": await end(msg.binding, true); return view();
    case "forget": return forget();
    default: throw new HubError(0, "bad_request", "unknown request");
  }
}

chrome.runtime.onMessage.addListener((msg, sender, reply) => {
  if (!fromOwnPage(sender)) return false;
  handle(msg).then((v) => reply({ ok: true, value: v }),
    (e) => reply({ ok: false, error: e.code || "failed", message: String(e.message || e) }));
  return true;
});

// A worker (re)start: resume what was going on, for the tabs still open
// (a browser restart gives tabs new ids: every old binding is dropped).
load().then(async () => {
  for (const b of state.bindings.slice()) {
    try { await chrome.tabs.get(b.tabId); } catch (e) { await end(b.binding, true); }
  }
  pollPair();
  scheduleBeat(0);
});
