// The one way the pages talk to the bot: its public HTTP API, with the token the user
// typed in (kept for this browser session only, never in the page itself).
"use strict";

const TOKEN_KEY = "groupmate-token";

export class Unauthorized extends Error {}

export async function api(method, path, body) {
  const headers = { "Accept": "application/json" };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers["Authorization"] = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const answer = await fetch(path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (answer.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    throw new Unauthorized("the bot wants its token");
  }
  if (answer.status === 204) return null;
  const data = await answer.json().catch(() => ({}));
  if (!answer.ok) {
    const issues = (data.issues || []).map((i) => `${i.path}: ${i.problem}`).join("; ");
    throw new Error([data.error || `HTTP ${answer.status}`, issues].filter(Boolean).join(" — "));
  }
  return data;
}

// Ask for the token once (a <dialog> with a labelled field); resolves with what
// `check` returns once the token works.
function tokenDialog() {
  let dialog = document.getElementById("token-dialog");
  if (dialog) return dialog;
  const hint = "The token is adapters.webhook.token in the bot's config. "
    + "It is kept for this browser session only.";
  dialog = element("dialog", { id: "token-dialog", "aria-labelledby": "token-title" },
    element("form", { method: "dialog" },
      element("h2", { id: "token-title", text: "This bot needs its token" }),
      element("p", { class: "hint", text: hint }),
      element("label", { for: "token", text: "Token" }),
      element("input", { type: "password", id: "token", autocomplete: "off", required: "" }),
      element("button", { type: "submit", class: "primary", text: "Open" }),
      element("p", { class: "error", role: "alert" })));
  document.body.append(dialog);
  return dialog;
}

export function askToken(check) {
  const dialog = tokenDialog();
  const form = dialog.querySelector("form");
  const field = dialog.querySelector("input");
  const problem = dialog.querySelector(".error");
  return new Promise((resolve) => {
    form.onsubmit = async (event) => {
      event.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, field.value.trim());
      try {
        const result = await check();
        field.value = "";
        problem.textContent = "";
        dialog.close();
        resolve(result);
      } catch (error) {
        problem.textContent = error instanceof Unauthorized
          ? "That token is wrong. Try again." : String(error.message || error);
        field.select();
      }
    };
    if (!dialog.open) dialog.showModal();
    field.focus();
  });
}

// Call `load`; on 401, ask for the token and try again.
export async function withToken(load) {
  try {
    return await load();
  } catch (error) {
    if (!(error instanceof Unauthorized)) throw error;
    return askToken(load);  // resolves with what `load` gave once the token worked
  }
}

// Server-sent events over fetch, so that the token can go in a header.
export async function listen(path, onEvent, onState) {
  for (;;) {
    try {
      const headers = {};
      const token = sessionStorage.getItem(TOKEN_KEY);
      if (token) headers["Authorization"] = `Bearer ${token}`;
      const answer = await fetch(path, { headers });
      if (!answer.ok || !answer.body) throw new Error(`HTTP ${answer.status}`);
      onState("live");
      const reader = answer.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const data = block.split("\n").filter((l) => l.startsWith("data: "))
            .map((l) => l.slice(6)).join("\n");
          if (data) onEvent(JSON.parse(data));
        }
      }
    } catch (error) {
      onState("reconnecting");
    }
    await new Promise((r) => setTimeout(r, 1500));
  }
}

// Text with @mentions highlighted, built from text nodes only: user text is never HTML.
export function withMentions(text) {
  const fragment = document.createDocumentFragment();
  const pattern = /@[\p{L}\p{N}_.-]+/gu;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    fragment.append(document.createTextNode(text.slice(last, match.index)));
    const mark = document.createElement("mark");
    mark.className = "mention";
    mark.textContent = match[0];
    fragment.append(mark);
    last = match.index + match[0].length;
  }
  fragment.append(document.createTextNode(text.slice(last)));
  return fragment;
}

export function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
}

export function localTime(iso, zone) {
  if (!iso) return "paused";
  return new Date(iso).toLocaleString([], {
    timeZone: zone, weekday: "short", month: "short", day: "numeric",
    hour: "2-digit", minute: "2-digit",
  });
}
