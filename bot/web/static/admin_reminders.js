// The dashboard's Reminders and Deliveries: each action says next to its control why it
// did not work, and only the actions that can work are offered.
import { api, attempt, element } from "./api.js";
import { field, table, why, zones } from "./admin_common.js";

const enc = encodeURIComponent;
const ENDED = ["done", "cancelled"];

// "Next": when it fires, or, for one that will not, what it is (paused, done, cancelled);
// a state this page does not know yet is shown as the bot says it.
function next(r, at) {
  if (!r.next_fire_at || ENDED.includes(r.status) || r.status === "paused") return r.status;
  const time = at(r.next_fire_at, r.chat_id);
  return r.status === "active" ? time : `${time} (${r.status})`;
}

function button(text, label, onclick, extra = {}) {
  return element("button", { type: "button", text, "aria-label": label, onclick, ...extra });
}

function actions(r, refresh, edit) {
  if (ENDED.includes(r.status)) return "";  // nothing applies to one that ended
  const base = `/v1/chats/${enc(r.chat_id)}/reminders/${r.id}`;
  const name = `reminder #${r.short_id} in ${r.chat_id}`;
  const out = why();
  const run = (busy, call) => async () => { if (await attempt(out, call, busy)) refresh(); };
  const offered = [button("Edit", `Edit ${name}`, () => edit(r))];
  if (r.status === "paused") {
    offered.push(button("Resume", `Resume ${name}`, run("Resuming…", () => api("POST", `${base}/resume`))));
  } else if (r.type !== "once") {  // a one-time reminder cannot be paused: cancel or edit it
    offered.push(button("Pause", `Pause ${name}`, run("Pausing…", () => api("POST", `${base}/pause`))));
  }
  offered.push(button("Delete", `Delete ${name}`, async () => {
    if (!confirm(`Delete reminder #${r.short_id} in ${r.chat_id} (“${r.content}”)?`)) return;
    await run("Deleting…", () => api("DELETE", base))();
  }, { class: "danger" }));
  return element("span", { class: "actions" }, ...offered, out);
}

export async function showReminders(view, params, go) {
  const { chats, at } = await zones();
  const known = new Set(chats.map((c) => c.chat_id));
  const chatFilter = element("select", { id: "filter-chat" },
    element("option", { value: "", text: "All chats" }),
    ...chats.map((c) => element("option", { value: c.chat_id, text: c.chat_id })));
  const statusFilter = element("select", { id: "filter-status" },
    ...["", "active", "paused", "done", "cancelled"].map((s) => element("option", { value: s, text: s || "Any status" })));
  chatFilter.value = params.get("chat") || "";
  statusFilter.value = params.get("status") || "";
  const refresh = () => go("reminders", { chat: chatFilter.value, status: statusFilter.value });
  chatFilter.addEventListener("change", refresh);
  statusFilter.addEventListener("change", refresh);
  const query = new URLSearchParams();
  if (chatFilter.value) query.set("chat_id", chatFilter.value);
  if (statusFilter.value) query.set("status", statusFilter.value);
  const reminders = await api("GET", `/v1/reminders?${query}`);

  const editor = element("div", { id: "editor" });
  function edit(r) {
    const newWhen = element("input", { type: "text", id: "edit-when", placeholder: r.rule });
    const newContent = element("input", { type: "text", id: "edit-content", value: r.content });
    const out = why("edit-why");
    const form = element("form", { "aria-label": `Edit reminder #${r.short_id}` },
      element("h3", { text: `Edit #${r.short_id} in ${r.chat_id}` }),
      field("New time", newWhen), field("What", newContent),
      element("button", { type: "submit", class: "primary", text: "Save" }), out);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const change = {};
      if (newWhen.value.trim()) change.when = newWhen.value.trim();
      if (newContent.value.trim() && newContent.value.trim() !== r.content) change.content = newContent.value.trim();
      if (!Object.keys(change).length) { out.textContent = "Nothing to change: give a new time or new words."; return; }
      if (await attempt(out, () => api("PATCH", `/v1/chats/${enc(r.chat_id)}/reminders/${r.id}`, change), "Saving…")) refresh();
    });
    editor.replaceChildren(form);
    newWhen.focus();
  }

  const rows = reminders.map((r) => {
    const last = r.last_run ? ` (last run ${at(r.last_run.at, r.chat_id)}: ${r.last_run.outcome})` : "";
    const what = r.action ? `▶ ${r.content}${last}` : r.content;
    return [r.chat_id, `#${r.short_id}`, what, r.rule, next(r, at), r.status, actions(r, refresh, edit)];
  });

  const chatInput = element("input", { type: "text", id: "new-chat", required: "", list: "known-chats", value: chatFilter.value || "" });
  const whenInput = element("input", { type: "text", id: "new-when", required: "", placeholder: "tomorrow at 9" });
  const contentInput = element("input", { type: "text", id: "new-content", required: "" });
  const out = why("create-why");
  const create = element("form", { id: "create-reminder", "aria-label": "New reminder" },
    element("h3", { text: "New reminder" }),
    element("datalist", { id: "known-chats" }, ...chats.map((c) => element("option", { value: c.chat_id }))),
    field("Chat", chatInput), field("When", whenInput), field("What", contentInput),
    element("button", { type: "submit", class: "primary", text: "Create" }), out);
  create.addEventListener("submit", async (event) => {
    event.preventDefault();
    const chat = chatInput.value.trim();
    if (!known.has(chat)) {  // a typo would make a chat nobody is in
      out.textContent = known.size
        ? `The bot knows no chat “${chat}”. Pick one of its chats: ${[...known].join(", ")}.`
        : "The bot knows no chats yet: a chat appears here once someone wrote in it.";
      out.classList.add("error");
      return;
    }
    const body = { when: whenInput.value.trim(), content: contentInput.value.trim(), created_by: "dashboard", created_by_name: "Dashboard" };
    if (await attempt(out, () => api("POST", `/v1/chats/${enc(chat)}/reminders`, body), "Creating…")) refresh();
  });
  view.append(element("h2", { text: "Reminders" }),
    element("p", {}, field("Chat", chatFilter), " ", field("Status", statusFilter)),
    element("p", { class: "hint", text: "Times are in each chat's time zone." }),
    table(["Chat", "ID", "What", "Rule", "Next", "Status", ""], rows, "Reminders", "No reminders here yet."),
    editor, create);
}

