// The dashboard: what the bot is doing, read from (and changed through) the /v1 API.
import { api, element, localTime, withToken } from "./api.js";

const $ = (id) => document.getElementById(id);
const SECTIONS = {
  chats: ["Chats", showChats],
  reminders: ["Reminders", showReminders],
  deliveries: ["Deliveries", showDeliveries],
  tools: ["Tools", showTools],
  activity: ["Model activity", showActivity],
  audit: ["Audit", showAudit],
  usage: ["Usage", showUsage],
  status: ["Status", showStatus],
};

function table(headers, rows, caption) {
  const head = element("tr", {}, ...headers.map((h) => element("th", { scope: "col", text: h })));
  const body = rows.map((cells) => element("tr", {}, ...cells.map((c) =>
    element("td", {}, c instanceof Node ? c : document.createTextNode(c ?? "")))));
  return element("table", {}, element("caption", { class: "visually-hidden", text: caption }),
    element("thead", {}, head), element("tbody", {}, ...body));
}

const when = (iso) => (iso ? new Date(iso).toLocaleString() : "—");
const field = (label, input) => element("label", {}, `${label} `, input);
const enc = encodeURIComponent;

async function showChats(view) {
  const chats = await api("GET", "/v1/chats");
  view.append(element("h2", { text: "Chats" }), table(
    ["Chat", "Platform", "Type", "Time zone", "Messages", "Last activity", "Reminders"],
    chats.map((c) => [c.chat_id, c.platform, c.chat_type || "—", c.timezone, String(c.messages), when(c.last_activity), String(c.reminders)]),
    "Chats",
  ));
}

async function showReminders(view, params) {
  const chats = await api("GET", "/v1/chats");
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

  const rows = reminders.map((r) => {
    const base = `/v1/chats/${enc(r.chat_id)}/reminders/${r.id}`;
    const actions = element("span", {},
      element("button", { type: "button", text: "Edit", "aria-label": `Edit reminder #${r.short_id} in ${r.chat_id}`, onclick: () => editForm(r) }),
      element("button", { type: "button", text: r.status === "paused" ? "Resume" : "Pause",
        "aria-label": `${r.status === "paused" ? "Resume" : "Pause"} reminder #${r.short_id} in ${r.chat_id}`,
        onclick: async () => { await api("POST", `${base}/${r.status === "paused" ? "resume" : "pause"}`); refresh(); } }),
      element("button", { type: "button", class: "danger", text: "Delete", "aria-label": `Delete reminder #${r.short_id} in ${r.chat_id}`,
        onclick: async () => { await api("DELETE", base); refresh(); } }));
    const live = r.status === "active" || r.status === "paused";
    const last = r.last_run ? ` (last run ${when(r.last_run.at)}: ${r.last_run.outcome})` : "";
    const what = r.action ? `▶ ${r.content}${last}` : r.content;
    return [r.chat_id, `#${r.short_id}`, what, r.rule, localTime(r.next_fire_at, r.timezone), r.status, live ? actions : ""];
  });

  const chatInput = element("input", { type: "text", id: "new-chat", required: "", value: chatFilter.value || "" });
  const whenInput = element("input", { type: "text", id: "new-when", required: "", placeholder: "tomorrow at 9" });
  const contentInput = element("input", { type: "text", id: "new-content", required: "" });
  const create = element("form", { id: "create-reminder", "aria-label": "New reminder" },
    element("h3", { text: "New reminder" }),
    field("Chat", chatInput), field("When", whenInput), field("What", contentInput),
    element("button", { type: "submit", class: "primary", text: "Create" }));
  create.addEventListener("submit", async (event) => {
    event.preventDefault();
    await api("POST", `/v1/chats/${enc(chatInput.value.trim())}/reminders`, {
      when: whenInput.value.trim(), content: contentInput.value.trim(), created_by: "dashboard", created_by_name: "Dashboard",
    });
    refresh();
  });
  const editor = element("div", { id: "editor" });
  function editForm(r) {
    const newWhen = element("input", { type: "text", id: "edit-when", placeholder: r.rule });
    const newContent = element("input", { type: "text", id: "edit-content", value: r.content });
    const form = element("form", { "aria-label": `Edit reminder #${r.short_id}` },
      element("h3", { text: `Edit #${r.short_id} in ${r.chat_id}` }),
      field("New time", newWhen), field("What", newContent),
      element("button", { type: "submit", class: "primary", text: "Save" }));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const change = {};
      if (newWhen.value.trim()) change.when = newWhen.value.trim();
      if (newContent.value.trim() && newContent.value.trim() !== r.content) change.content = newContent.value.trim();
      await api("PATCH", `/v1/chats/${enc(r.chat_id)}/reminders/${r.id}`, change);
      refresh();
    });
    editor.replaceChildren(form);
    newWhen.focus();
  }
  view.append(element("h2", { text: "Reminders" }),
    element("p", {}, field("Chat", chatFilter), " ", field("Status", statusFilter)),
    table(["Chat", "ID", "What", "Rule", "Next", "Status", ""], rows, "Reminders"), editor, create);
}

