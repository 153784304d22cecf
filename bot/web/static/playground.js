// The playground: a group chat and private chats with people you add, talking to the
// bot through POST /v1/messages; what the bot sends by itself arrives over /v1/events.
import { api, attempt, clockTime, element, listen, localTime, withMentions, withToken } from "./api.js";

const STATE_KEY = "groupmate-playground";
const GROUP = "group";
const state = Object.assign(
  { people: [{ id: "alice", name: "Alice" }, { id: "bob", name: "Bob" }], me: "alice", chat: GROUP },
  JSON.parse(localStorage.getItem(STATE_KEY) || "{}"),
);
let info = { bot_name: "groupmate", llm: false, web_prefix: "web:", timezone: "UTC" };
let zone = null;  // the open chat's time zone
let oldest = null;
const unread = new Map();

const $ = (id) => document.getElementById(id);
const problem = (error) => { $("problem").textContent = String(error.message || error); };
const save = () => localStorage.setItem(STATE_KEY, JSON.stringify(state));
const person = (id) => state.people.find((p) => p.id === id) || state.people[0];
const chatId = (chat) => info.web_prefix + (chat === GROUP ? "group" : `dm:${chat}`);
const chatType = (chat) => (chat === GROUP ? "group" : "private");
const chatName = (chat) => (chat === GROUP ? "Group chat" : `Private: ${person(chat).name} and ${info.bot_name}`);

function renderChats() {
  const list = $("chats");
  list.replaceChildren();
  for (const chat of [GROUP, ...state.people.map((p) => p.id)]) {
    const label = chat === GROUP ? "Group chat" : `${person(chat).name} (private)`;
    const button = element("button", {
      type: "button", text: label, "aria-current": String(chat === state.chat),
      onclick: () => openChat(chat),
    });
    const count = unread.get(chatId(chat));
    const item = element("li", {}, button);
    if (count) item.append(element("span", { class: "badge", text: String(count), "aria-label": `${count} unread` }));
    list.append(item);
  }
}

function renderPeople() {
  const list = $("people");
  list.replaceChildren();
  for (const p of state.people) {
    const choose = element("button", {
      type: "button", text: p.name, "aria-pressed": String(p.id === state.me),
      onclick: () => { state.me = p.id; save(); renderPeople(); loadReminders().catch(problem); },
    });
    const rename = element("button", {
      type: "button", text: "Rename", "aria-label": `Rename ${p.name}`,
      onclick: () => {
        const name = (prompt(`New name for ${p.name}`, p.name) || "").trim();
        if (name) { p.name = name.slice(0, 40); save(); renderAll(); }
      },
    });
    // The person administers the group: /tz, reminding everyone, changing others'
    // reminders are theirs to try, as for a group admin on a real platform.
    const admin = element("input", { type: "checkbox", "aria-label": `${p.name} is an admin` });
    admin.checked = Boolean(p.admin);
    admin.addEventListener("change", () => { p.admin = admin.checked; save(); renderPeople(); loadReminders().catch(problem); });
    list.append(element("li", {}, choose, rename, element("label", { class: "admin" }, admin, "Admin")));
  }
  $("speaker").textContent = person(state.me).name;
}

// The bot's messages with buttons, by id: a press, or another page's press arriving as
// an `edit` event, redraws the message in place.
const pressable = new Map();

function messageItem(m) {
  const item = element("li", { class: m.from_bot ? "bot" : "user" });
  item.append(element("span", { class: "who", text: m.from_bot ? info.bot_name : (m.sender_name || m.sender_id) }));
  item.append(withMentions(m.text));
  if (m.at) item.append(element("time", { datetime: m.at, title: localTime(m.at, zone), text: clockTime(m.at, zone) }));
  if (m.buttons && m.buttons.length) {
    item.dataset.message = m.id;
    pressable.set(m.id, m);
    item.append(buttonRows(m));
  }
  return item;
}

// Real buttons, their labels as text; what a press says goes to the status beside them,
// for the person who pressed (the other pages see only the message change).
function buttonRows(m) {
  const box = element("div", { class: "buttons", role: "group", "aria-label": "Act on this message" });
  const out = element("span", { class: "why", role: "status", "aria-live": "polite" });
  for (const row of m.buttons) {
    const buttons = row.map((b) => element("button", { type: "button", text: b.label, onclick: () => press(m, b, box, out) }));
    box.append(element("div", { class: "row" }, ...buttons));
  }
  box.append(out);
  return box;
}