const OUTCOMES = ["", "sent", "sent_late", "skipped_missed", "skipped_quiet", "failed", "cancelled", "pending"];
const OUTCOME_WORDS = { sent: "sent", sent_late: "sent late", skipped_missed: "skipped (missed)",
  skipped_quiet: "skipped (quiet hours)", failed: "failed", cancelled: "cancelled", pending: "pending" };

// Retry: it sends now, which can take as long as the platform does; the control counts
// the seconds meanwhile and then says what became of it.
function retryButton(d, done) {
  const out = why();
  const control = button("Retry", `Retry delivery ${d.id}`, async () => {
    control.disabled = true;
    const started = Date.now();
    const tick = () => { out.textContent = `Sending again… ${Math.round((Date.now() - started) / 1000)} s`; };
    const timer = setInterval(tick, 1000);
    let answer;
    const worked = await attempt(out, async () => { answer = await api("POST", `/v1/deliveries/${d.id}/retry`); }, "Sending again… 0 s");
    clearInterval(timer);
    control.disabled = false;
    if (!worked) return;
    if (answer.outcome !== "failed") { done(); return; }
    const failed = await api("GET", `/v1/deliveries?outcome=failed&chat_id=${enc(d.chat_id)}&limit=500`);
    const error = failed.find((f) => f.id === d.id)?.last_error;
    out.textContent = `Sending failed again${error ? `: ${error}` : "."}`;
    out.classList.add("error");
  });
  return element("span", { class: "actions" }, control, out);
}

export async function showDeliveries(view, params, go) {
  const { at } = await zones();
  const outcome = element("select", { id: "filter-outcome" },
    ...OUTCOMES.map((o) => element("option", { value: o, text: OUTCOME_WORDS[o] || "Any outcome" })));
  outcome.value = params.get("outcome") || "";
  const refresh = () => go("deliveries", { outcome: outcome.value });
  outcome.addEventListener("change", refresh);
  const rows = await api("GET", `/v1/deliveries?limit=200${outcome.value ? `&outcome=${outcome.value}` : ""}`);
  view.append(element("h2", { text: "Deliveries" }), element("p", {}, field("Outcome", outcome)), table(
    ["When due", "Chat", "Reminder", "Outcome", "Done by", "Attempts", "Error", ""],
    rows.map((d) => [at(d.occurrence, d.chat_id), d.chat_id, `#${d.short_id} ${d.content}`,
      (OUTCOME_WORDS[d.outcome] || d.outcome) + (d.late ? " (late)" : ""),
      (d.done_by || []).join(", "),  // names as people gave them: shown as text, never HTML
      String(d.attempts), d.last_error || "", d.outcome === "failed" ? retryButton(d, refresh) : ""]),
    "Deliveries", "No deliveries yet."));
}
