// The geturl companion's content script, injected (chrome.scripting) into
// a chat tab when the user binds it. It runs in the extension's isolated
// world: the page cannot reach its variables or its runtime port.
//
// It does two things and nothing else:
// - on {op:"insert"} from the service worker, it puts the one-time Init
//   prompt into the page's chat input (the focused editable element, else
//   the first visible textarea, contenteditable element or text input),
//   firing the events a page listens to. It never submits: the user reads
//   the prompt and sends it.
// - it holds a runtime port to the service worker and pings it, which keeps
//   the worker (and so the binding's heartbeat) alive exactly as long as
//   this document lives; see background.js.
// It never sees the device secret.
"use strict";

(() => {
  if (globalThis.__geturlCompanion) return;
  globalThis.__geturlCompanion = true;

  const PORT_NAME = "geturl-binding";

  function visible(el) {
    const r = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && cs.visibility !== "hidden" && cs.display !== "none";
  }

  function editable(el) {
    if (!el || el.disabled || el.readOnly) return false;
    if (el instanceof HTMLTextAreaElement) return true;
    if (el instanceof HTMLInputElement) return ["text", "search", ""].includes(el.type);
    return el instanceof HTMLElement && el.isContentEditable;
  }

  // target finds the chat input: the focused editable element if any, else
  // the first visible textarea, contenteditable element or text input.
  function target() {
    let el = document.activeElement;
    while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    if (editable(el)) return el;
    for (const sel of ["textarea", "[contenteditable]:not([contenteditable=false])", "input[type=text], input[type=search], input:not([type])"]) {
      for (const c of document.querySelectorAll(sel)) {
        if (editable(c) && visible(c)) return c;
      }
    }
    return null;
  }

  // insert puts text into el as typing would: through the native value
  // setter (so frameworks that track the value see a change) or the
  // editing command, then an input event. Nothing submits.
  function insert(el, text) {
    el.focus();
    if (el instanceof HTMLTextAreaElement || el instanceof HTMLInputElement) {
      const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
      const set = Object.getOwnPropertyDescriptor(proto, "value").set;
      set.call(el, text);
      el.dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "insertText", data: text }));
      el.dispatchEvent(new Event("change", { bubbles: true }));
      return el instanceof HTMLTextAreaElement ? "textarea" : "input";
    }
    // contenteditable: select what is there and replace it through the
    // editing command (which fires beforeinput/input like typing does, so
    // editors such as ProseMirror take it); fall back to the text itself.
    const sel = getSelection();
    const range = document.createRange();
    range.selectNodeContents(el);
    sel.removeAllRanges();
    sel.addRange(range);
    let done = false;
    try { done = document.execCommand("insertText", false, text); } catch (e) { done = false; }
    if (!done || el.textContent !== text) {
      el.textContent = text;
      el.dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "insertText", data: text }));
    }
    return "contenteditable";
  }

  // keepAlive pings the service worker for binding until the worker says
  // the binding is over; a port the worker's restart broke is reconnected.
  function keepAlive(binding, pingMs) {
    let failures = 0;
    let timer = 0;
    const connect = () => {
      if (!chrome.runtime || !chrome.runtime.id) return; // the extension went away
      let port;
      try { port = chrome.runtime.connect({ name: PORT_NAME }); } catch (e) { return; }
      let over = false;
      port.onMessage.addListener((m) => {
        if (m && m.op === "ok") failures = 0;
        if (m && m.op === "end") over = true;
      });
      port.onDisconnect.addListener(() => {
        clearInterval(timer);
        if (over || ++failures > 3) return;
        setTimeout(connect, 500 * failures);
      });
      const ping = () => { try { port.postMessage({ binding }); } catch (e) { /* disconnected */ } };
      ping();
      timer = setInterval(ping, pingMs);
    };
    connect();
  }

  chrome.runtime.onMessage.addListener((msg, sender, reply) => {
    if (sender.id !== chrome.runtime.id || sender.tab || !msg || msg.op !== "insert") return false;
    const el = target();
    if (!el) {
      reply({ ok: false, error: "no chat input found in this page (a textarea, text field or editable area)" });
      return false;
    }
    const into = insert(el, String(msg.prompt));
    keepAlive(String(msg.binding), Math.max(1000, Math.min(20000, Number(msg.ping_ms) || 5000)));
    reply({ ok: true, into });
    return false;
  });
})();
