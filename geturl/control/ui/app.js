// The geturl control page. Plain JS, no build step. Everything shown is
// built with textContent, never innerHTML: session labels and paths are
// data, not markup.
//
// The login: `hub geturl open` prints /#login=<one-time token>. The token
// is in the fragment, which the browser sends to no server; this script
// redeems it (POST /ui/api/login) for a session secret, keeps that only in
// this tab's sessionStorage (one origin: scheme, host and port, so a page
// on another port cannot read it), and sends it as the X-Geturl-Session
// header on every API call. No cookie carries anything.
"use strict";

const SESSION_KEY = "geturl.session";
const SESSION_HEADER = "X-Geturl-Session";
let session = null;
let poller = null;
let wired = false;

const $ = (id) => document.getElementById(id);

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") e.className = v;
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e[k] = v;
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function say(text, bad) {
  const s = $("status");
  s.textContent = text;
  s.className = bad ? "bad" : "";
}

// send sends a request of the page's API and answers its JSON; no
// cookies go along (credentials: "omit").
async function send(method, path, body, headers) {
  const opts = { method, credentials: "omit", cache: "no-store", headers: Object.assign({}, headers) };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const resp = await fetch(path, opts);
  let data = {};
  try { data = await resp.json(); } catch (e) { data = { ok: false, message: "HTTP " + resp.status }; }
  return [resp.status, data];
}

async function api(method, path, body) {
  if (!session) throw new Error("not logged in");
  let status, data;
  try {
    [status, data] = await send(method, path, body, { [SESSION_HEADER]: session });
  } catch (e) {
    // Unreachable means this run of the control plane ended, and its
    // sessions with it: a new run never knows this one.
    loggedOut("The control plane is not reachable; when it runs again, log in with a new `hub geturl open`.");
    throw e;
  }
  if (status === 401) {
    loggedOut(data.message || "This tab's login has ended.");
    throw new Error(data.error || "login_required");
  }
  if (!data.ok) {
    say(data.message || data.error || ("HTTP " + status), true);
    throw new Error(data.message || data.error);
  }
  return data;
}

async function copy(text, what) {
  try {
    await navigator.clipboard.writeText(text);
    say(what + " copied");
  } catch (e) {
    // Clipboard access can be refused (no user gesture, permissions): fall
    // back to selecting the text for a manual copy.
    const ta = el("textarea", { value: text, readOnly: true });
    document.body.append(ta);
    ta.select();
    document.execCommand("copy");
    ta.remove();
    say(what + " copied");
  }
  document.body.dataset.copied = text;
}

const yes = (b) => (b ? "yes" : "no");

function renderHub(list) {
  const sec = $("hub-section");
  if (!list) { sec.hidden = true; return; }
  sec.hidden = false;
  const tb = $("hub-table").tBodies[0];
  tb.replaceChildren(...list.map((a) => el("tr", {},
    el("td", {}, a.name), el("td", {}, a.state), el("td", {}, (a.ports || []).join(", ") || "-"),
    el("td", {}, yes(a.pageAttached)), el("td", {}, String(a.agentSessions)), el("td", {}, String(a.restarts)),
    el("td", { class: "muted" }, [a.sessions && a.sessions + " sessions enabled", a.note, a.lastError, a.fix && "fix: " + a.fix].filter(Boolean).join(" ")))));
}

// What each project permission lets its sessions do. bridges needs write:
// the server refuses it without (bridges_need_write), and the page shows
// that refusal as it shows any other.
const PERMISSIONS = {
  write: "file writes",
  terminal: "terminal commands",
  bridges: "the hub's bridges (pages' tools) as /k plugins; needs write",
};

function renderProjects(projects) {
  const tb = $("projects").tBodies[0];
  tb.replaceChildren(...projects.map((p) => {
    const toggle = (field) => el("input", {
      type: "checkbox", checked: p[field], title: PERMISSIONS[field], dataset: { perm: field },
      onchange: async (ev) => {
        try {
          await api("POST", "/ui/api/projects/" + encodeURIComponent(p.name), { [field]: ev.target.checked });
          const also = field === "write" && !ev.target.checked && p.bridges ? ", bridges off with it" : "";
          say(p.name + ": " + field + " " + (ev.target.checked ? "on" : "off") + also + " (its sessions got new URLs)");
        } finally { refresh(); }
      },
    });
    return el("tr", { dataset: { project: p.name } },
      el("td", {}, p.name), el("td", {}, el("code", {}, p.root)),
      el("td", {}, toggle("write")), el("td", {}, toggle("terminal")), el("td", {}, toggle("bridges")), el("td", {}, String(p.sessions)),
      el("td", {}, el("button", { type: "button", class: "danger", onclick: async () => {
        await api("POST", "/ui/api/projects/" + encodeURIComponent(p.name) + "/remove");
        say("project " + p.name + " removed");
        refresh();
      } }, "Remove")));
  }));
  const sel = $("session-project");
  const was = sel.value;
  sel.replaceChildren(...projects.map((p) => el("option", { value: p.name }, p.name)));
  if (projects.some((p) => p.name === was)) sel.value = was;
}