async function press(m, button, box, out) {
  // A fresh nonce per press: the bot acts once on a press however often it is sent.
  const body = { data: button.data, press_id: crypto.randomUUID(), message_id: m.id };
  const path = `/v1/chats/${encodeURIComponent(m.chat_id)}/presses?${asMe()}`;
  const controls = [...box.querySelectorAll("button")];
  controls.forEach((b) => { b.disabled = true; });
  out.classList.remove("error");
  out.textContent = "…";
  let result;
  try {
    result = await api("POST", path, body);
  } catch (error) {
    out.classList.add("error");
    out.textContent = `Not done: ${error.message}`;
    return;
  } finally {
    controls.forEach((b) => { b.disabled = false; });
  }
  const status = result.update ? redraw(m.id, result.update).querySelector(".why") : out;
  status.classList.toggle("error", !result.ok);
  status.textContent = result.answer;
  await loadReminders();
}

// The message `id` now reads as `now` (text and remaining buttons); returns its item.
function redraw(id, now) {
  const old = $("messages").querySelector(`li[data-message="${CSS.escape(id)}"]`);
  const m = { ...pressable.get(id), text: now.text, buttons: now.buttons || [] };
  const item = messageItem(m);
  item.dataset.message = id;  // found by a later edit, buttons left or not
  if (!item.querySelector(".why")) item.append(element("span", { class: "why", role: "status", "aria-live": "polite" }));
  // What the press said stays when the other copy of the change (event or answer) lands.
  const said = old?.querySelector(".why");
  if (said) { item.querySelector(".why").textContent = said.textContent; item.querySelector(".why").className = said.className; }
  if (old) old.replaceWith(item);
  return item;
}

function showMessage(m) {
  const list = $("messages");
  const item = messageItem(m);
  list.append(item);
  item.scrollIntoView({ block: "end" });
  return item;
}

async function loadMessages(before) {
  const query = before ? `?before=${before}&limit=50` : "?limit=50";
  const page = await api("GET", `/v1/chats/${encodeURIComponent(chatId(state.chat))}/messages${query}`);
  const items = page.messages.map(messageItem);
  if (before) $("messages").prepend(...items);
  else { $("messages").replaceChildren(...items); $("messages").lastElementChild?.scrollIntoView({ block: "end" }); }
  oldest = page.next_before;
  $("older").hidden = !oldest;
}

// The side panel acts as the person speaking: their rights, as their chat message would
// have (the bot refuses what /cancel or /tz would refuse them).
function asMe() {
  const me = person(state.me);
  return new URLSearchParams({ as_user: me.id, as_name: me.name, as_admin: String(Boolean(me.admin)) });
}

function renderZone(timezone) {
  zone = timezone;
  const me = person(state.me);
  const box = $("zone");
  if (!me.admin && state.chat === GROUP) {
    box.replaceChildren(element("p", { class: "hint", text: `Time zone: ${timezone}. Only an admin can change it (tick Admin next to ${me.name}).` }));
    return;
  }
  const input = element("input", { type: "text", id: "zone-input", list: "zone-names", value: timezone, required: "", autocomplete: "off" });
  const out = element("span", { class: "why", role: "status", "aria-live": "polite" });
  const names = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  const form = element("form", { id: "zone-form", "aria-label": "The chat's time zone" },
    element("label", { for: "zone-input", text: "Time zone" }), input,
    element("datalist", { id: "zone-names" }, ...names.map((n) => element("option", { value: n }))),
    element("button", { type: "submit", text: "Change" }), out);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const id = encodeURIComponent(chatId(state.chat));
    const asked = input.value.trim();
    if (await attempt(out, () => api("PUT", `/v1/chats/${id}/settings?${asMe()}`, { timezone: asked }), "Changing…")) {
      await loadReminders();
      await loadMessages();  // their times, in the new zone
      $("zone").querySelector(".why").textContent = `Now ${asked}.`;
    }
  });
  box.replaceChildren(form);
}

