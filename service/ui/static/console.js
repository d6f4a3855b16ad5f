// The offsetguard on-call console: plain JavaScript over the service's own HTTP API (no library, no CDN).
// Pages (hash routes): #/ overview, #/alerts/ID, #/groups/CLUSTER/GROUP, #/reset/CLUSTER/GROUP.
// Every value from the API is put in the page as text (textContent), never as markup.
"use strict";

const TOKEN_KEY = "offsetguard.token";
const PAGE_SIZE = 50;
const WINDOWS = { "1 h": 3600, "6 h": 6 * 3600, "24 h": 86400, "7 d": 7 * 86400 };
const SVG = "http://www.w3.org/2000/svg";

// ------------------------------------------------------------------ helpers

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

const token = () => sessionStorage.getItem(TOKEN_KEY) || "";
const enc = encodeURIComponent;
const num = (v) => (v === null || v === undefined ? "–" : Number(v).toLocaleString("en-US"));
// A magnitude ending in _max is an upper bound (alerts.skip): "at most", never a count.
const bound = (k) => (k.endsWith("_max") ? `${k} (at most)` : k);
const when = (t) => (t ? new Date(t * 1000).toISOString().replace("T", " ").slice(0, 19) + "Z" : "–");
const secs = (v) => (v === null || v === undefined ? "–" : `${Number(v).toFixed(1)} s`);

class ApiError extends Error {
  constructor(status, body) {
    super((body && body.message) || `HTTP ${status}`);
    this.status = status;
    this.code = body && body.error;
  }
}

async function request(path, { method = "GET", body, accept = "application/json" } = {}) {
  const headers = { Accept: accept };
  if (token()) headers.Authorization = `Bearer ${token()}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  let parsed = text;
  if ((response.headers.get("content-type") || "").includes("json")) parsed = text ? JSON.parse(text) : null;
  if (!response.ok && !(path === "/readyz" && response.status === 503)) throw new ApiError(response.status, parsed);
  return parsed;
}

const api = (path, options) => request(path, options);

function failure(err) {
  const hint = err.status === 401 ? " — enter a token above" : err.status === 403 ? " — this token lacks the scope" : "";
  return el("p", { class: "error", role: "alert" }, `${err.message}${hint}`);
}

function severity(s) {
  return el("span", { class: `badge sev-${s}` }, s);
}

function table(headers, rows, numeric = []) {
  return el(
    "table",
    {},
    el("thead", {}, el("tr", {}, headers.map((h, i) => el("th", { class: numeric.includes(i) ? "num" : null }, h)))),
    el("tbody", {}, rows.map((r) => el("tr", {}, r.map((c, i) => el("td", { class: numeric.includes(i) ? "num" : null }, c))))),
  );
}

function kv(entries) {
  return el("dl", { class: "kv" }, entries.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
}

const show = (v) => (v !== null && typeof v === "object" ? JSON.stringify(v) : v === null ? "–" : String(v));
const groupLink = (cluster, group) => el("a", { href: `#/groups/${enc(cluster)}/${enc(group)}` }, group);
const alertLink = (a) => el("a", { href: `#/alerts/${enc(a.id)}` }, a.summary);

function where(a) {
  const out = [a.cluster];
  if (a.group) out.push(" / ", groupLink(a.cluster, a.group));
  if (a.topic) out.push(` / ${a.topic}${a.partition === null ? "" : `[${a.partition}]`}`);
  return el("span", {}, out);
}

async function download(path, filename) {
  const response = await fetch(path, { headers: token() ? { Authorization: `Bearer ${token()}` } : {} });
  if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => null));
  const url = URL.createObjectURL(await response.blob());
  const a = el("a", { href: url, download: filename });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

// ------------------------------------------------------------------ overview

