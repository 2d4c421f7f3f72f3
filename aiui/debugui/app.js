// The aiui /debug viewer. Plain JS, no build step. Everything shown is
// built with textContent, never innerHTML: transcripts, tab titles and
// paths come from pages, and are data, not markup.
"use strict";

const $ = (id) => document.getElementById(id);
const SVGNS = "http://www.w3.org/2000/svg";

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") e.className = v;
    else if (k === "dataset") Object.assign(e.dataset, v);
    else e[k] = v;
  }
  for (const c of children.flat(Infinity)) if (c !== null && c !== undefined && c !== false) e.append(c);
  return e;
}

function svg(tag, attrs = {}, ...children) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

const muted = (text) => el("span", { class: "muted" }, text);
const bad = (text) => el("span", { class: "bad" }, text);

function dur(ms) {
  if (ms < 10) return ms.toFixed(2) + " ms";
  if (ms < 1000) return ms.toFixed(ms < 100 ? 1 : 0) + " ms";
  return (ms / 1000).toFixed(2) + " s";
}

function size(n) {
  if (n < 1024) return n + " B";
  if (n < 1 << 20) return (n / 1024).toFixed(1) + " KiB";
  return (n / (1 << 20)).toFixed(1) + " MiB";
}

function clock(iso) {
  const d = new Date(iso);
  const p = (n, w = 2) => String(n).padStart(w, "0");
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

const isImage = (mime) => /^image\/(png|jpeg|webp|gif)\b/i.test(mime || "");
const isAudio = (mime) => /^(audio\/|video\/webm)/i.test(mime || "");
// A realtime segment's file grows frame by frame (served as WAV).
const streamed = (mime) => /^audio\/(pcm|l16)\b/i.test(mime || "");

// ---- state ---------------------------------------------------------------

const traces = new Map(); // trace id → trace, with every stage so far
let order = []; // trace ids, oldest first
const userOpen = new Map(); // trace id → the open state the user chose
const openParts = new Set(); // "<trace id>/<part>" of nested details left open
const media = new Map(); // blob key → its <img>/<audio>, kept across renders

// apply merges one "traces" event: a changed trace brings only the stages
// after `from` (the ones this page has not seen).
function apply(msg) {
  const dirty = new Set();
  for (const t of msg.traces) {
    const prev = traces.get(t.id);
    const kept = prev && t.from > 0 ? prev.stages.slice(0, t.from) : [];
    t.stages = kept.concat(t.stages || []);
    t.blobs = t.blobs || [];
    traces.set(t.id, t);
    dirty.add(t.id);
  }
  order = msg.ids || [];
  for (const id of [...traces.keys()]) if (!order.includes(id)) traces.delete(id);
  const keys = new Set([...traces.values()].flatMap((t) => t.blobs.map((b) => b.key)));
  for (const k of [...media.keys()]) if (!keys.has(k)) media.delete(k);
  render(dirty);
  if (msg.info) showInfo(msg.info);
  document.body.dataset.version = msg.version;
}

function showInfo(info) {
  $("info-generation").textContent = info.generation;
  $("info-formats").textContent = (info.formats || []).join(", ");
  $("info-faces").textContent = info.faces;
  $("info-pending").textContent = info.pendingPrompts;
}

function live(state, text) {
  const l = $("live");
  l.dataset.state = state;
  l.textContent = text;
}

function connect() {
  const es = new EventSource("/debug/api/events");
  es.addEventListener("traces", (e) => apply(JSON.parse(e.data)));
  es.addEventListener("info", (e) => showInfo(JSON.parse(e.data)));
  es.onopen = () => live("live", "live");
  // EventSource reconnects by itself; the first event after it carries everything.
  es.onerror = () => live("reconnecting", "reconnecting…");
}

// ---- threads -------------------------------------------------------------

// Untouched threads are open while they run and while among the newest
// two; a thread the user opened or closed stays so.
const defaultOpen = (t, index) => t.state === "open" || index < 2;

function render(dirty) {
  const main = $("threads");
  const newest = order.slice().reverse();
  const none = main.querySelector(".none");
  if (none) none.hidden = newest.length > 0;
  const cards = new Map([...main.querySelectorAll(".thread")].map((c) => [c.dataset.id, c]));
  let prev = none;
  newest.forEach((id, i) => {
    let card = cards.get(id);
    if (!card || dirty.has(id)) {
      const fresh = thread(traces.get(id));
      if (card) card.replaceWith(fresh);
      card = fresh;
    }
    card.dataset.index = i;
    const open = userOpen.has(id) ? userOpen.get(id) : defaultOpen(traces.get(id), i);
    if (card.open !== open) card.open = open;
    const want = prev ? prev.nextElementSibling : main.firstElementChild;
    if (card !== want) main.insertBefore(card, want);
    prev = card;
  });
  for (const [id, c] of cards) if (!traces.has(id)) c.remove();
  if (shown && !shown.isConnected) {
    // its card was redrawn under the pointer: follow the new element
    const again = [...document.querySelectorAll(".has-preview:hover")].pop();
    if (again) showPreview(again);
    else hidePreview();
  }
}

function thread(t) {
  const card = el("details", { class: "thread", dataset: { id: t.id, state: t.state, format: t.format, threadId: t.threadId } });
  card.addEventListener("toggle", () => {
    // also fired by render's own changes, which match the default
    const cur = traces.get(t.id);
    if (!cur) return;
    if (card.open === defaultOpen(cur, Number(card.dataset.index))) userOpen.delete(t.id);
    else userOpen.set(t.id, card.open);
  });
  const last = t.stages.length ? t.stages[t.stages.length - 1].ms : 0;
  const facts = [clock(t.startedAt), dur(last), t.stages.length + " stages"];
  if (t.dropped) facts.push(t.dropped + " more not kept");
  card.append(...[
    el("summary", {},
      el("span", { class: "badge format" }, t.format),
      el("span", { class: "badge state", dataset: { state: t.state } }, t.state),
      el("span", { class: "tid", title: "thread id" }, t.threadId),
      el("span", { class: "facts" }, facts.join(" · "))),
    attachments(t),
    timeline(t)].filter(Boolean));
  return card;
}

// part is a nested <details> whose open state survives re-renders.
function part(t, key, summary, ...body) {
  const id = t.id + "/" + key;
  const d = el("details", { class: "part", open: openParts.has(id) }, el("summary", {}, summary), ...body);
  d.addEventListener("toggle", () => (d.open ? openParts.add(id) : openParts.delete(id)));
  return d;
}

// ---- attachments ---------------------------------------------------------

// lastCompose is the newest composed turn: the final one, else the
// latest speculative one.
function lastCompose(t) {
  for (let i = t.stages.length - 1; i >= 0; i--) {
    const s = t.stages[i];
    if ((s.stage === "composed intent" || s.stage === "speculative compose") && s.detail && typeof s.detail === "object") return s.detail;
  }
  return null;
}

function citedBy(t) {
  const cites = new Map();
  for (const s of t.stages) {
    if (s.stage === "lowered prompt" && s.detail && s.detail.meta) {
      for (const [k, v] of Object.entries(s.detail.meta)) if (/^shot_\d+$/.test(k)) cites.set(v, k);
    }
  }
  return cites;
}

function attachments(t) {
  const cites = citedBy(t);
  // an attachment sent again under its id replaced the file: show it once
  const latest = [...new Map(t.blobs.map((b) => [b.id, b])).values()];
  const rows = latest.map((b) => {
    const cited = cites.get(b.path);
    return el("li", { class: "blob", dataset: { id: b.id } },
      el("div", { class: "media" }, mediaFor(t, b)),
      el("div", {},
        el("div", {}, el("b", {}, b.id), " ", muted(b.mime + " · " + (streamed(b.mime) ? "streamed" : size(b.bytes)))),
        el("div", { class: "cite" }, muted(cited ? "the prompt cites {" + cited + "} as " : "stored at "), pathEl(t, b.path))));
  });
  const c = lastCompose(t);
  const ink = c ? (c.items || []).filter((it) => it.kind === "ink") : [];
  if (ink.length) {
    const n = ink.reduce((a, it) => a + (it.strokes || []).length, 0);
    rows.push(el("li", { class: "blob ink" },
      el("div", { class: "media" }, inkSketch(c)),
      el("div", {}, el("b", {}, "ink"), " ", muted(n + (n === 1 ? " stroke" : " strokes") + " (dashed: the shots' regions)"))));
  }
  if (!rows.length) return null;
  return el("section", { class: "attachments" }, el("h3", {}, "Attachments"), el("ul", {}, rows));
}

function mediaFor(t, b) {
  let m = media.get(b.key);
  if (!m) {
    const src = "/debug/blob/" + encodeURIComponent(b.key);
    if (isImage(b.mime)) {
      const img = el("img", { class: "thumb has-preview", src, alt: b.id, tabIndex: 0, dataset: { key: b.key, trace: t.id, marker: b.id, path: b.path } });
      const ink = svg("svg", { class: "ink-overlay", preserveAspectRatio: "none", "aria-hidden": "true" });
      m = el("span", { class: "frame" }, img, ink);
      m.ink = ink;
    }
    else if (isAudio(b.mime)) m = el("audio", { controls: true, preload: "metadata", src });
    else m = muted("(no preview)");
    media.set(b.key, m);
  }
  if (m.ink) {
    const c = lastCompose(t);
    const shot = c && (c.items || []).find((it) => it.kind === "shot" && it.shot && it.shot.marker === b.id);
    overlay(m.ink, c, shot && shot.shot.rect);
  }
  return m;
}

// pathEl shows a path (short: its file name, the whole path on hover);
// a path of a stored image previews the image on hover.
function pathEl(t, path, short) {
  const p = el("code", { class: "path", title: path }, short ? path.slice(path.lastIndexOf("/") + 1) : path);
  const b = t.blobs.find((b) => b.path === path && isImage(b.mime));
  if (b) {
    p.classList.add("has-preview");
    p.tabIndex = 0;
    Object.assign(p.dataset, { key: b.key, trace: t.id, marker: b.id, path: b.path });
  }
  return p;
}

// inkSketch draws the strokes' bounds over the shots' regions, in page
// coordinates (the events carry bounds, not the points).
function inkSketch(c, width = 220) {
  const strokes = (c.items || []).filter((it) => it.kind === "ink").flatMap((it) => it.strokes || []).filter((s) => s.bounds);
  const shots = (c.items || []).filter((it) => it.kind === "shot" && it.shot && it.shot.rect).map((it) => it.shot);
  const rects = strokes.map((s) => s.bounds).concat(shots.map((s) => s.rect));
  if (!rects.length) return muted("(no bounds)");
  const x0 = Math.min(...rects.map((r) => r.x)), y0 = Math.min(...rects.map((r) => r.y));
  const x1 = Math.max(...rects.map((r) => r.x + r.w)), y1 = Math.max(...rects.map((r) => r.y + r.h));
  const pad = Math.max(x1 - x0, y1 - y0) * 0.04;
  const vb = [x0 - pad, y0 - pad, x1 - x0 + 2 * pad, y1 - y0 + 2 * pad];
  const s = svg("svg", { class: "ink-sketch", viewBox: vb.join(" "), width, height: Math.round(width * vb[3] / vb[2]) });
  for (const sh of shots) {
    s.append(svg("rect", { class: "shot", x: sh.rect.x, y: sh.rect.y, width: sh.rect.w, height: sh.rect.h, "vector-effect": "non-scaling-stroke" }));
    const label = svg("text", { class: "label", x: sh.rect.x + pad / 2, y: sh.rect.y + pad * 1.6, "font-size": pad * 1.5 });
    label.textContent = sh.marker;
    s.append(label);
  }
  for (const st of strokes) {
    const b = st.bounds;
    s.append(svg("rect", { class: "stroke", x: b.x, y: b.y, width: b.w, height: b.h, rx: Math.min(b.w, b.h) / 6, "vector-effect": "non-scaling-stroke" }));
  }
  return s;
}

// ---- timeline ------------------------------------------------------------

// Stages that repeat in runs (one per batch) show as one row per run.
const runs = new Set(["speculative compose", "merged events", "rejected"]);

function timeline(t) {
  const groups = [];
  for (const s of t.stages) {
    const g = groups[groups.length - 1];
    if (g && g.name === s.stage && runs.has(s.stage)) g.items.push(s);
    else groups.push({ name: s.stage, items: [s] });
  }
  const body = el("tbody", {}, groups.map((g, i) => stageRow(t, g, i)));
  return el("table", { class: "timeline" },
    el("thead", {}, el("tr", {}, el("th", {}, "offset"), el("th", {}, "stage"), el("th", {}, "detail"))), body);
}

function stageRow(t, g, i) {
  const last = g.items[g.items.length - 1];
  const name = el("td", { class: "name" }, g.name);
  if (g.items.length > 1) name.append(" ", el("span", { class: "count" }, "×" + g.items.length));
  const detail = el("td", { class: "detail" }, stageDetail(t, last));
  if (g.items.length > 1) {
    detail.append(part(t, "run" + i, "each " + g.name + " (" + dur(g.items[0].ms) + " … " + dur(last.ms) + ")",
      el("ol", { class: "run" }, g.items.map((s) => el("li", {}, muted("+" + dur(s.ms) + " "), stageDetail(t, s))))));
  }
  // first, so that closed it floats at the top right of the detail
  detail.prepend(part(t, "json" + i, "json", el("pre", { class: "json" }, JSON.stringify(last.detail, null, 2))));
  return el("tr", { class: "stage", dataset: { stage: g.name } }, el("td", { class: "ms" }, "+" + dur(g.items[0].ms)), name, detail);
}

function stageDetail(t, s) {
  const d = s.detail;
  const f = details[s.stage];
  if (f && !(typeof d === "string" && expectsObject.has(s.stage))) return f(d, t);
  if (typeof d === "string") return el("span", { class: "text" }, d);
  if (d === undefined || d === null) return muted("—");
  return el("code", { class: "compact" }, JSON.stringify(d));
}

// A detail over the trace's size bound arrives cut, as a string.
const expectsObject = new Set(["hello", "attachment", "condition", "speculative compose", "merged events", "conditioned"]);

const details = {
  "hello": (d) => [el("b", {}, d.format), " ", context(d.meta)],
  "client context": (d) => {
    const out = [context(d)];
    if (d && d.intent) out.push(" ", el("code", { class: "compact" }, "intent " + JSON.stringify(d.intent)));
    return out;
  },
  "prompt preamble": (d) => (d ? el("pre", { class: "prompt" }, d.replace(/\n+$/, "")) : muted("none: no tab or source context")),
  "context": (d) => (d ? ["selected text ", el("q", {}, d)] : muted("no selection")),
  "attachment": (d, t) => [el("b", {}, d.id), " ", muted(d.mime + " · " + (streamed(d.mime) ? "streaming" : size(d.bytes)) + " → "), pathEl(t, d.path, true)],
  "condition": (d, t) => [el("b", {}, d.id), " ", d.pass, " ", d.enabled ? "on" : muted("off"), d.identity ? muted(" (identity pass) ") : " ", pathEl(t, d.path, true)],
  "speculative compose": (d) => composeLine(d),
  "composed intent": (d, t) => {
    if (typeof d === "string") {
      let prev = null;
      for (const s of t.stages) if (s.stage === "speculative compose" && typeof s.detail === "object") prev = s.detail;
      return [muted(d), prev ? composeView(prev, t) : null];
    }
    return composeView(d, t);
  },
  "merged events": (d) => eventLine(d),
  "conditioned": (d, t) => (d && d.length
    ? el("ul", { class: "plain" }, d.map((c) => el("li", {}, el("b", {}, c.id), " ", c.pass || "no pass", " ", c.applied ? muted("(applied) ") : muted("(off) "), pathEl(t, c.path, true))))
    : muted("no attachments")),
  "lowered prompt": (d, t) => {
    if (typeof d === "string") return muted(d);
    const meta = Object.entries(d.meta || {});
    return [
      el("pre", { class: "prompt lowered" }, d.text),
      meta.length ? el("dl", { class: "meta" }, meta.map(([k, v]) => [el("dt", {}, k), el("dd", {}, /^shot_\d+$/.test(k) ? pathEl(t, v) : v)])) : null,
    ];
  },
  "rejected": (d) => bad(String(d)),
  "seams": (d) => el("span", { class: "warn" }, String(d)),
  "cancelled": (d) => muted(String(d)),
  "abandoned": (d) => el("span", { class: "warn" }, String(d)),
  "closed": () => muted("thread closed"),
};

function context(m) {
  if (!m) return muted("no client context");
  const out = [];
  if (m.tab) out.push(el("span", { class: "ctx" }, "tab ", m.tab.title ? el("q", {}, m.tab.title) : null, m.tab.url ? [" ", el("code", {}, m.tab.url)] : null));
  if (m.source && m.source.root) out.push(el("span", { class: "ctx" }, "root ", el("code", {}, m.source.root)));
  return out.length ? out : muted("no tab or source");
}

function counts(c) {
  const n = { segment: 0, shot: 0, ink: 0 };
  for (const it of c.items || []) n[it.kind] = (n[it.kind] || 0) + 1;
  const words = { segment: "segment", shot: "shot", ink: "ink group" };
  const out = Object.entries(words).filter(([k]) => n[k]).map(([k, w]) => n[k] + " " + w + (n[k] === 1 ? "" : "s"));
  return out.length ? out.join(" · ") : "nothing yet";
}

function composeLine(c) {
  const text = (c.items || []).filter((it) => it.kind === "segment" && it.text).map((it) => it.text).join(" ");
  return [muted(counts(c) + (c.cancelled ? " · cancelled" : c.closed ? " · closed" : "")), text ? [" ", el("q", { class: "clip" }, text)] : null];
}

function composeView(c, t) {
  const items = (c.items || []).map((it) => {
    switch (it.kind) {
      case "segment":
        return el("li", {}, el("span", { class: "tag" }, "seg " + it.segment),
          it.text ? it.text : it.note ? bad("not transcribed: " + it.note) : muted(it.final ? "(empty)" : "no final transcript yet"));
      case "shot": {
        const s = it.shot || {};
        const r = s.rect ? `region ${s.rect.x},${s.rect.y} ${s.rect.w}×${s.rect.h} ` : "";
        const comps = (s.components || []).filter((c) => c.component).map((c) => c.component + (c.source ? " (" + c.source + ")" : ""));
        return el("li", {}, el("span", { class: "tag" }, "{" + s.marker + "}"), r,
          comps.length ? muted("· " + comps.join(", ") + " ") : null,
          s.path ? pathEl(t, s.path, true) : bad("image not received"));
      }
      case "ink":
        return el("li", {}, el("span", { class: "tag" }, "ink"), (it.strokes || []).length + ((it.strokes || []).length === 1 ? " stroke" : " strokes"));
    }
    return el("li", {}, JSON.stringify(it));
  });
  for (const n of c.notes || []) items.push(el("li", {}, bad(n)));
  if (c.cancelled) items.push(el("li", {}, muted("cancelled by thread-close")));
  return el("ol", { class: "compose" }, items);
}

function eventLine(e) {
  if (!e || typeof e !== "object") return muted(String(e));
  const out = [el("b", {}, e.type)];
  if (e.segment) out.push(" seg " + e.segment);
  if (e.text !== undefined) out.push(" ", el("q", {}, e.text));
  if (e.original !== undefined || e.instruction !== undefined) out.push(" ", el("q", {}, e.original || ""), " → ", el("q", {}, e.instruction || ""));
  if (e.via) out.push(" ", muted("(" + e.via + ")"));
  if (e.patch) out.push(" ", muted("· V4A patch of " + e.patch.split("\n").length + " lines ·"));
  if (e.model) out.push(" ", muted(e.model));
  if (e.latencyMs) out.push(" ", muted(dur(e.latencyMs)));
  if (e.note) out.push(" ", bad(e.note));
  return out;
}

// ---- hover preview -------------------------------------------------------

let shown = null;

function showPreview(target) {
  const box = $("preview");
  const img = box.querySelector("img");
  const { key, trace, marker, path } = target.dataset;
  shown = target;
  const src = "/debug/blob/" + encodeURIComponent(key);
  if (img.getAttribute("src") !== src) {
    box.dataset.loaded = "no";
    img.src = src;
  }
  const caption = box.querySelector(".caption");
  const t = traces.get(trace);
  const c = t && lastCompose(t);
  const shot = c && (c.items || []).find((it) => it.kind === "shot" && it.shot && it.shot.marker === marker);
  overlay(box.querySelector(".ink-overlay"), c, shot && shot.shot.rect);
  const done = () => {
    box.dataset.loaded = img.naturalWidth > 0 ? "yes" : "no";
    caption.replaceChildren(el("b", {}, marker), " ", muted(img.naturalWidth + "×" + img.naturalHeight + " px · "), el("code", {}, path));
    place(box, target);
  };
  caption.replaceChildren(el("b", {}, marker), " ", el("code", {}, path));
  box.hidden = false;
  if (img.complete) done();
  else img.onload = img.onerror = done;
  place(box, target);
}

// overlay draws the ink strokes that fall on the shot's region.
function overlay(o, c, rect) {
  o.replaceChildren();
  if (!rect) return;
  o.setAttribute("viewBox", [rect.x, rect.y, rect.w, rect.h].join(" "));
  for (const it of (c && c.items) || []) {
    if (it.kind !== "ink") continue;
    for (const s of it.strokes || []) {
      const b = s.bounds;
      if (b) o.append(svg("rect", { class: "stroke", x: b.x, y: b.y, width: b.w, height: b.h, rx: Math.min(b.w, b.h) / 6, "vector-effect": "non-scaling-stroke" }));
    }
  }
}

function place(box, target) {
  const r = target.getBoundingClientRect();
  const w = box.offsetWidth, h = box.offsetHeight;
  let x = Math.min(r.left, window.innerWidth - w - 8);
  let y = r.bottom + 6;
  if (y + h > window.innerHeight - 8) y = Math.max(8, r.top - h - 6);
  box.style.left = Math.max(8, x) + "px";
  box.style.top = y + "px";
}

function hidePreview() {
  shown = null;
  $("preview").hidden = true;
}

const previewable = (e) => (e.target.closest ? e.target.closest(".has-preview") : null);
document.addEventListener("mouseover", (e) => { const t = previewable(e); if (t && t !== shown) showPreview(t); });
document.addEventListener("mouseout", (e) => { const t = previewable(e); if (t && !t.contains(e.relatedTarget)) hidePreview(); });
document.addEventListener("focusin", (e) => { const t = previewable(e); if (t) showPreview(t); });
document.addEventListener("focusout", (e) => { if (previewable(e)) hidePreview(); });
document.addEventListener("keydown", (e) => { if (e.key === "Escape") hidePreview(); });
window.addEventListener("scroll", () => { if (shown) place($("preview"), shown); }, { passive: true });

connect();