async function loadReminders() {
  const id = encodeURIComponent(chatId(state.chat));
  const [reminders, settings] = await Promise.all([
    api("GET", `/v1/chats/${id}/reminders`), api("GET", `/v1/chats/${id}/settings`),
  ]);
  renderZone(settings.timezone);
  const list = $("reminders");
  list.replaceChildren();
  if (!reminders.length) list.append(element("li", { class: "hint", text: "No reminders yet." }));
  for (const r of reminders) {
    const next = r.next_fire_at ? `next ${localTime(r.next_fire_at, r.timezone)}` : r.status;
    const text = `#${r.short_id} ${r.content} — ${r.rule}, ${next}`;
    const out = element("span", { class: "why", role: "status", "aria-live": "polite" });
    const remove = element("button", {
      type: "button", class: "danger", text: "Delete", "aria-label": `Delete reminder #${r.short_id}`,
      onclick: async () => {
        const me = person(state.me).name;
        if (!confirm(`Delete reminder #${r.short_id} (“${r.content}”) as ${me}?`)) return;
        if (await attempt(out, () => api("DELETE", `/v1/chats/${id}/reminders/${r.id}?${asMe()}`), "Deleting…")) {
          await loadReminders();
        }
      },
    });
    list.append(element("li", { "data-reminder": String(r.short_id) }, element("span", { text }), remove, out));
  }
}

async function openChat(chat) {
  state.chat = chat;
  save();
  unread.delete(chatId(chat));
  $("chat-title").textContent = chatName(chat);
  renderChats();
  await loadReminders();  // first: the messages' times are in the chat's zone
  await loadMessages();
}

async function send(text) {
  const me = person(state.me);
  const mentioned = state.people.filter((p) => p.id !== me.id && text.toLowerCase().includes(`@${p.name.toLowerCase()}`));
  const body = {
    chat_id: chatId(state.chat), chat_type: chatType(state.chat),
    sender_id: me.id, sender_name: me.name, text, sender_is_admin: Boolean(me.admin),
    mentions_bot: text.toLowerCase().includes(`@${info.bot_name.toLowerCase()}`),
    message_id: crypto.randomUUID(),
    mentions: mentioned.map((p) => ({ user_id: p.id, name: p.name })),
  };
  const mine = showMessage({ from_bot: false, sender_name: me.name, text, at: new Date().toISOString() });
  let answer;
  try {
    answer = await api("POST", "/v1/messages", body);
  } catch (error) {
    mine.classList.add("unsent");
    mine.append(element("span", { class: "hint", text: " (not sent)" }));
    throw error;
  }
  for (const reply of answer.replies) {
    showMessage({
      from_bot: true, text: reply.text, at: new Date().toISOString(),
      id: crypto.randomUUID(), chat_id: body.chat_id, buttons: reply.buttons,
    });
  }
  await loadReminders();
}

function renderAll() { renderChats(); renderPeople(); $("chat-title").textContent = chatName(state.chat); }

async function start() {
  info = await withToken(() => api("GET", "/v1/info"));
  $("mode").textContent = info.llm
    ? "Natural language is on (an LLM is configured)."
    : "No LLM configured: offline commands only.";
  $("hint").textContent = info.llm
    ? `Mention @${info.bot_name} in the group, e.g. “@${info.bot_name} remind us in 1 minute to stretch”.`
    : `Try “/remind in 1 minute stretch”, “/reminders” or “/help”. Set an LLM for natural language.`;
  renderAll();
  await openChat(state.chat);
  listen("/v1/events", async (event) => {
    if (event.edit) {  // a press (here or on another page) changed a message
      if (pressable.has(event.id)) redraw(event.id, event);
      return;
    }
    if (event.chat_id === chatId(state.chat)) {
      showMessage({ from_bot: true, ...event });
      if (event.kind === "reminder") await loadReminders();
    } else {
      unread.set(event.chat_id, (unread.get(event.chat_id) || 0) + 1);
      renderChats();
    }
  }, (s) => { $("live").textContent = s === "live" ? "Live" : "Reconnecting…"; });
}

$("composer").addEventListener("submit", async (event) => {
  event.preventDefault();
  const field = $("text");
  const text = field.value.trim();
  if (!text) return;
  field.value = "";
  $("problem").textContent = "";
  try { await send(text); } catch (error) { $("problem").textContent = `Not sent: ${error.message}`; }
});
$("text").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); $("composer").requestSubmit(); }
});
$("older").addEventListener("click", () => loadMessages(oldest).catch(problem));
$("add-person").addEventListener("submit", (event) => {
  event.preventDefault();
  const name = $("person-name").value.trim().slice(0, 40);
  if (!name) return;
  const id = name.toLowerCase().replace(/[^a-z0-9]+/g, "-") + "-" + Math.random().toString(36).slice(2, 6);
  state.people.push({ id, name });
  state.me = id;
  $("person-name").value = "";
  save();
  renderAll();
});

start().catch((error) => { $("problem").textContent = String(error.message || error); });
