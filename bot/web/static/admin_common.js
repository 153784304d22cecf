// What the dashboard's sections share: tables, labelled fields, the chats' time zones.
import { api, element, localTime } from "./api.js";

// A table in a box that scrolls sideways when the screen is narrower than the table, with
// a visible cue then; an empty one is a "nothing yet" line instead.
export function table(headers, rows, caption, empty = "Nothing yet.") {
  if (!rows.length) return element("p", { class: "empty", "data-table": caption, text: empty });
  const head = element("tr", {}, ...headers.map((h) => element("th", { scope: "col", text: h })));
  const body = rows.map((cells) => element("tr", {}, ...cells.map((c) =>
    element("td", {}, c instanceof Node ? c : document.createTextNode(c ?? "")))));
  const grid = element("table", {}, element("caption", { class: "visually-hidden", text: caption }),
    element("thead", {}, head), element("tbody", {}, ...body));
  const box = element("div", { class: "scroll", role: "region", tabindex: "0", "aria-label": caption }, grid);
  const cue = element("p", { class: "scroll-cue", "aria-hidden": "true", text: "Wider than the screen: scroll the table sideways →" });
  const wrapper = element("div", { class: "table" }, cue, box);
  // The cue shows only while the table is wider than its box.
  new ResizeObserver(() => wrapper.classList.toggle("overflows", box.scrollWidth > box.clientWidth + 1))
    .observe(box);
  return wrapper;
}

export const field = (label, input) => element("label", {}, `${label} `, input);

// Where a control says why it did not work (or what it is doing).
export const why = (id) => element("span", { class: "why", role: "status", "aria-live": "polite", ...(id ? { id } : {}) });

// Each chat's time zone, so that every time is shown as the bot writes it in that chat.
export async function zones() {
  const [chats, info] = await Promise.all([api("GET", "/v1/chats"), api("GET", "/v1/info")]);
  const byChat = new Map(chats.map((c) => [c.chat_id, c.timezone]));
  const zoneOf = (chat) => byChat.get(chat) || info.timezone;
  return { chats, info, zoneOf, at: (iso, chat) => localTime(iso, zoneOf(chat)) };
}
