// The A2A developer console. It reads the public agent card, then talks to the agent only
// through the interfaces the card lists (JSON-RPC or HTTP+JSON, A2A v1.0), as any client
// would. Everything the agent or its card says is shown as text, never as markup.
"use strict";

(() => {
  const TERMINAL = new Set(["completed", "failed", "canceled", "rejected"]);
  const INTERRUPTED = new Set(["input-required", "auth-required"]);
  const MAX_FRAMES = 500; // the frames log keeps the newest ones only
  const MAX_TRANSCRIPT = 200; // chat entries kept on the page
  const BINDINGS = new Set(["JSONRPC", "HTTP+JSON"]);

  const $ = (id) => document.getElementById(id);
  const state = {
    card: null,
    interfaces: [], // {binding, url (same origin), declared}
    interface: null,
    auth: null, // how the token is sent: {header, prefix} or {query}
    contextId: null,
    continueTaskId: null, // the input-required task the next message answers
    tasks: new Map(), // id -> {id, contextId, state, updated}
    selected: null, // the task shown in the task view
    following: null, // the task whose stream the task view follows
    streaming: null, // the task of the chat's reply in progress
    busy: false,
    rpcId: 0,
  };

  // --- small helpers -----------------------------------------------------------------

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "text") node.textContent = value;
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  function stateName(wire) {
    // TASK_STATE_INPUT_REQUIRED -> input-required (v1.0); tolerate v0.3's "input-required".
    if (!wire) return "unknown";
    return String(wire).replace(/^TASK_STATE_/, "").toLowerCase().replace(/_/g, "-");
  }

  function stateBadge(name, testid) {
    return el("span", { class: "state", "data-state": name, "data-testid": testid, text: name });
  }

  // The card is the agent's to write: a field may hold anything.
  function list(value) {
    return Array.isArray(value) ? value : [];
  }

  function object(value) {
    return value && typeof value === "object" && !Array.isArray(value) ? value : {};
  }

  function short(id) {
    return id ? String(id).slice(0, 8) : "";
  }

  function newId() {
    return crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random()}`;
  }

  function showError(text) {
    const box = $("error");
    box.textContent = text;
    box.hidden = !text;
  }

  function partsText(parts) {
    const out = [];
    for (const part of parts || []) {
      if (typeof part.text === "string") out.push(part.text);
      else if ("data" in part) out.push(JSON.stringify(part.data, null, 2));
      else if (part.url || part.raw !== undefined) {
        const name = part.filename || part.url || "file";
        out.push(`[file ${name}${part.mediaType ? ` (${part.mediaType})` : ""}]`);
      }
    }
    return out.join("");
  }

  class A2AError extends Error {
    constructor(message, detail) {
      super(message);
      this.detail = detail;
    }
  }

  // --- the card ----------------------------------------------------------------------

  async function loadCard() {
    const url = document.querySelector('meta[name="a2a-card-url"]').content;
    let response;
    try {
      response = await fetch(url, { headers: { Accept: "application/json" }, cache: "no-cache" });
    } catch (error) {
      throw new A2AError(`The agent card could not be fetched: ${error.message}`);
    }
    if (!response.ok) {
      throw new A2AError(`The agent card answered ${response.status} ${response.statusText}`);
    }
    const text = await response.text();
    let card;
    try {
      card = JSON.parse(text);
    } catch (error) {
      throw new A2AError("The agent card is not JSON");
    }
    if (!card || typeof card !== "object" || Array.isArray(card)) {
      throw new A2AError("The agent card is not a JSON object");
    }
    return { card, text };
  }

  // What a client would trip over, the way a conformance kit reads a v1.0 card.
  function findings(card) {
    const found = [];
    const add = (level, text) => found.push({ level, text });
    const required = {
      name: "string",
      description: "string",
      version: "string",
      supportedInterfaces: "array",
      capabilities: "object",
      defaultInputModes: "array",
      defaultOutputModes: "array",
      skills: "array",
    };
    for (const [field, kind] of Object.entries(required)) {
      const value = card[field];
      const ok = kind === "array" ? Array.isArray(value) : typeof value === kind && value !== null;
      if (value === undefined) add("error", `"${field}" is missing (required)`);
      else if (!ok) add("error", `"${field}" should be ${kind === "array" ? "an array" : `a ${kind}`}`);
      else if (kind === "string" && !value.trim()) add("error", `"${field}" is empty`);
    }
    const interfaces = Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : [];
    if (Array.isArray(card.supportedInterfaces) && !interfaces.length) {
      add("error", '"supportedInterfaces" is empty: no client can reach the agent');
    }
    interfaces.forEach((iface, i) => {
      const where = `supportedInterfaces[${i}]`;
      for (const field of ["url", "protocolBinding", "protocolVersion"]) {
        if (!iface || !iface[field]) add("error", `${where}: "${field}" is missing (required)`);
      }
      if (!iface || !iface.url) return;
      let url;
      try {
        url = new URL(iface.url);
      } catch {
        add("error", `${where}: "${iface.url}" is not an absolute URL`);
        return;
      }
      if (iface.protocolBinding && !["JSONRPC", "HTTP+JSON", "GRPC"].includes(iface.protocolBinding)) {
        add("warning", `${where}: binding "${iface.protocolBinding}" is not one the spec names`);
      }
      const local = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
      if (url.protocol === "http:" && !local) {
        add("warning", `${where}: ${iface.url} is plain HTTP; the spec asks for HTTPS in production`);
      }
      if ((url.protocol === "http:" || url.protocol === "https:") && url.origin !== location.origin) {
        add(
          "info",
          `${where}: ${url.origin} is not this page's origin (${location.origin}); the console ` +
            "calls the same path here"
        );
      }
    });
    if (interfaces.length && !interfaces.some((i) => i && i.protocolVersion === "1.0" && BINDINGS.has(i.protocolBinding))) {
      add("error", "no JSON-RPC or HTTP+JSON interface at version 1.0: the console cannot chat");
    }
    if (interfaces.length && interfaces[0] && interfaces[0].protocolVersion !== "1.0") {
      add("info", "the preferred (first) interface is not version 1.0");
    }
    const skills = Array.isArray(card.skills) ? card.skills : [];
    if (Array.isArray(card.skills) && !skills.length) add("warning", "no skills: clients cannot tell what the agent does");
    const seen = new Set();
    skills.forEach((skill, i) => {
      const where = `skills[${i}]${skill && skill.id ? ` (${skill.id})` : ""}`;
      for (const field of ["id", "name", "description"]) {
        if (!skill || typeof skill[field] !== "string" || !skill[field].trim()) {
          add("error", `${where}: "${field}" is missing or empty (required)`);
        }
      }
      if (!skill || !Array.isArray(skill.tags) || !skill.tags.length) {
        add("warning", `${where}: "tags" is empty (required, at least one)`);
      }
      if (skill && skill.id) {
        if (seen.has(skill.id)) add("error", `${where}: the id "${skill.id}" is used twice`);
        seen.add(skill.id);
      }
    });
    if (card.provider && (!card.provider.url || !card.provider.organization)) {
      add("error", '"provider" needs both "organization" and "url"');
    }
    const schemes = object(card.securitySchemes);
    for (const requirement of list(card.securityRequirements)) {
      for (const name of Object.keys(object(requirement && requirement.schemes))) {
        if (!(name in schemes)) add("error", `security requirement names "${name}", which "securitySchemes" does not declare`);
      }
    }
    const caps = object(card.capabilities);
    if (caps.streaming !== true) add("info", "streaming is off: the chat sends blocking messages");
    const modes = list(card.defaultInputModes);
    if (Array.isArray(modes) && modes.length && !modes.some((m) => m === "text/plain" || m === "text/*" || m === "*/*")) {
      add("warning", `the agent does not list text/plain among its input modes (${modes.join(", ")}); the chat sends text`);
    }
    if (Array.isArray(card.signatures) && card.signatures.length) {
      add("info", `${card.signatures.length} signature(s); the console does not verify them`);
    }
    return found;
  }

  // How the token field's value can be sent: one way per declared scheme that a page can
  // use (a header or the query; not a cookie, not mutual TLS), the first required first.
  function authPlans(card) {
    const schemes = object(card.securitySchemes);
    const names = [];
    for (const requirement of list(card.securityRequirements)) {
      for (const name of Object.keys(object(requirement && requirement.schemes))) {
        if (!names.includes(name)) names.push(name);
      }
    }
    for (const name of Object.keys(schemes)) if (!names.includes(name)) names.push(name);
    const plans = [];
    for (const name of names) {
      const scheme = object(schemes[name]);
      const key = scheme.apiKeySecurityScheme;
      const http = scheme.httpAuthSecurityScheme;
      if (key && key.location === "header") plans.push({ name, header: key.name, prefix: "", label: `${name} (${key.name} header)` });
      else if (key && key.location === "query") plans.push({ name, query: key.name, label: `${name} (?${key.name}=)` });
      else if (http && String(http.scheme).toLowerCase() === "basic") {
        plans.push({ name, header: "Authorization", prefix: "Basic ", basic: true, label: `${name} (Basic; type user:password)` });
      } else if (http || scheme.oauth2SecurityScheme || scheme.openIdConnectSecurityScheme) {
        plans.push({ name, header: "Authorization", prefix: "Bearer ", label: `${name} (Bearer token)` });
      }
    }
    return plans;
  }

  function renderCard(card, text) {
    state.card = card;
    $("card-name").textContent = card.name || "(unnamed agent)";
    document.title = `${card.name || "Agent"} · A2A console`;
    $("card-description").textContent = card.description || "";
    const facts = $("card-facts");
    facts.replaceChildren();
    const fact = (term, value) => {
      if (value === undefined || value === null || value === "") return;
      facts.append(el("dt", { text: term }), el("dd", { text: value }));
    };
    fact("Version", card.version);
    if (card.provider) fact("Provider", [card.provider.organization, card.provider.url].filter(Boolean).join(" · "));
    const caps = object(card.capabilities);
    fact("Streaming", caps.streaming ? "yes" : "no");
    fact("Push", caps.pushNotifications ? "yes" : "no");
    fact("Extended card", caps.extendedAgentCard ? "yes" : "no");
    if (Array.isArray(caps.extensions) && caps.extensions.length) {
      fact("Extensions", caps.extensions.filter((e) => e && typeof e === "object").map((e) => e.uri + (e.required ? " (required)" : "")).join(", "));
    }
    fact("Input", list(card.defaultInputModes).join(", "));
    fact("Output", list(card.defaultOutputModes).join(", "));
    fact("Documentation", card.documentationUrl);

    const findingList = $("card-findings");
    findingList.replaceChildren();
    const found = findings(card);
    if (!found.length) findingList.append(el("li", { class: "ok", text: "No findings: the card has every required field." }));
    for (const { level, text: said } of found) {
      findingList.append(el("li", { class: level, "data-level": level, text: `${level}: ${said}` }));
    }

    const skills = $("card-skills");
    skills.replaceChildren();
    for (const skill of Array.isArray(card.skills) ? card.skills : []) {
      if (!skill || typeof skill !== "object") continue;
      const tags = list(skill.tags).map((t) => el("span", { class: "tag", text: t }));
      const examples = list(skill.examples).length
        ? el("div", { class: "hint", text: `e.g. ${list(skill.examples).join(" · ")}` })
        : null;
      skills.append(el("li", {}, el("strong", { text: skill.name || skill.id }), " ", ...tags,
        el("div", { text: skill.description || "" }), examples));
    }
    if (!skills.children.length) skills.append(el("li", { class: "hint", text: "none" }));

    const interfaceList = $("card-interfaces");
    interfaceList.replaceChildren();
    for (const iface of Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : []) {
      if (!iface || typeof iface !== "object") continue;
      interfaceList.append(el("li", { text: `${iface.protocolBinding} ${iface.protocolVersion || "?"} · ${iface.url}` }));
    }

    const security = $("card-security");
    security.replaceChildren();
    const schemes = object(card.securitySchemes);
    for (const [name, scheme] of Object.entries(schemes)) {
      if (!scheme || typeof scheme !== "object") continue;
      const kind = Object.keys(scheme)[0] || "unknown";
      const detail = object(scheme[kind]);
      const how = detail.scheme || (detail.location ? `${detail.location} ${detail.name}` : "");
      security.append(el("li", { text: `${name}: ${kind.replace(/SecurityScheme$/, "")}${how ? ` (${how})` : ""}` }));
    }
    for (const requirement of Array.isArray(card.securityRequirements) ? card.securityRequirements : []) {
      if (!requirement || typeof requirement !== "object") continue;
      security.append(el("li", { class: "hint", text: `requires ${Object.keys(object(requirement.schemes)).join(" + ")}` }));
    }
    if (!security.children.length) security.append(el("li", { class: "hint", text: "none declared" }));
    $("card-raw").textContent = JSON.stringify(JSON.parse(text), null, 2);

    state.authPlans = authPlans(card);
    const schemeSelect = $("token-scheme");
    schemeSelect.replaceChildren();
    state.authPlans.forEach((plan, i) => schemeSelect.append(el("option", { value: String(i), text: plan.label })));
    state.auth = state.authPlans[0] || { header: "Authorization", prefix: "Bearer " };
    const secured = state.authPlans.length > 0;
    schemeSelect.hidden = !secured;
    $("token-scheme-label").hidden = !secured;
    $("token-hint").textContent = secured ? "kept in this page only" : "the card asks for none";

    state.interfaces = [];
    const select = $("interface");
    select.replaceChildren();
    for (const iface of Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : []) {
      if (!iface || iface.protocolVersion !== "1.0" || !BINDINGS.has(iface.protocolBinding)) continue;
      let url;
      try {
        url = new URL(iface.url, location.href);
      } catch {
        continue;
      }
      // The page may only connect to its own origin (its security policy): the same path
      // here reaches the same server, as any client of this host would.
      const here = new URL(location.origin);
      here.pathname = url.pathname;
      here.search = url.search;
      const sameOrigin = here.href;
      state.interfaces.push({ binding: iface.protocolBinding, url: sameOrigin, declared: iface.url, tenant: iface.tenant || "" });
      select.append(el("option", { value: String(state.interfaces.length - 1), text: `${iface.protocolBinding} · ${url.pathname}` }));
    }
    state.interface = state.interfaces[0] || null;
    const usable = state.interface !== null;
    $("chat-send").disabled = !usable;
    const streamBox = $("use-stream");
    streamBox.checked = caps.streaming === true;
    streamBox.disabled = caps.streaming !== true;
    if (!usable) showError("The card lists no JSON-RPC or HTTP+JSON interface at version 1.0: the console cannot talk to this agent.");
  }

  // --- calls ---------------------------------------------------------------------------

  function headers(extra) {
    const out = { "A2A-Version": "1.0", ...extra };
    const token = $("token").value;
    const auth = state.auth;
    if (token && auth && auth.header) {
      out[auth.header] = auth.prefix + (auth.basic ? base64(token) : token);
    }
    return out;
  }

  function base64(text) {
    // UTF-8 first: btoa takes Latin-1 only.
    return btoa(Array.from(new TextEncoder().encode(text), (byte) => String.fromCharCode(byte)).join(""));
  }

  function withQueryToken(url) {
    const token = $("token").value;
    if (!token || !state.auth || !state.auth.query) return url;
    const u = new URL(url);
    u.searchParams.set(state.auth.query, token);
    return u.href;
  }

  function join(base, path) {
    return base.replace(/\/+$/, "") + path;
  }

  // The HTTP request of one operation on the chosen interface.
  function request(method, params) {
    const iface = state.interface;
    if (iface.binding === "JSONRPC") {
      // An interface's tenant goes with every call (in the params, or the path for REST).
      if (iface.tenant) params = { ...params, tenant: iface.tenant };
      const body = { jsonrpc: "2.0", id: ++state.rpcId, method, params };
      return { url: iface.url, init: { method: "POST", body: JSON.stringify(body) } };
    }
    const base = iface.tenant ? join(iface.url, `/${encodeURIComponent(iface.tenant)}`) : iface.url;
    const id = encodeURIComponent(params.id || "");
    const post = (path, body) => ({ url: join(base, path), init: { method: "POST", body: JSON.stringify(body) } });
    const get = (path, query) => {
      const search = new URLSearchParams();
      for (const [key, value] of Object.entries(query || {})) if (value !== undefined) search.set(key, String(value));
      const qs = search.toString();
      return { url: join(base, path) + (qs ? `?${qs}` : ""), init: { method: "GET" } };
    };
    switch (method) {
      case "SendMessage": return post("/message:send", params);
      case "SendStreamingMessage": return post("/message:stream", params);
      case "GetTask": return get(`/tasks/${id}`, { historyLength: params.historyLength });
      case "ListTasks": return get("/tasks", { pageSize: params.pageSize, historyLength: params.historyLength });
      case "CancelTask": return post(`/tasks/${id}:cancel`, {});
      case "SubscribeToTask": return get(`/tasks/${id}:subscribe`);
      default: throw new A2AError(`unknown operation ${method}`);
    }
  }

  function errorOf(payload, status) {
    // JSON-RPC {"error": {code, message}}, or HTTP+JSON {"error": {code, status, message}}.
    const error = payload && payload.error;
    if (error) {
      const said = [error.status || error.code, status !== 200 ? `HTTP ${status}` : null].filter(
        (x) => x !== undefined && x !== null
      );
      return new A2AError(`${error.message || "error"}${said.length ? ` (${said.join(", ")})` : ""}`, error);
    }
    return new A2AError(`HTTP ${status}`);
  }

  async function send(method, params, { accept = "application/json" } = {}) {
    const { url, init } = request(method, params);
    init.headers = headers({ Accept: accept, ...(init.body ? { "Content-Type": "application/json" } : {}) });
    let response;
    try {
      response = await fetch(withQueryToken(url), init);
    } catch (error) {
      throw new A2AError(`The agent could not be reached: ${error.message}`);
    }
    return response;
  }

  async function call(method, params) {
    const response = await send(method, params);
    const text = await response.text();
    let payload = null;
    try {
      payload = text ? JSON.parse(text) : null;
    } catch {
      throw new A2AError(`HTTP ${response.status}: the reply is not JSON`);
    }
    if (state.interface.binding === "JSONRPC") {
      if (payload && payload.error) throw errorOf(payload, response.status);
      if (!response.ok || !payload) throw errorOf(payload, response.status);
      return payload.result;
    }
    if (!response.ok) throw errorOf(payload, response.status);
    return payload;
  }

  // Reads a Server-Sent Events body: each event is logged as received, then handed on.
  async function stream(method, params, onEvent) {
    const response = await send(method, params, { accept: "text/event-stream" });
    const type = response.headers.get("content-type") || "";
    if (!type.startsWith("text/event-stream")) {
      const text = await response.text();
      let payload = null;
      try {
        payload = JSON.parse(text);
      } catch {
        /* not JSON: the status says it */
      }
      throw errorOf(payload, response.status);
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    let pending = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        // Line ends are CR, LF or CRLF; a CR at a chunk's end may be the first half of a CRLF:
        // it waits for the next chunk.
        pending += value;
        const whole = pending.endsWith("\r") ? pending.slice(0, -1) : pending;
        pending = pending.slice(whole.length);
        buffer += whole.replace(/\r\n?/g, "\n");
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const raw = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          handleFrame(raw, onEvent);
        }
      }
      buffer += pending.replace(/\r/g, "\n");
      if (buffer.trim()) handleFrame(buffer, onEvent);
    } finally {
      reader.cancel().catch(() => {}); // a frame that failed ends the stream: let it go
    }
  }

  function handleFrame(raw, onEvent) {
    logFrame(raw);
    const data = [];
    for (const line of raw.split("\n")) {
      if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (!data.length) return; // a comment (keep-alive) or an id/retry-only frame
    let payload;
    try {
      payload = JSON.parse(data.join("\n"));
    } catch {
      throw new A2AError("a stream frame is not JSON");
    }
    if (state.interface.binding === "JSONRPC") {
      if (payload.error) throw errorOf(payload, 200);
      onEvent(payload.result || {});
    } else {
      if (payload.error) throw errorOf(payload, 200);
      onEvent(payload);
    }
  }

  // --- the frames log --------------------------------------------------------------------

  function logFrame(raw) {
    const log = $("frames-log");
    const comment = raw.split("\n").every((line) => line.startsWith(":") || !line);
    const stamp = new Date().toISOString().slice(11, 23);
    log.append(el("li", { class: comment ? "comment" : null }, el("span", { class: "stamp", text: stamp }), raw));
    while (log.children.length > MAX_FRAMES) log.firstElementChild.remove();
    log.scrollTop = log.scrollHeight;
  }

  // --- the chat --------------------------------------------------------------------------

  function addEntry(role, ...children) {
    const transcript = $("chat-transcript");
    const who = role === "user" ? "You" : role === "agent" ? state.card.name || "Agent" : "Error";
    const entry = el("li", { "data-role": role }, el("div", { class: "who" }, el("span", { text: who })), ...children);
    transcript.append(entry);
    while (transcript.children.length > MAX_TRANSCRIPT) transcript.firstElementChild.remove();
    transcript.scrollTop = transcript.scrollHeight;
    return entry;
  }

  // One agent reply in the transcript, updated as its events arrive.
  class Reply {
    constructor() {
      this.status = el("div", { class: "status-text" });
      this.message = el("div", { class: "text", "data-testid": "reply-message" });
      this.artifactBox = el("div", {});
      this.badge = stateBadge("sending", "reply-state");
      this.entry = addEntry("agent", this.status, this.message, this.artifactBox);
      this.entry.querySelector(".who").append(this.badge);
      this.artifacts = new Map(); // artifactId -> {name, text, node}
      this.task = null;
    }

    setState(name) {
      this.badge.textContent = name;
      this.badge.dataset.state = name;
    }

    event(event) {
      if (event.task) this.onTask(event.task);
      else if (event.message) {
        this.setState("message");
        this.message.textContent = partsText(event.message.parts);
        this.contextId = event.message.contextId;
      } else if (event.statusUpdate) this.onStatus(event.statusUpdate);
      else if (event.artifactUpdate) this.onArtifact(event.artifactUpdate.artifact || {}, event.artifactUpdate.append);
      $("chat-transcript").scrollTop = $("chat-transcript").scrollHeight;
    }

    onTask(task) {
      this.task = { id: task.id, contextId: task.contextId };
      state.streaming = task.id; // its events come by this reply: no need to follow it
      this.contextId = task.contextId;
      this.onStatus({ taskId: task.id, contextId: task.contextId, status: task.status || {} });
      for (const artifact of task.artifacts || []) this.onArtifact(artifact, false);
      selectTask(task.id, false);
    }

    onStatus(update) {
      const name = stateName(update.status && update.status.state);
      this.state = name;
      this.setState(name);
      const said = update.status && update.status.message ? partsText(update.status.message.parts) : "";
      if (said) this.status.textContent = said;
      if (update.taskId) noteTask({ id: update.taskId, contextId: update.contextId, state: name, updated: update.status.timestamp });
    }

    onArtifact(artifact, append) {
      const id = artifact.artifactId || "";
      let shown = this.artifacts.get(id);
      if (!shown) {
        const name = el("div", { class: "artifact-name", text: artifact.name || "" });
        const node = el("div", { class: "text" });
        this.artifactBox.append(el("div", { class: "artifact", "data-testid": "reply-artifact" }, name, node));
        shown = { text: "", node };
        this.artifacts.set(id, shown);
      }
      const text = partsText(artifact.parts);
      shown.text = append ? shown.text + text : text;
      shown.node.textContent = shown.text;
    }
  }

  async function submit(event) {
    event.preventDefault();
    const input = $("chat-input");
    const text = input.value;
    if (!text.trim() || state.busy || !state.interface) return;
    showError("");
    input.value = "";
    addEntry("user", el("div", { class: "text", text }));
    const message = { messageId: newId(), role: "ROLE_USER", parts: [{ text }] };
    if (state.contextId) message.contextId = state.contextId;
    if (state.continueTaskId) message.taskId = state.continueTaskId;
    const params = { message, configuration: { acceptedOutputModes: ["text/plain"] } };
    const reply = new Reply();
    setBusy(true);
    try {
      if ($("use-stream").checked) {
        await stream("SendStreamingMessage", params, (e) => reply.event(e));
      } else {
        const result = await call("SendMessage", params);
        reply.event(result || {});
      }
      if (reply.contextId) setContext(reply.contextId);
      const waiting = reply.task && INTERRUPTED.has(reply.state);
      setContinues(waiting ? reply.task.id : null);
      if (reply.task) await refreshSelected();
    } catch (error) {
      reply.setState("error");
      addEntry("error", el("div", { class: "text", text: error.message }));
      showError(error.message);
    } finally {
      state.streaming = null;
      setBusy(false);
      await refreshTasks();
    }
  }

  function setBusy(busy) {
    state.busy = busy;
    $("chat-send").disabled = busy || !state.interface;
    $("chat-send").textContent = busy ? "Waiting…" : "Send";
  }

  function setContext(contextId) {
    state.contextId = contextId;
    $("context-id").textContent = contextId || "new";
  }

  function setContinues(taskId) {
    state.continueTaskId = taskId;
    $("continues").textContent = taskId ? `(answers task ${short(taskId)}, which asks for input)` : "";
  }

  // --- tasks -----------------------------------------------------------------------------

  function noteTask(task) {
    const known = state.tasks.get(task.id) || {};
    state.tasks.set(task.id, { ...known, ...task });
    // A task that ended (here or elsewhere) is no longer the one the next message answers.
    if (task.id === state.continueTaskId && TERMINAL.has(task.state)) setContinues(null);
    renderTasks();
    if (state.selected === task.id) showTaskState(task.state);
  }

  function renderTasks() {
    const taskList = $("task-list");
    taskList.replaceChildren();
    const tasks = [...state.tasks.values()].sort((a, b) => String(b.updated || "").localeCompare(String(a.updated || "")));
    if (!tasks.length) taskList.append(el("li", { class: "empty", text: "No tasks yet." }));
    for (const task of tasks) {
      const button = el("button", { type: "button", title: `Task ${task.id}` },
        el("code", { text: short(task.id) }),
        el("span", { class: "hint", text: task.updated ? new Date(task.updated).toLocaleTimeString() : "" }),
        stateBadge(task.state, "task-state"));
      button.addEventListener("click", () => selectTask(task.id, true));
      taskList.append(el("li", { "data-testid": "task-row", "data-task-id": task.id, "aria-current": state.selected === task.id ? "true" : null }, button));
    }
  }

  async function refreshTasks() {
    if (!state.interface) return;
    try {
      const result = await call("ListTasks", { pageSize: 50, historyLength: 0 });
      for (const task of (result && result.tasks) || []) {
        noteTask({ id: task.id, contextId: task.contextId, state: stateName(task.status && task.status.state), updated: task.status && task.status.timestamp });
      }
    } catch (error) {
      showError(`Listing the tasks failed: ${error.message}`);
    }
  }

  function showTaskState(name) {
    const badge = $("task-view-state");
    badge.textContent = name;
    badge.dataset.state = name;
    $("cancel-task").disabled = !name || TERMINAL.has(name);
    const live = state.following === state.selected || state.streaming === state.selected;
    $("follow-task").disabled = !name || TERMINAL.has(name) || live;
  }

  async function selectTask(id, fetchIt) {
    if (state.selected !== id) {
      $("task-history").replaceChildren();
      $("task-artifacts").replaceChildren();
    }
    state.selected = id;
    $("task-view").hidden = false;
    $("task-view-id").textContent = id;
    const known = state.tasks.get(id);
    showTaskState(known ? known.state : "");
    renderTasks();
    if (fetchIt) await refreshSelected();
  }

  async function refreshSelected() {
    const id = state.selected;
    if (!id) return;
    let task;
    try {
      task = await call("GetTask", { id, historyLength: 100 });
    } catch (error) {
      showError(`Reading task ${short(id)} failed: ${error.message}`);
      return;
    }
    if (state.selected !== id || !task) return;
    const name = stateName(task.status && task.status.state);
    noteTask({ id: task.id, contextId: task.contextId, state: name, updated: task.status && task.status.timestamp });
    showTaskState(name);
    const history = $("task-history");
    history.replaceChildren();
    for (const message of task.history || []) {
      const role = message.role === "ROLE_USER" ? "user" : "agent";
      history.append(el("li", {}, el("strong", { text: `${role}: ` }), partsText(message.parts)));
    }
    if (task.status && task.status.message && !(task.history || []).some((m) => m.messageId === task.status.message.messageId)) {
      history.append(el("li", {}, el("strong", { text: "status: " }), partsText(task.status.message.parts)));
    }
    if (!history.children.length) history.append(el("li", { class: "hint", text: "none" }));
    const artifacts = $("task-artifacts");
    artifacts.replaceChildren();
    for (const artifact of task.artifacts || []) {
      artifacts.append(el("li", {}, el("strong", { text: `${artifact.name || short(artifact.artifactId)}: ` }), partsText(artifact.parts)));
    }
    if (!artifacts.children.length) artifacts.append(el("li", { class: "hint", text: "none" }));
  }

  async function cancelSelected() {
    const id = state.selected;
    if (!id) return;
    $("cancel-task").disabled = true;
    try {
      const task = await call("CancelTask", { id });
      if (task && task.status) noteTask({ id, state: stateName(task.status.state), updated: task.status.timestamp });
    } catch (error) {
      showError(`Cancelling task ${short(id)} failed: ${error.message}`);
    }
    if (!state.busy) await refreshSelected();
  }

  // A task started elsewhere (another page, another client): its events, live, by
  // SubscribeToTask, into the task view and the frames log.
  async function followSelected() {
    const id = state.selected;
    if (!id) return;
    state.following = id;
    $("follow-task").disabled = true;
    try {
      await stream("SubscribeToTask", { id }, (event) => {
        const update = event.statusUpdate || (event.task && { taskId: event.task.id, status: event.task.status });
        if (update && update.status) {
          noteTask({ id, state: stateName(update.status.state), updated: update.status.timestamp });
        }
      });
    } catch (error) {
      showError(`Following task ${short(id)} failed: ${error.message}`);
    } finally {
      if (state.following === id) state.following = null;
    }
    if (state.selected === id) await refreshSelected();
  }

  // --- start -----------------------------------------------------------------------------

  function wire() {
    $("chat-form").addEventListener("submit", submit);
    $("chat-input").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        $("chat-form").requestSubmit();
      }
    });
    $("connection").addEventListener("submit", (event) => event.preventDefault());
    $("token").addEventListener("change", () => refreshTasks());
    $("token-scheme").addEventListener("change", (event) => {
      state.auth = state.authPlans[Number(event.target.value)] || state.auth;
      refreshTasks();
    });
    $("interface").addEventListener("change", (event) => {
      state.interface = state.interfaces[Number(event.target.value)] || null;
      refreshTasks();
    });
    $("new-conversation").addEventListener("click", () => {
      setContext(null);
      setContinues(null);
      $("chat-input").focus();
    });
    $("refresh-tasks").addEventListener("click", async () => {
      await refreshTasks();
      await refreshSelected();
    });
    $("cancel-task").addEventListener("click", cancelSelected);
    $("follow-task").addEventListener("click", followSelected);
    $("clear-frames").addEventListener("click", () => $("frames-log").replaceChildren());
  }

  async function start() {
    wire();
    renderTasks();
    try {
      const { card, text } = await loadCard();
      renderCard(card, text);
    } catch (error) {
      $("card-name").textContent = "no agent card";
      showError(error.message);
      return;
    }
    await refreshTasks();
    $("chat-input").focus();
  }

  start();
})();