async function showDeliveries(view, params) {
  const outcome = element("select", { id: "filter-outcome" },
    ...["", "sent", "sent_late", "skipped_missed", "skipped_quiet", "failed", "cancelled", "pending"]
      .map((o) => element("option", { value: o, text: o || "Any outcome" })));
  outcome.value = params.get("outcome") || "";
  outcome.addEventListener("change", () => go("deliveries", { outcome: outcome.value }));
  const rows = await api("GET", `/v1/deliveries?limit=200${outcome.value ? `&outcome=${outcome.value}` : ""}`);
  view.append(element("h2", { text: "Deliveries" }), element("p", {}, field("Outcome", outcome)), table(
    ["When due", "Chat", "Reminder", "Outcome", "Attempts", "Error", ""],
    rows.map((d) => [when(d.occurrence), d.chat_id, `#${d.short_id} ${d.content}`, d.outcome + (d.late ? " (late)" : ""),
      String(d.attempts), d.last_error || "",
      d.outcome === "failed" ? element("button", { type: "button", text: "Retry", "aria-label": `Retry delivery ${d.id}`,
        onclick: async () => { await api("POST", `/v1/deliveries/${d.id}/retry`); go("deliveries", { outcome: outcome.value }); } }) : ""]),
    "Deliveries",
  ));
}

async function showTools(view) {
  const tools = await api("GET", "/v1/tools");
  const result = element("pre", { id: "run-result", "aria-live": "polite" });
  const list = tools.map((t) => element("details", {},
    element("summary", { text: `${t.name} — ${t.effect}, ${t.scope}${t.who !== "members" ? `, ${t.who}` : ""}${t.admin_only ? ", admins only" : ""}${t.source === "remote" ? ", remote" : ""}` }),
    element("p", { text: t.description }),
    element("pre", { text: JSON.stringify(t.parameters, null, 2) })));
  const name = element("select", { id: "run-tool" }, ...tools.map((t) => element("option", { value: t.name, text: t.name })));
  const chat = element("input", { type: "text", id: "run-chat", required: "", value: "web:group" });
  const args = element("textarea", { id: "run-arguments", rows: "4", text: "{}" });
  const form = element("form", { id: "run-form", "aria-label": "Run a tool" },
    element("h3", { text: "Run a tool" }), field("Tool", name), field("Chat", chat),
    field("Arguments (JSON)", args), element("button", { type: "submit", class: "primary", text: "Run" }), result);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    let parsed;
    try { parsed = JSON.parse(args.value || "{}"); } catch { result.textContent = "The arguments are not valid JSON."; return; }
    const answer = await api("POST", `/v1/tools/${enc(name.value)}/run`, { chat_id: chat.value.trim(), arguments: parsed });
    result.textContent = answer.outcome === "ok"
      ? `ok: ${answer.reply ?? JSON.stringify(answer.data)}` : `${answer.outcome}: ${answer.error}`;
  });
  const switchChat = element("input", { type: "text", id: "switch-chat", required: "", value: "web:group" });
  const switchTool = element("select", { id: "switch-tool" }, ...tools.map((t) => element("option", { value: t.name, text: t.name })));
  const switchState = element("select", { id: "switch-state" },
    element("option", { value: "off", text: "off" }), element("option", { value: "on", text: "on" }));
  const switched = element("p", { id: "switch-result", "aria-live": "polite" });
  const switchForm = element("form", { id: "switch-form", "aria-label": "Switch a tool in a chat" },
    element("h3", { text: "Switch a tool in a chat" }), field("Chat", switchChat), field("Tool", switchTool),
    field("State", switchState), element("button", { type: "submit", text: "Switch" }), switched);
  switchForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const answer = await api("PUT", `/v1/chats/${enc(switchChat.value.trim())}/tools`, { [switchState.value]: [switchTool.value] });
      switched.textContent = `Switched off there: ${answer.off.join(", ") || "none"}`;
    } catch (error) {
      switched.textContent = `Not switched: ${error.message || error}`;
    }
  });
  view.append(element("h2", { text: "Tools" }), form, switchForm, ...list);
}