async function overview(page) {
  page.replaceChildren(el("h1", {}, "Overview"));
  const clustersAsked = api("/api/v1/clusters");
  const groupsBuilt = clustersAsked.then((c) => (c.clusters.length ? groupsSection(c.clusters.map((x) => x.name)) : null));
  const [clusters, ready, firing, groups] = await Promise.all([clustersAsked, api("/readyz"), firingSection(), groupsBuilt]);
  const counts = { critical: 0, warning: 0, info: 0 };
  for (const c of clusters.clusters) for (const [s, n] of Object.entries(c.firing_by_severity || {})) counts[s] = (counts[s] || 0) + n;
  firing.querySelector("h2").after(el("div", { class: "counts" }, Object.entries(counts).map(([s, n]) => el("div", { class: "count", "data-severity": s }, el("b", {}, num(n)), s))));
  page.append(
    firing,
    el(
      "section",
      { id: "clusters" },
      el("h2", {}, "Clusters"),
      table(
        ["cluster", "brokers", "topics", "controller", "firing", "metadata seen"],
        clusters.clusters.map((c) => [c.name, num(c.brokers), num(c.topics), show(c.controller_id), num(c.firing_alerts), when(c.metadata_observed_at)]),
        [1, 2, 4],
      ),
    ),
    el(
      "section",
      { id: "health" },
      el("h2", {}, "Collectors and tail ", ready.ready ? el("span", { class: "ok" }, "ready") : el("span", { class: "error" }, "not ready")),
      ready.reasons.length ? el("p", { class: "error" }, ready.reasons.join(", ")) : null,
      table(
        ["cluster", "collector", "every", "last success", "failures", "last error"],
        ready.collectors.map((c) => [c.cluster, c.name, secs(c.interval_seconds), when(c.last_success_at), num(c.failures), c.last_error || ""]),
        [4],
      ),
      table(
        ["cluster", "tail", "caught up", "events", "decode errors", "last error"],
        ready.tail.map((t) => [t.cluster, t.state, t.caught_up ? "yes" : "no", num(t.events_total), num(t.decode_errors), t.last_error || ""]),
        [3, 4],
      ),
    ),
    groups || "",
  );
}

async function firingSection() {
  // the newest firing alerts, PAGE_SIZE at a time ("more" appends the next page)
  const rows = el("tbody");
  const more = el("button", { type: "button", id: "firing-more" }, "more");
  let cursor = null;
  const load = async () => {
    const q = new URLSearchParams({ status: "firing", limit: PAGE_SIZE });
    if (cursor) q.set("cursor", cursor);
    const page = await api(`/api/v1/alerts?${q}`);
    cursor = page.next_cursor;
    more.hidden = !cursor;
    rows.append(
      ...page.alerts.map((a) =>
        el("tr", {}, [
          el("td", {}, severity(a.severity), a.drill ? el("span", { class: "badge drill" }, "drill") : null),
          el("td", {}, a.kind),
          el("td", {}, where(a)),
          el("td", {}, alertLink(a)),
          el("td", {}, when(a.started_at)),
        ]),
      ),
    );
  };
  more.addEventListener("click", () => load().catch((err) => more.replaceWith(failure(err))));
  await load();
  const list = el("table", {}, el("thead", {}, el("tr", {}, ["severity", "kind", "where", "summary", "since"].map((h) => el("th", {}, h)))), rows);
  return el("section", { id: "firing" }, el("h2", {}, "Firing alerts"), rows.children.length ? list : el("p", { class: "muted" }, "nothing firing"), more);
}

