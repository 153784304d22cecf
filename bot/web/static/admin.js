// The dashboard: what the bot is doing, read from (and changed through) the /v1 API.
import { api, attempt, element, localTime, withToken } from "./api.js";
import { field, table, why, zones } from "./admin_common.js";
import { showDeliveries, showReminders } from "./admin_reminders.js";

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

const enc = encodeURIComponent;

async function showChats(view) {
  const { chats, at } = await zones();
  view.append(element("h2", { text: "Chats" }), table(
    ["Chat", "Platform", "Type", "Time zone", "Messages", "Last activity", "Reminders"],
    chats.map((c) => [c.chat_id, c.platform, c.chat_type || "—", c.timezone, String(c.messages), at(c.last_activity, c.chat_id), String(c.reminders)]),
    "Chats", "No chats yet: one appears once someone writes to the bot."));
}

// What became of a run that did not do what was asked, in words.
const RUN_WORDS = { refused: "Refused", invalid: "The arguments do not fit", unknown: "No such tool",
  hidden: "Not offered in this chat", limited: "Too many calls for now", timeout: "It took too long",
  failed: "It failed on the bot's side", malformed: "The call could not be read" };

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
    let answer;
    if (!await attempt(result, async () => {
      answer = await api("POST", `/v1/tools/${enc(name.value)}/run`, { chat_id: chat.value.trim(), arguments: parsed });
    }, "Running…")) return;
    if (answer.outcome === "ok") { result.textContent = `ok: ${answer.reply ?? JSON.stringify(answer.data)}`; return; }
    const problems = (answer.issues || []).map((i) => i.problem).join(" ");
    result.textContent = `${RUN_WORDS[answer.outcome] || "Not run"}: ${problems || answer.error}`;
    result.classList.add("error");
  });
  const switchChat = element("input", { type: "text", id: "switch-chat", required: "", value: "web:group" });
  const switchTool = element("select", { id: "switch-tool" }, ...tools.map((t) => element("option", { value: t.name, text: t.name })));
  const switchState = element("select", { id: "switch-state" },
    element("option", { value: "off", text: "off" }), element("option", { value: "on", text: "on" }));
  const switched = why("switch-result");
  const switchForm = element("form", { id: "switch-form", "aria-label": "Switch a tool in a chat" },
    element("h3", { text: "Switch a tool in a chat" }), field("Chat", switchChat), field("Tool", switchTool),
    field("State", switchState), element("button", { type: "submit", text: "Switch" }), switched);
  switchForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const where = switchChat.value.trim();
    let answer;
    if (!await attempt(switched, async () => {
      answer = await api("PUT", `/v1/chats/${enc(where)}/tools`, { [switchState.value]: [switchTool.value] });
    }, "Switching…")) return;
    const off = answer.off.length ? `Switched off there: ${answer.off.join(", ")}.` : "Every tool is on there.";
    switched.textContent = `${switchTool.value} is ${switchState.value} in ${where}. ${off}`;
  });
  view.append(element("h2", { text: "Tools" }), form, switchForm, ...list);
}

// How a caller proved who they were, and where the call came from, in words.
const AUTH_WORDS = { platform: "the chat platform", token: "API token", none: "no auth (insecure)", operator: "operator" };
const SOURCE_WORDS = { rest: "REST API", mcp: "MCP client", offer: "accepted offer", schedule: "scheduled action" };