async function showAudit(view, params) {
  const chat = element("input", { type: "text", id: "audit-chat", value: params.get("chat_id") || "" });
  const tool = element("input", { type: "text", id: "audit-tool", value: params.get("tool") || "" });
  const filter = element("form", { id: "audit-filter", "aria-label": "Filter the audit log" },
    field("Chat", chat), field("Tool", tool), element("button", { type: "submit", text: "Filter" }));
  filter.addEventListener("submit", (event) => {
    event.preventDefault();
    go("audit", { chat_id: chat.value.trim(), tool: tool.value.trim() });
  });
  const query = new URLSearchParams({ limit: "50" });
  for (const key of ["chat_id", "tool", "before"]) if (params.get(key)) query.set(key, params.get(key));
  const page = await api("GET", `/v1/audit?${query}`);
  const older = page.next_before
    ? element("button", { type: "button", text: "Older", onclick: () => go("audit", { chat_id: chat.value.trim(), tool: tool.value.trim(), before: String(page.next_before) }) })
    : "";
  view.append(element("h2", { text: "Audit" }), filter, table(
    ["When", "Chat", "Who", "How", "From", "Tool", "Arguments", "Outcome", "Touched"],
    page.entries.map((e) => [when(e.at), e.chat_id, e.sender_name ? `${e.sender_name} (${e.sender_id})` : e.sender_id,
      e.auth, e.source, e.tool, JSON.stringify(e.arguments), e.outcome + (e.detail ? `: ${e.detail}` : ""), e.target_label || ""]),
    "Audit log"), older);
}

async function showActivity(view) {
  const activity = await api("GET", "/v1/activity?limit=100");
  view.append(element("h2", { text: "Model activity" }), element("h3", { text: "Totals per day" }), table(
    ["Day (UTC)", "Turns", "Tool calls", "LLM calls", "Prompt tokens", "Completion tokens"],
    activity.days.map((d) => [d.day, String(d.turns), String(d.tool_calls), String(d.llm_calls), String(d.prompt_tokens), String(d.completion_tokens)]),
    "Totals per day"));
  view.append(element("h3", { text: "The newest turns" }));
  view.append(table(["When", "Chat", "Asked", "Tools offered (why)", "Tool calls", "Repairs", "Latency", "Tokens", "Reply"],
    activity.turns.map((t) => [when(t.at), t.chat_id, t.question,
      t.offered.length
        ? element("ul", { class: "plain" }, ...t.offered.map((o) => element("li", { text: `${o.tool}: ${o.why}` })))
        : "none (no tool needed)",
      element("ul", { class: "plain" }, ...t.calls.map((c) => element("li", { text: `${c.name}(${JSON.stringify(c.arguments)}) → ${c.outcome}${c.detail ? `: ${c.detail}` : ""}` }))),
      String(t.repairs), `${t.latency_ms} ms`, `${t.prompt_tokens} + ${t.completion_tokens}${t.estimated ? " (est.)" : ""}`,
      t.error ? `error: ${t.error}` : t.reply]),
    "Model turns"));
}