function renderSessions(sessions) {
  const box = $("sessions");
  if (!sessions.length) {
    box.replaceChildren(el("p", { class: "muted" }, "No sessions yet."));
    return;
  }
  box.replaceChildren(...sessions.map((s) => {
    const op = (name, label, cls) => el("button", { type: "button", class: cls || "", dataset: { op: name },
      onclick: async () => {
        await api("POST", "/ui/api/sessions/" + encodeURIComponent(s.id) + "/" + name);
        say("session " + s.id + ": " + name);
        refresh();
      } }, label);
    const state = s.live ? el("span", { class: "good" }, "live") : s.enabled ? el("span", { class: "bad" }, "down: " + s.note) : el("span", { class: "muted" }, "stopped");
    return el("div", { class: "session", dataset: { session: s.id } },
      el("h3", {}, s.id + " · " + s.project + (s.label ? " · " + s.label : "") + " · ", state),
      s.initUrl ? el("div", {}, "Init URL: ", el("span", { class: "url init-url" }, s.initUrl)) : null,
      el("div", { class: "muted perms" }, ["write", "terminal", "bridges"].map((f) => f + ": " + yes(s[f])).join(" · ")),
      el("div", { class: "muted" }, "tools: " + (s.tools || []).join(", ")),
      el("div", { class: "actions" },
        s.initUrl ? el("button", { type: "button", class: "copy-url", onclick: () => copy(s.initUrl, "Init URL") }, "Copy Init URL") : null,
        s.prompt ? el("button", { type: "button", onclick: () => copy(s.prompt, "Init prompt") }, "Copy Init prompt") : null,
        s.enabled ? op("rotate", "Rotate") : null,
        s.enabled ? op("stop", "Stop") : op("start", "Start"),
        op("delete", "Delete", "danger")));
  }));
}

// renderCompanion shows the browser companion: pairing requests waiting
// for the operator (approve only when the code matches the popup's) and
// paired devices with their live bindings.
function renderCompanion(c) {
  const sec = $("companion-section");
  if (!c) { sec.hidden = true; return; }
  sec.hidden = false;
  const un = $("companion-unavailable");
  un.hidden = !c.unavailable;
  un.textContent = c.unavailable ? "No device is trusted: " + c.unavailable : "";
  const when = (t) => new Date(t).toLocaleString();
  const op = (what, id, label, cls, done) => el("button", { type: "button", class: cls || "", dataset: { op: what },
    onclick: async () => {
      try {
        await api("POST", "/ui/api/companion/" + what + "/" + encodeURIComponent(id));
        say(done);
      } finally { refresh(); }
    } }, label);
  const pending = $("companion-pending").tBodies[0];
  pending.replaceChildren(...(c.pending.length ? c.pending.map((r) => el("tr", { dataset: { request: r.request } },
    el("td", {}, r.name), el("td", {}, when(r.created)), el("td", {}, el("code", { class: "pair-code" }, r.code)),
    el("td", { class: "actions" }, op("approve", r.request, "Approve", "", r.name + " paired"),
      op("refuse", r.request, "Refuse", "danger", r.name + " refused"))))
    : [el("tr", {}, el("td", { class: "muted", colSpan: 4 }, "No device is asking."))]));
  const devices = $("companion-devices").tBodies[0];
  devices.replaceChildren(...(c.devices.length ? c.devices.map((d) => el("tr", { dataset: { device: d.id } },
    el("td", {}, d.name, el("div", { class: "muted" }, d.id)), el("td", {}, when(d.paired)), el("td", {}, when(d.lastSeen)),
    el("td", { class: "bindings" }, ...(d.bindings.length ? d.bindings.map((b) => el("div", { class: "binding", dataset: { binding: b.id } },
      b.project + " · " + b.session + " · ", el("span", { class: "url" }, b.conversation)))
      : [el("span", { class: "muted" }, "none")])),
    el("td", {}, op("revoke", d.id, "Revoke", "danger", d.name + " revoked; its sessions ended"))))
    : [el("tr", {}, el("td", { class: "muted", colSpan: 5 }, "No paired device."))]));
}

function renderTunnel(state) {
  const t = state.tunnel || {};
  let text;
  if (state.publicOrigin && t.state !== "running") text = "Public origin (configured): " + state.publicOrigin;
  else if (t.state === "running") text = "Quick Tunnel running: " + t.origin + " → data plane port " + state.dataPort;
  else if (t.state === "unavailable") text = "No tunnel: " + t.error;
  else if (t.state === "failed") text = "Tunnel failed: " + t.error;
  else text = "No tunnel; Init URLs point at http://127.0.0.1:" + state.dataPort + " (this machine only).";
  $("tunnel-state").textContent = text;
  $("tunnel-start").disabled = !!state.publicOrigin || t.state === "running" || t.state === "unavailable";
  $("tunnel-stop").disabled = t.state !== "running" && t.state !== "starting";
}