// An audited call's arguments, the ones given, as "key: value" lines.
function argumentsOf(args) {
  return Object.entries(args || {}).filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`).join("\n");
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
  const [page, { at }] = await Promise.all([api("GET", `/v1/audit?${query}`), zones()]);
  const older = page.next_before
    ? element("button", { type: "button", text: "Older", onclick: () => go("audit", { chat_id: chat.value.trim(), tool: tool.value.trim(), before: String(page.next_before) }) })
    : "";
  view.append(element("h2", { text: "Audit" }), filter,
    element("p", { class: "hint", text: "Times are in each chat's time zone." }), table(
      ["When", "Chat", "Who", "How", "From", "Tool", "Arguments", "Outcome", "Touched"],
      page.entries.map((e) => [at(e.at, e.chat_id), e.chat_id, e.sender_name ? `${e.sender_name} (${e.sender_id})` : e.sender_id,
        AUTH_WORDS[e.auth] || e.auth, SOURCE_WORDS[e.source] || e.source, e.tool, argumentsOf(e.arguments),
        e.outcome + (e.detail ? `: ${e.detail}` : ""), e.target_label || ""]),
      "Audit log", "Nothing audited yet."), older);
}

async function showActivity(view) {
  const [activity, { at }] = await Promise.all([api("GET", "/v1/activity?limit=100"), zones()]);
  view.append(element("h2", { text: "Model activity" }), element("h3", { text: "Totals per day" }), table(
    ["Day (UTC)", "Turns", "Tool calls", "LLM calls", "Prompt tokens", "Completion tokens"],
    activity.days.map((d) => [d.day, String(d.turns), String(d.tool_calls), String(d.llm_calls), String(d.prompt_tokens), String(d.completion_tokens)]),
    "Totals per day", "No model turns yet."));
  view.append(element("h3", { text: "The newest turns" }));
  view.append(table(["When", "Chat", "Asked", "Tools offered (why)", "Tool calls", "Repairs", "Latency", "Tokens", "Reply"],
    activity.turns.map((t) => [at(t.at, t.chat_id), t.chat_id, t.question,
      t.offered.length
        ? element("ul", { class: "plain" }, ...t.offered.map((o) => element("li", { text: `${o.tool}: ${o.why}` })))
        : "none (no tool needed)",
      element("ul", { class: "plain" }, ...t.calls.map((c) => element("li", { text: `${c.name}(${JSON.stringify(c.arguments)}) → ${c.outcome}${c.detail ? `: ${c.detail}` : ""}` }))),
      String(t.repairs), `${t.latency_ms} ms`, `${t.prompt_tokens} + ${t.completion_tokens}${t.estimated ? " (est.)" : ""}`,
      t.error ? `error: ${t.error}` : t.reply]),
    "Model turns", "No model turns yet."));
}

async function showUsage(view) {
  const usage = await api("GET", "/v1/usage?days=14");
  const budget = (tokens) => (tokens == null ? "no limit" : `${tokens.toLocaleString("en")} tokens`);
  view.append(element("h2", { text: "Usage" }), element("p", { id: "budgets", text:
    `Budgets: per chat per day, ${budget(usage.tokens_per_chat_per_day)}; for all chats per day, ${budget(usage.tokens_per_day)}.` }));
  view.append(table(["Day (UTC)", "Tokens", "Requests", "Chats"], usage.days.map((d) => [d.day, String(d.tokens), String(d.requests),
    d.chats.map((c) => `${c.chat_id}: ${c.tokens}`).join(", ")]), "Tokens per day", "No tokens spent yet."));
  view.append(element("h3", { text: "Chats that spend most" }),
    table(["Chat", "Tokens"], usage.top_chats.map((c) => [c.chat_id, String(c.tokens)]), "Top chats", "No tokens spent yet."));
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
  const [status, { info }] = await Promise.all([api("GET", "/v1/status"), zones()]);
  const scheduler = status.scheduler;
  view.append(element("h2", { text: "Status" }), element("pre", { text: status.lines.join("\n") }),
    element("h3", { text: "Scheduler" }), table(["Measure", "Value"], [
      ["Running here", scheduler.running ? "yes" : "no"], ["Timers planned", String(scheduler.planned_timers)],
      ["Next reminder", scheduler.next_fire_at ? `${localTime(scheduler.next_fire_at, info.timezone)} (${info.timezone})` : "none planned"], ["Watchdog every", `${scheduler.watchdog_interval_s} s`],
      ["Pending deliveries", String(scheduler.pending_deliveries)], ["Overdue reminders", String(scheduler.overdue_reminders)],
      ["Failed deliveries", String(scheduler.failed_deliveries)]], "Scheduler"),
    element("h3", { text: "Waiting reminders" }), table(["Platform", "Chats", "Reminders", "Due since", "What to do"],
      status.waiting.map((w) => [w.platform, w.chats.join(", "), String(w.reminders), `${localTime(w.due_since, info.timezone)} (${info.timezone})`, w.advice]),
      "Waiting reminders", "None: every due reminder has a process that delivers it."),
    element("h3", { text: "Adapters" }), table(["Adapter", "State", "Last error", "Details"],
      Object.entries(status.adapters).map(([n, s]) => [n, adapterState(s), s.last_error ?? "", adapterDetails(s)]), "Adapters", "No chat platforms configured."),
    element("h3", { text: "MCP servers" }), table(["Server", "State", "Tools", "Restarts"],
      status.mcp_servers.map((s) => [s.name, s.state, String(s.tools), String(s.restarts)]), "MCP servers", "No MCP servers configured."),
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
      await show(view, new URLSearchParams(query || ""), go);
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