async function groupsSection(clusters) {
  const state = { cluster: clusters[0], search: "", cursors: [null] };
  const body = el("div");
  const pick = el("select", { "aria-label": "cluster" }, clusters.map((c) => el("option", { value: c }, c)));
  const search = el("input", { type: "search", placeholder: "search groups", "aria-label": "search groups" });
  const prev = el("button", { type: "button" }, "previous");
  const next = el("button", { type: "button" }, "next");
  const load = async () => {
    const started = performance.now();
    const cursor = state.cursors[state.cursors.length - 1];
    const q = new URLSearchParams({ limit: PAGE_SIZE });
    if (cursor) q.set("cursor", cursor);
    if (state.search) q.set("search", state.search);
    try {
      const page = await api(`/api/v1/clusters/${enc(state.cluster)}/groups?${q}`);
      state.next = page.next_cursor;
      prev.disabled = state.cursors.length === 1;
      next.disabled = !page.next_cursor;
      body.replaceChildren(
        table(
          ["group", "state", "members", "lag", "lag seconds", "worst firing alert"],
          page.groups.map((g) => [
            groupLink(state.cluster, g.group),
            g.state || "–",
            num(g.members),
            num(g.lag.total_lag),
            secs(g.lag.max_lag_seconds),
            g.worst_alert ? el("span", {}, severity(g.worst_alert.severity), " ", el("a", { href: `#/alerts/${enc(g.worst_alert.id)}` }, g.worst_alert.kind)) : "",
          ]),
          [2, 3, 4],
        ),
        page.groups.length ? "" : el("p", { class: "muted" }, "no group matches"),
      );
    } catch (err) {
      body.replaceChildren(failure(err));
    }
    section.dataset.tookMs = (performance.now() - started).toFixed(1);  // a search: after its debounce
    section.dataset.loads = String(Number(section.dataset.loads || 0) + 1);
  };
  let typing;
  search.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      state.search = search.value.trim();
      state.cursors = [null];
      load();
    }, 250);
  });
  pick.addEventListener("change", () => {
    state.cluster = pick.value;
    state.cursors = [null];
    load();
  });
  prev.addEventListener("click", () => {
    state.cursors.pop();
    load();
  });
  next.addEventListener("click", () => {
    state.cursors.push(state.next);
    load();
  });
  const section = el("section", { id: "groups" }, el("h2", {}, "Groups"), el("div", { class: "toolbar" }, pick, search, prev, next), body);
  await load();
  return section;
}

// ------------------------------------------------------------------ one alert

