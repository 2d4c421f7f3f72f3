// The geturl companion's popup: a view of the service worker's state and
// the buttons that ask it to act. It never holds the device secret: the
// worker's answers do not contain it.
"use strict";

const $ = (id) => document.getElementById(id);

// ask sends one request to the service worker and returns its value, or
// throws with the worker's (or the hub's) message.
async function ask(msg) {
  const ans = await chrome.runtime.sendMessage(msg);
  if (!ans) throw new Error("the companion's worker did not answer");
  if (!ans.ok) throw new Error(ans.message || ans.error);
  return ans.value;
}

function status(text, kind) {
  $("status").textContent = text || "";
  $("status").className = kind || "";
}

let shown = "";
let loadedProjects = false;

function render(v) {
  const was = document.body.dataset.state;
  document.body.dataset.state = v.paired ? "paired" : v.pairState === "pending" ? "pending" : "unpaired";
  if (was === "pending" && v.paired) status("Paired: the operator approved this browser.", "good");
  $("pair-section").hidden = v.paired || v.pairState === "pending";
  $("pending-section").hidden = v.pairState !== "pending";
  $("paired-section").hidden = !v.paired;
  $("device").textContent = v.paired ? "paired as " + v.name : "";
  $("code").textContent = v.code || "";
  if (!$("port").value) $("port").value = v.port || 47433;
  if (!$("name").value) $("name").value = v.name || defaultName();
  if (v.pairState === "refused") status("The operator refused this browser.", "bad");
  if (v.pairState === "expired") status("The pairing request expired; pair again.", "bad");
  if (v.pairState === "revoked") status("The operator revoked this browser; pair again.", "bad");
  const list = $("bindings");
  list.replaceChildren();
  for (const b of v.bindings) {
    const li = document.createElement("li");
    li.dataset.binding = b.binding;
    const what = document.createElement("div");
    what.className = "what";
    const proj = document.createElement("strong");
    proj.textContent = b.project;
    const conv = document.createElement("div");
    conv.className = "conv";
    conv.textContent = b.conversation;
    what.append(proj, conv);
    const btn = document.createElement("button");
    btn.type = "button";
    btn.className = "danger";
    btn.dataset.op = "disconnect";
    btn.textContent = "Disconnect";
    btn.addEventListener("click", () => act("Disconnected.", { op: "disconnect", binding: b.binding }));
    li.append(what, btn);
    list.append(li);
  }
  $("no-bindings").hidden = v.bindings.length > 0;
  if (v.paired && !loadedProjects) {
    loadedProjects = true;
    loadProjects();
  }
  document.body.dataset.ready = "yes";
}

function defaultName() {
  const p = (navigator.userAgentData && navigator.userAgentData.platform) || navigator.platform || "";
  return ("Browser" + (p ? " on " + p : "")).replace(/[^\x20-\x7e]/g, "").slice(0, 64);
}

async function refresh() {
  try {
    const v = await ask({ op: "state" });
    const key = JSON.stringify(v);
    if (key !== shown) {
      shown = key;
      render(v);
    }
  } catch (e) {
    status(e.message, "bad");
  }
}

async function act(done, msg) {
  status("…");
  try {
    const v = await ask(msg);
    status(done, "good");
    shown = "";
    if (v && v.bindings) render(v);
    await refresh();
    return v;
  } catch (e) {
    status(e.message, "bad");
    return null;
  }
}

async function loadProjects() {
  try {
    const { projects } = await ask({ op: "projects" });
    const sel = $("project");
    sel.replaceChildren();
    for (const p of projects) {
      const o = document.createElement("option");
      o.value = p.name;
      o.textContent = p.name + (p.write ? " (write" + (p.terminal ? ", terminal)" : ")") : " (read-only)");
      sel.append(o);
    }
    $("bind").disabled = projects.length === 0;
    if (projects.length === 0) status("The hub has no projects; add one with `hub geturl project add DIR`.", "bad");
  } catch (e) {
    loadedProjects = false;
    status(e.message, "bad");
  }
}

$("pair-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  act("Pairing requested.", { op: "pair", port: Number($("port").value), name: $("name").value.trim() });
});

$("bind-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  if (!tab) {
    status("No active tab to bind.", "bad");
    return;
  }
  const v = await act("", { op: "bind", tabId: tab.id, project: $("project").value });
  if (v) status("Prompt put into the chat's " + v.into + ": read it, then send it.", "good");
});

$("forget").addEventListener("click", () => {
  loadedProjects = false;
  act("Forgot this device.", { op: "forget" });
});

refresh();
setInterval(refresh, 1000);
