// The one way the pages talk to the bot: its public HTTP API, with the token the user
// typed in (kept for this browser session only, never in the page itself).
"use strict";

const TOKEN_KEY = "groupmate-token";

export class Unauthorized extends Error {}

// A call the bot refused or could not do; `message` says why in words for a person.
export class Refusal extends Error {
  constructor(message, status) { super(message); this.status = status; }
}

// What a status means when the bot's answer has no sentence of its own to show.
const STATUS_WORDS = {
  403: "That is not allowed here.",
  404: "It is not there any more.",
  409: "It changed meanwhile, or is not in a state for that.",
  429: "Too many at once: wait a moment and try again.",
  500: "It failed on the bot's side.",
  503: "The bot's database is not answering; nothing changed. Try again shortly.",
  504: "The bot took too long to finish; it may or may not have happened. Look again in a minute.",
};
// The API's field names as the pages' labels call them.
const FIELD_WORDS = { when: "When", content: "What", timezone: "Time zone", who: "Who" };

// The reason in a refused call's answer: the bot's own sentence where it wrote one (the
// same the chat would get), else each problem under the label of its field; never the
// API's "invalid request", a JSON path or a reason code.
function reasonOf(data, status) {
  const issues = (data.issues || []).map((i) => {
    const label = FIELD_WORDS[i.path];
    return label ? `${label}: ${i.problem}` : i.problem;
  });
  if (issues.length) return issues.join(" ");
  if (data.reason) return "That is switched off or not offered in this chat.";  // a hidden tool
  if (status === 429 && data.retry_after) return `Too many at once: try again in ${data.retry_after} s.`;
  if (data.error && status < 500) return data.error;
  return STATUS_WORDS[status] || `The bot answered with an error (HTTP ${status}).`;
}

export async function api(method, path, body) {
  const headers = { "Accept": "application/json" };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers["Authorization"] = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let answer;
  try {
    answer = await fetch(path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new Refusal("The bot cannot be reached: is it running?", 0);
  }
  if (answer.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    throw new Unauthorized("the bot wants its token");
  }
  if (answer.status === 204) return null;
  const data = await answer.json().catch(() => ({}));
  if (!answer.ok) throw new Refusal(reasonOf(data, answer.status), answer.status);
  return data;
}

// Run `action` for a control, with `out` (an element next to it) saying why it failed;
// true when it worked. While it runs, `busy` (if given) says so.
export async function attempt(out, action, busy = "") {
  out.textContent = busy;
  out.classList.toggle("error", false);
  try {
    await action();
    out.textContent = "";
    return true;
  } catch (error) {
    if (error instanceof Unauthorized) throw error;
    out.textContent = error instanceof Refusal ? error.message : String(error.message || error);
    out.classList.toggle("error", true);
    return false;
  }
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

// A time as the bot writes it in chats ("Mon 24 Nov 09:00", 24-hour, the year only when
// it is not this year's), in the given time zone (the chat's).
export function localTime(iso, zone) {
  if (!iso) return "—";
  const parts = {};
  const at = new Date(iso);
  const format = (date) => new Intl.DateTimeFormat("en-GB", {
    timeZone: zone || undefined, weekday: "short", day: "2-digit", month: "short", year: "numeric",
    hour: "2-digit", minute: "2-digit", hourCycle: "h23",
  }).formatToParts(date);
  for (const { type, value } of format(at)) parts[type] = value;
  const thisYear = format(new Date()).find((p) => p.type === "year").value;
  const year = parts.year === thisYear ? "" : ` ${parts.year}`;
  return `${parts.weekday} ${parts.day} ${parts.month}${year} ${parts.hour}:${parts.minute}`;
}

// Only the clock time ("21:24"), in the given zone.
export function clockTime(iso, zone) {
  return new Intl.DateTimeFormat("en-GB", {
    timeZone: zone || undefined, hour: "2-digit", minute: "2-digit", hourCycle: "h23",
  }).format(new Date(iso));
}