async function alertPage(page, id) {
  const a = await api(`/api/v1/alerts/${enc(id)}`);
  page.replaceChildren(
    el("h1", {}, severity(a.severity), " ", a.kind, " ", el("span", { class: "muted" }, a.status), a.drill ? el("span", { class: "badge drill" }, "drill") : null),
    el(
      "section",
      { id: "summary" },
      el("p", {}, a.summary),
      kv([
        ["where", where(a)],
        ["cause", a.cause || "–"],
        ["started", when(a.started_at)],
        ["updated", when(a.updated_at)],
        ["resolved", a.resolved_at ? `${when(a.resolved_at)} (${a.resolved_reason})` : "–"],
        ["occurrences", num(a.occurrences)],
        ["acknowledged", a.ack ? `${when(a.ack.at)} by ${a.ack.by || "?"}: ${a.ack.comment || ""}` : "no"],
        ["runbook", /^https?:\/\//.test(a.runbook_url) ? el("a", { href: a.runbook_url, target: "_blank", rel: "noopener" }, a.runbook_url) : a.runbook_url],
        ["snapshot", a.snapshot_id ? el("button", { type: "button", id: "snapshot", onclick: () => download(`/api/v1/snapshots/${enc(a.snapshot_id)}/download`, `${a.snapshot_id}.tar.gz`).catch((e) => alert(e.message)) }, `download ${a.snapshot_id}`) : "none"],
      ]),
    ),
    el("section", { id: "magnitude" }, el("h2", {}, "Magnitude"), table(["", "this occurrence", "total"], Object.keys(a.magnitude).map((k) => [bound(k), num(a.magnitude[k]), num(a.magnitude_total[k])]), [1, 2])),
    el("section", { id: "evidence" }, el("h2", {}, "Evidence"), kv(Object.entries(a.evidence).map(([k, v]) => [k, show(v)]))),
    el("section", { id: "transitions" }, el("h2", {}, "History"), table(["at", "transition", "severity", "cause", "detail"], a.transitions.map((t) => [when(t.at), t.transition, t.severity, t.cause || "", show(t.detail)]))),
    el("section", { id: "notifications" }, el("h2", {}, "Notifications"), a.notifications.length ? table(["receiver", "event", "state", "attempts", "delivered", "last error"], a.notifications.map((n) => [n.receiver, n.event, n.state, num(n.attempts), when(n.delivered_at), n.last_error || ""])) : el("p", { class: "muted" }, "none")),
    actions(a),
  );
}

function actions(a) {
  const result = el("div", { id: "action-result" });
  const done = (what) => () => {
    result.replaceChildren(el("p", { class: "ok" }, what));
    setTimeout(route, 600);
  };
  const refused = (err) => result.replaceChildren(failure(err));
  const ackComment = el("input", { id: "ack-comment", placeholder: "comment", size: 40 });
  const ack = el("form", { id: "ack-form" }, el("label", {}, "acknowledge ", ackComment), el("button", { type: "submit" }, "ack"));
  ack.addEventListener("submit", (e) => {
    e.preventDefault();
    api(`/api/v1/alerts/${enc(a.id)}/ack`, { method: "POST", body: { comment: ackComment.value } }).then(done("acknowledged"), refused);
  });
  const hours = el("input", { id: "silence-hours", type: "number", min: "0.25", step: "0.25", value: "2", size: 4 });
  const comment = el("input", { id: "silence-comment", placeholder: "why", size: 30 });
  const silence = el("form", { id: "silence-form" }, el("label", {}, "silence this kind on ", a.group ? "this group" : a.topic ? "this topic" : "this cluster", " for ", hours, " h "), comment, el("button", { type: "submit" }, "silence"));
  silence.addEventListener("submit", (e) => {
    e.preventDefault();
    const matchers = [{ name: "kind", value: a.kind }, { name: "cluster", value: a.cluster }];
    if (a.group) matchers.push({ name: "group", value: a.group });
    else if (a.topic) matchers.push({ name: "topic", value: a.topic });
    const body = { matchers, ends_at: Date.now() / 1000 + Number(hours.value) * 3600, comment: comment.value || `silenced from the console: ${a.id}` };
    api("/api/v1/silences", { method: "POST", body }).then(done("silenced"), refused);
  });
  return el("section", { id: "actions" }, el("h2", {}, "Act (a write token)"), a.status === "firing" ? ack : el("p", { class: "muted" }, "resolved"), silence, result);
}

// ------------------------------------------------------------------ one group

async function groupPage(page, cluster, group) {
  const base = `/api/v1/clusters/${enc(cluster)}/groups/${enc(group)}`;
  const g = await api(base);
  page.replaceChildren(
    el("h1", {}, group, " ", el("span", { class: "muted" }, `${cluster} · ${g.state || "state unknown"}`)),
    el(
      "section",
      { id: "group-state" },
      kv([
        ["type", `${g.type || "–"} ${g.protocol || ""}`],
        ["coordinator", show(g.coordinator)],
        ["members", num(g.members.length)],
        ["lag", `${num(g.lag.total_lag)} messages, up to ${secs(g.lag.max_lag_seconds)}`],
        ["observed", when(g.observed_at)],
        ["reset plan", el("a", { href: `#/reset/${enc(cluster)}/${enc(group)}` }, "preview a reset to an earlier time")],
      ]),
    ),
    el("section", { id: "timeline" }, el("h2", {}, "Timeline"), el("p", { class: "muted" }, "loading…")),
    el("section", { id: "partitions" }, el("h2", {}, "Partitions"), table(["topic", "partition", "committed", "log start", "log end", "lag", "lag seconds", "last commit", "member"], g.partitions.map((p) => [p.topic, p.partition, num(p.committed_offset), num(p.log_start), num(p.log_end), num(p.lag), secs(p.lag_seconds), when(p.last_commit_at), p.member_id || ""]), [1, 2, 3, 4, 5, 6])),
    el("section", { id: "members" }, el("h2", {}, "Members"), g.members.length ? table(["member", "client", "host", "assignment"], g.members.map((m) => [m.member_id, m.client_id, m.host, m.assignment.map((tp) => `${tp.topic}[${tp.partition}]`).join(", ")])) : el("p", { class: "muted" }, "none")),
  );
  await timeline(page.querySelector("#timeline"), base, cluster, group, g.partitions);
}

async function timeline(section, base, cluster, group, partitions) {
  const pick = el("select", { "aria-label": "partition" }, partitions.map((p, i) => el("option", { value: i }, `${p.topic}[${p.partition}]`)));
  const span = el("select", { "aria-label": "window" }, Object.keys(WINDOWS).map((w) => el("option", { value: WINDOWS[w], selected: w === "1 h" }, w)));
  const chart = el("div", { class: "chart" });
  const draw = async () => {
    const p = partitions[Number(pick.value)];
    if (!p) {
      chart.replaceChildren(el("p", { class: "muted" }, "no committed partition"));
      return;
    }
    const now = Date.now() / 1000;
    const since = now - Number(span.value);
    const q = new URLSearchParams({ topic: p.topic, partition: p.partition, since: since.toFixed(3) });
    try {
      const [history, ofGroup, ofTopic] = await Promise.all([
        api(`${base}/history?${q}`),
        api(`/api/v1/alerts?${new URLSearchParams({ cluster, group, limit: 500 })}`),
        api(`/api/v1/alerts?${new URLSearchParams({ cluster, topic: p.topic, limit: 500 })}`),
      ]);
      const seen = new Set();
      const incidents = [...ofGroup.alerts, ...ofTopic.alerts].filter((a) => {
        const mine = (a.topic === null || a.topic === p.topic) && (a.partition === null || a.partition === p.partition) && (a.group === null || a.group === group);
        const fresh = !seen.has(a.id) && a.started_at >= since;
        seen.add(a.id);
        return mine && fresh;
      });
      const [series] = history.partitions.filter((s) => s.topic === p.topic && s.partition === p.partition);
      chart.replaceChildren(plot(series || { committed: [], log: [] }, incidents, since, now));
    } catch (err) {
      chart.replaceChildren(failure(err));
    }
  };
  pick.addEventListener("change", draw);
  span.addEventListener("change", draw);
  section.replaceChildren(
    el("h2", {}, "Timeline: committed offset against the log start and end"),
    el("div", { class: "toolbar" }, pick, span),
    el("div", { class: "legend" }, [["committed", "committed"], ["log end", "log-end"], ["log start", "log-start"], ["incident", "incident"]].map(([n, c]) => el("span", {}, el("i", { class: c }), n))),
    chart,
  );
  await draw();
}

function steps(points, value, since, now) {
  // a step line from the value in force at ``since`` to ``now`` (null values break it)
  const out = [];
  let current = null;
  for (const pt of points) {
    const v = value(pt);
    const t = Math.max(pt.at, since);
    if (current !== null) out.push([t, current]);
    out.push([t, v]);
    current = v;
  }
  if (current !== null) out.push([now, current]);
  return out;
}

function plot(series, incidents, since, now) {
  const W = 1000, H = 300, L = 70, R = 10, T = 10, B = 28;
  const lines = {
    "log-end": steps(series.log, (p) => p.log_end, since, now),
    "log-start": steps(series.log, (p) => p.log_start, since, now),
    committed: steps(series.committed, (p) => p.offset, since, now),
  };
  const values = Object.values(lines).flat().map(([, v]) => v).filter((v) => v !== null);
  if (!values.length) return el("p", { class: "muted" }, "no history in this window");
  let lo = Math.min(...values), hi = Math.max(...values);
  if (hi === lo) hi = lo + 1;
  const pad = (hi - lo) * 0.05;
  lo = Math.max(0, lo - pad);
  hi += pad;
  // the axis starts shortly before the first change in the window (a young group is not a sliver)
  const first = Math.min(...[...series.log, ...series.committed].map((p) => p.at), ...incidents.map((a) => a.started_at));
  since = Math.max(since, first - Math.max(5, (now - first) * 0.1));
  const x = (t) => L + ((Math.max(t, since) - since) / (now - since)) * (W - L - R);
  const y = (v) => T + (1 - (v - lo) / (hi - lo)) * (H - T - B);
  const chart = svg("svg", { class: "timeline", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "timeline" });
  chart.append(svg("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B }), svg("line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B }));
  for (const v of [lo, (lo + hi) / 2, hi]) chart.append(svg("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end" }, num(Math.round(v))));
  for (const t of [since, (since + now) / 2, now]) chart.append(svg("text", { x: x(t), y: H - 8, "text-anchor": "middle" }, when(t).slice(11, 19)));
  for (const [name, pts] of Object.entries(lines)) {
    let d = "";
    let pen = "M";
    for (const [t, v] of pts) {
      if (v === null) {
        pen = "M";
        continue;
      }
      d += `${pen}${x(t).toFixed(1)},${y(v).toFixed(1)} `;
      pen = "L";
    }
    if (d) chart.append(svg("path", { class: name, d }));
  }
  for (const a of incidents) {
    const g = svg("g", { class: "incident", "data-alert-id": a.id, "data-kind": a.kind });
    g.append(svg("line", { x1: x(a.started_at), y1: T, x2: x(a.started_at), y2: H - B }), svg("circle", { cx: x(a.started_at), cy: T + 6, r: 6 }), svg("text", { x: x(a.started_at) + 9, y: T + 10 }, a.kind), svg("title", {}, `${a.severity} ${a.kind}: ${a.summary}`));
    g.addEventListener("click", () => (location.hash = `#/alerts/${enc(a.id)}`));
    chart.append(g);
  }
  return chart;
}