async function showUsage(view) {
  const usage = await api("GET", "/v1/usage?days=14");
  view.append(element("h2", { text: "Usage" }), element("p", { text:
    `Budgets: ${usage.tokens_per_chat_per_day ?? "no limit"} tokens per chat per day, ${usage.tokens_per_day ?? "no limit"} per day.` }));
  view.append(table(["Day (UTC)", "Tokens", "Requests", "Chats"], usage.days.map((d) => [d.day, String(d.tokens), String(d.requests),
    d.chats.map((c) => `${c.chat_id}: ${c.tokens}`).join(", ")]), "Tokens per day"));
  view.append(element("h3", { text: "Chats that spend most" }),
    table(["Chat", "Tokens"], usage.top_chats.map((c) => [c.chat_id, String(c.tokens)]), "Top chats"));
}

// Adapters report what their platform has; newer ones say `state` (connecting, connected,
// reconnecting, auth failed), older ones only whether they are connected.
function adapterState(s) {
  return s.state ?? (s.connected ? "connected" : "not connected");
}

function adapterDetails(s) {
  return Object.entries(s).filter(([k, v]) => !["state", "connected", "last_error"].includes(k) && v !== null)
    .map(([k, v]) => `${k}: ${typeof v === "object" ? JSON.stringify(v) : v}`).join(", ");
}

async function showStatus(view) {
  const status = await api("GET", "/v1/status");
  const scheduler = status.scheduler;
  view.append(element("h2", { text: "Status" }), element("pre", { text: status.lines.join("\n") }),
    element("h3", { text: "Scheduler" }), table(["Measure", "Value"], [
      ["Running here", scheduler.running ? "yes" : "no"], ["Timers planned", String(scheduler.planned_timers)],
      ["Next reminder", when(scheduler.next_fire_at)], ["Watchdog every", `${scheduler.watchdog_interval_s} s`],
      ["Pending deliveries", String(scheduler.pending_deliveries)], ["Overdue reminders", String(scheduler.overdue_reminders)],
      ["Failed deliveries", String(scheduler.failed_deliveries)]], "Scheduler"),
    element("h3", { text: "Waiting reminders" }), table(["Platform", "Chats", "Reminders", "Due since", "What to do"],
      status.waiting.map((w) => [w.platform, w.chats.join(", "), String(w.reminders), when(w.due_since), w.advice]), "Waiting reminders"),
    element("h3", { text: "Adapters" }), table(["Adapter", "State", "Last error", "Details"],
      Object.entries(status.adapters).map(([n, s]) => [n, adapterState(s), s.last_error ?? "", adapterDetails(s)]), "Adapters"),
    element("h3", { text: "MCP servers" }), table(["Server", "State", "Tools", "Restarts"],
      status.mcp_servers.map((s) => [s.name, s.state, String(s.tools), String(s.restarts)]), "MCP servers"),
    element("h3", { text: "Plugins" }), table(["Plugin", "State", "Version", "Tools", "Why not loaded"],
      status.plugins.map((p) => [p.builtin ? `${p.name} (built-in)` : p.name, p.state, p.version ?? "",
        p.tools.join(", "), p.error ?? ""]), "Plugins"));
}

function go(section, params = {}) {
  const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v));
  const hash = `#${section}${query.toString() ? `?${query}` : ""}`;
  if (location.hash === hash) render();  // the same view again: no hashchange comes
  else location.hash = hash;
}

async function render() {
  const [section, query] = (location.hash.slice(1) || "chats").split("?");
  const [, show] = SECTIONS[section] || SECTIONS.chats;
  for (const button of $("tabs").children) button.setAttribute("aria-current", String(button.dataset.section === section));
  const view = $("view");
  $("problem").textContent = "";
  try {
    await withToken(async () => {
      view.replaceChildren();
      await show(view, new URLSearchParams(query || ""));
      // Reminders no running process delivers wait instead of failing: said on every view.
      const waiting = await api("GET", "/v1/waiting");
      $("waiting").replaceChildren(...waiting.map((w) => element("li", { text: w.advice })));
    });
  } catch (error) {
    $("problem").textContent = String(error.message || error);
  }
}

for (const [key, [label]] of Object.entries(SECTIONS)) {
  $("tabs").append(element("button", { type: "button", text: label, "data-section": key, onclick: () => go(key) }));
}
window.addEventListener("hashchange", render);
render();