function renderPlugins(list) {
  $("plugins").replaceChildren(...(list.length ? list.map((p) => el("li", {}, p.id + " — " + (p.status || "") + " · " + p.tools + " tools" + (p.description ? " · " + p.description : "")))
    : [el("li", { class: "muted" }, "No plugins installed.")]));
}

// changedText is what a file mutation changed, as one line: the paths
// (the server has bounded and escaped them) and how many more there were.
function changedText(a) {
  if (!a.paths || !a.paths.length) return null;
  return "changed: " + a.paths.join(", ") + (a.morePaths ? " +" + a.morePaths + " more" : "");
}

function renderActivity(list) {
  $("activity").tBodies[0].replaceChildren(...list.slice(0, 50).map((a) => el("tr", {},
    el("td", {}, new Date(a.at).toLocaleTimeString()), el("td", {}, a.session || "-"),
    el("td", {}, a.tool || a.route, changedText(a) && el("div", { class: "muted url changed" }, changedText(a))),
    el("td", {}, a.errorCode ? a.errorCode : String(a.status)), el("td", {}, a.durationMs.toFixed(1)),
    el("td", {}, String(a.bytes)), el("td", {}, a.replayed ? "yes" : ""))));
}

async function refresh() {
  try {
    const st = await api("GET", "/ui/api/state");
    renderHub(st.hub);
    renderProjects(st.projects);
    renderSessions(st.sessions);
    renderCompanion(st.companion);
    renderTunnel(st);
    renderPlugins(st.plugins);
    renderActivity(st.activity);
    document.body.dataset.ready = "yes";
  } catch (e) { /* say() already showed it */ }
}

async function browse(path) {
  const d = await api("GET", "/ui/api/browse" + (path ? "?path=" + encodeURIComponent(path) : ""));
  $("browse-path").textContent = d.path;
  $("browse-up").onclick = () => browse(d.parent);
  $("project-dir").value = d.path;
  $("browse-list").replaceChildren(...d.dirs.map((dir) => el("li", {
    onclick: () => browse(dir.path), title: dir.path,
  }, dir.name + "/")));
}

function wire() {
  $("project-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const p = await api("POST", "/ui/api/projects", {
      dir: $("project-dir").value, name: $("project-name").value,
      write: $("project-write").checked, terminal: $("project-terminal").checked, bridges: $("project-bridges").checked,
    });
    say("project " + p.project.name + " added: " + p.project.root);
    $("project-name").value = "";
    refresh();
  });
  $("session-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const s = await api("POST", "/ui/api/sessions", { project: $("session-project").value, label: $("session-label").value });
    say("session " + s.session.id + " created");
    $("session-label").value = "";
    refresh();
  });
  $("tunnel-start").addEventListener("click", async () => { say("starting a Quick Tunnel…"); try { await api("POST", "/ui/api/tunnel/start"); } finally { refresh(); } });
  $("tunnel-stop").addEventListener("click", async () => { await api("POST", "/ui/api/tunnel/stop"); refresh(); });
  $("add-project").addEventListener("toggle", () => { if ($("add-project").open && !$("browse-path").textContent) browse(""); });
}

// loggedOut forgets this tab's session and shows how to log in.
function loggedOut(why) {
  session = null;
  sessionStorage.removeItem(SESSION_KEY);
  clearInterval(poller);
  poller = null;
  $("app").hidden = true;
  $("logout").hidden = true;
  $("login").hidden = false;
  document.body.dataset.loggedIn = "no";
  delete document.body.dataset.ready;
  if (why) say(why, true);
}

function loggedIn() {
  $("login").hidden = true;
  $("app").hidden = false;
  $("logout").hidden = false;
  document.body.dataset.loggedIn = "yes";
  if (!wired) {
    wire();
    $("logout").addEventListener("click", async () => {
      try { await api("POST", "/ui/api/logout"); } catch (e) { /* ended already */ }
      loggedOut();
      say("logged out");
    });
    wired = true;
  }
  if (!poller) poller = setInterval(refresh, 3000);
  refresh();
}

// redeemFragment spends a one-time login token from the URL's fragment,
// after taking it out of the address bar and the tab's history. A failed
// login leaves a session this tab already has in place.
async function redeemFragment() {
  const m = /^#login=([A-Za-z0-9_-]{1,200})$/.exec(location.hash);
  if (!m) return;
  history.replaceState(null, "", location.pathname);
  try {
    const [, data] = await send("POST", "/ui/api/login", { token: m[1] });
    if (!data.ok) {
      say(data.message || data.error, true);
      return;
    }
    session = data.session;
    sessionStorage.setItem(SESSION_KEY, session);
    say("logged in");
  } catch (e) {
    say("the control plane is not reachable", true);
  }
}

async function start() {
  await redeemFragment();
  session = sessionStorage.getItem(SESSION_KEY);
  if (session) loggedIn();
  else loggedOut();
}

// A login link opened in a tab already on this page changes only the
// fragment: no reload, so listen for it.
window.addEventListener("hashchange", start);
start();