// ------------------------------------------------------------------ reset-plan preview

async function resetPage(page, cluster, group) {
  const base = `/api/v1/clusters/${enc(cluster)}/groups/${enc(group)}/reset-plan`;
  const at = el("input", { id: "reset-time", size: 28, value: new Date(Date.now() - 3600_000).toISOString().slice(0, 19) + "Z" });
  const out = el("div", { id: "reset-result" });
  const form = el("form", { id: "reset-form" }, el("label", {}, "the offsets committed at ", at), el("button", { type: "submit" }, "preview"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const q = new URLSearchParams({ time: at.value.trim(), format: "annotated" });
    try {
      const text = await request(`${base}?${q}`, { accept: "text/csv" });
      q.set("format", "kafka");
      const file = `${group}-reset-${at.value.trim().replace(/[^0-9A-Za-z]/g, "")}.csv`;
      out.replaceChildren(
        el("pre", { id: "reset-plan" }, text),
        el("button", { type: "button", id: "reset-download", onclick: () => download(`${base}?${q}`, file).catch((err) => out.append(failure(err))) }, "download CSV (kafka-consumer-groups --from-file)"),
      );
    } catch (err) {
      out.replaceChildren(failure(err));
    }
  });
  page.replaceChildren(el("h1", {}, "Reset plan: ", groupLink(cluster, group)), el("section", {}, el("p", { class: "muted" }, "Restore what the group had committed at a time (RFC 3339 or epoch seconds). Nothing is changed on the cluster: the plan is a file for kafka-consumer-groups."), form, out));
}

// ------------------------------------------------------------------ routing

let routed = false;

async function route() {
  // how long the page took to be drawn (every API call answered and rendered), in data-took-ms: from
  // the navigation for the first page, from the route change after that (bench/console reads it)
  const started = routed ? performance.now() : 0;
  routed = true;
  const page = document.getElementById("page");
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  try {
    if (parts[0] === "alerts" && parts[1]) await alertPage(page, parts[1]);
    else if (parts[0] === "groups" && parts.length === 3) await groupPage(page, parts[1], parts[2]);
    else if (parts[0] === "reset" && parts.length === 3) await resetPage(page, parts[1], parts[2]);
    else await overview(page);
  } catch (err) {
    page.replaceChildren(failure(err));
  }
  document.body.dataset.tookMs = (performance.now() - started).toFixed(1);
  document.body.dataset.ready = "true";
}

function tokenBar() {
  const input = document.getElementById("token");
  const state = document.getElementById("token-state");
  const showState = () => (state.textContent = token() ? "token set" : "no token");
  document.getElementById("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, input.value.trim());
    input.value = "";
    showState();
    route();
  });
  document.getElementById("token-forget").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    showState();
    route();
  });
  showState();
}

window.addEventListener("hashchange", () => {
  document.body.dataset.ready = "false";
  route();
});
tokenBar();
route();
