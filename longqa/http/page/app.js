// The page of `longqa serve` (longqa/http/page/api.py): a client of the same HTTP API as the SDK.
// Every piece of data is put in the DOM as a text node (textContent, append of strings): never as
// markup, never as a URL, so a document or a question holding <script> or a javascript: link shows
// as text. The key lives in this tab's sessionStorage only.
"use strict";

(() => {
  const KEY_ITEM = "longqa.key";
  const STEP_LABELS = {
    prepare: "Opened the documents",
    retrieve_primary: "First search",
    analyze: "Analysed the question",
    organize: "Planned the search",
    split_question: "Split the question",
    retrieve: "Retrieved passages",
    reason_step: "Reasoned one step",
    process_context: "Gathered the passages' context",
    extract: "Extracted the global information",
    cot: "Checked the passages (chain of thought)",
    filter: "Checked a passage",
    calculate: "Computed the figure",
    generate: "Wrote the answer",
    ground: "Checked the answer against its passages",
    self_route: "Decided whether the answer holds",
    long_context: "Read the long context",
    respond: "Done",
    index_documents: "Indexed the documents",
  };
  const state = { who: null, thread: null, files: [], busy: false };
  const $ = (id) => document.getElementById(id);

  function el(tag, className, ...children) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    for (const child of children) {
      if (child !== null && child !== undefined) node.append(child);
    }
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function notice(message) {
    const box = $("notice");
    box.textContent = message || "";
    box.hidden = !message;
  }

  function authHeaders() {
    const key = sessionStorage.getItem(KEY_ITEM);
    return key ? { Authorization: "Bearer " + key } : {};
  }

  async function failure(response) {
    let message = response.statusText;
    try {
      message = (await response.json()).error || message;
    } catch (e) {
      // not JSON: the status text says enough
    }
    return new Error(response.status + ": " + message);
  }

  async function getJSON(path) {
    const response = await fetch(path, { headers: authHeaders(), cache: "no-store" });
    if (!response.ok) throw await failure(response);
    return response.json();
  }

  // POST a JSON body to a streamed endpoint; call onEvent for each NDJSON line.
  async function stream(path, body, onEvent) {
    const response = await fetch(path, {
      method: "POST",
      headers: { ...authHeaders(), "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw await failure(response);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffered = "";
    for (;;) {
      const { value, done } = await reader.read();
      buffered += decoder.decode(value || new Uint8Array(), { stream: !done });
      let newline;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line) onEvent(JSON.parse(line));
      }
      if (done) break;
    }
  }

  function newThreadId() {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  // -- who is asking ----------------------------------------------------------------------------
  async function start() {
    notice("");
    try {
      state.who = await getJSON("/page/api/whoami");
    } catch (e) {
      state.who = null;
      $("who").textContent = "Not signed in.";
      notice("Enter an API key to begin (" + e.message + ").");
      $("key").focus();
      return;
    }
    const who = state.who;
    $("who").textContent = "Tenant " + who.tenant + " · may " + who.grants.join(", ");
    fillCollections();
    const asks = who.grants.includes("ask") || who.grants.includes("admin");
    $("ask").disabled = !asks;
    $("question").placeholder = asks ? "" : "This key may not ask questions (its grants: " + who.grants.join(", ") + ")";
    await loadThreads();
    const indexes = who.grants.includes("index") || who.grants.includes("admin");
    $("index-panel").hidden = !indexes;
    $("files-part").hidden = !who.may_index_files;
    $("upload-limit").textContent = "Each file at most " + mib(who.max_upload_bytes) + " (this server's limit).";
    if (indexes && who.may_index_files) await loadFiles();
  }

  function fillCollections() {
    const select = $("collection");
    const previous = select.value;
    clear(select);
    clear($("collection-names"));
    const usable = state.who.collections.filter((c) => c.exists);
    for (const c of usable) {
      const n = c.documents.length;
      const option = el("option", null, c.name + " (" + n + (n === 1 ? " document)" : " documents)"));
      option.value = c.name;
      select.append(option);
    }
    for (const c of state.who.collections) {
      const option = el("option");
      option.value = c.name;
      $("collection-names").append(option);
    }
    if (!usable.length) {
      const option = el("option", null, "No collection to ask yet");
      option.value = "";
      select.append(option);
    }
    if (usable.some((c) => c.name === previous)) select.value = previous;
    showCollection();
  }

  function collectionInfo(name) {
    return (state.who ? state.who.collections : []).find((c) => c.name === name);
  }

  function showCollection() {
    const info = collectionInfo($("collection").value);
    $("collection-docs").textContent = info ? "Holds: " + info.documents.join(", ") : "";
  }

  // -- threads ----------------------------------------------------------------------------------
  async function loadThreads() {
    const list = $("threads");
    clear(list);
    if (!state.who.grants.includes("ask") && !state.who.grants.includes("admin")) return;
    const { threads } = await getJSON("/page/api/threads");
    if (!threads.length) list.append(el("li", "hint", "No earlier conversations."));
    for (const t of threads) {
      const turns = t.turns === 1 ? " · 1 turn" : " · " + t.turns + " turns";
      const button = el("button", "thread", t.title, el("span", "hint", turns));
      button.type = "button";
      if (t.thread_id === state.thread) button.setAttribute("aria-current", "true");
      button.addEventListener("click", () => openThread(t.thread_id));
      list.append(el("li", null, button));
    }
  }

  async function openThread(threadId) {
    try {
      const thread = await getJSON("/page/api/threads/" + encodeURIComponent(threadId));
      state.thread = thread.thread_id;
      clear($("turns"));
      if (thread.collection && collectionInfo(thread.collection)) $("collection").value = thread.collection;
      showCollection();
      for (const turn of thread.turns) {
        const view = turnView(turn.question);
        view.steps.parentNode.hidden = true;
        view.answer.append(el("h3", null, "Answer"), el("p", "answer-text", turn.answer || "(no answer)"));
      }
      $("thread-label").textContent = "Continuing an earlier conversation: follow-ups stay in it.";
      await loadThreads();
      $("question").focus();
    } catch (e) {
      notice("Cannot open that conversation (" + e.message + ").");
    }
  }

  function newConversation() {
    state.thread = null;
    clear($("turns"));
    $("thread-label").textContent = "";
    $("question").focus();
  }

  // -- asking -----------------------------------------------------------------------------------
  function turnView(question) {
    const steps = el("ol", "steps");
    steps.setAttribute("aria-live", "polite");
    const answer = el("div", "answer");
    answer.setAttribute("aria-live", "polite");
    const item = el(
      "li",
      "turn",
      el("p", "question", el("span", "speaker", "You asked: "), question),
      el("div", "steps-box", el("h3", null, "Steps"), steps),
      answer,
    );
    $("turns").append(item);
    return { item, steps, answer };
  }

  function onStep(view, event) {
    if (event.type === "step") {
      const label = STEP_LABELS[event.node] || event.node;
      const detail = event.trace && event.trace.length ? ": " + event.trace[0] : "";
      view.steps.append(el("li", "step", el("strong", null, label), detail));
    } else if (event.type === "progress") {
      let line = view.steps.querySelector("li.progress");
      if (!line) {
        line = el("li", "progress");
        view.steps.append(line);
      }
      line.textContent = event.message || "";
    }
  }

  async function ask(question) {
    if (!state.thread) state.thread = newThreadId();
    const collection = $("collection").value;
    const view = turnView(question);
    const body = { question, thread_id: state.thread };
    if (collection) body.collection = collection;
    let result = null;
    try {
      await stream("/page/api/ask", body, (event) => {
        if (event.type === "result") result = event.result;
        else if (event.type === "error") throw new Error(event.error);
        else onStep(view, event);
      });
    } catch (e) {
      view.answer.append(el("p", "error", "The question failed: " + e.message));
      return;
    }
    const progress = view.steps.querySelector("li.progress");
    if (progress) progress.remove();
    if (result) showResult(view.answer, result, collection);
    await loadThreads();
  }

  function citationButton(citation, collection) {
    const button = el("button", "cite", "[" + citation.id + "]");
    button.type = "button";
    button.setAttribute("aria-label", "Open passage " + citation.id + " in " + citation.source);
    button.addEventListener("click", () => openCitation(citation, collection));
    return button;
  }

  // The answer's text with each [E1] marker as a button that opens its passage.
  function answerText(answer, byId, collection) {
    const paragraph = el("p", "answer-text");
    for (const part of String(answer).split(/(\[[A-Za-z]*\d+\])/)) {
      const id = /^\[([A-Za-z]*\d+)\]$/.exec(part);
      if (id && byId[id[1]]) paragraph.append(citationButton(byId[id[1]], collection));
      else if (part) paragraph.append(part);
    }
    return paragraph;
  }

  function showResult(box, result, collection) {
    const citations = result.citations || [];
    const byId = Object.fromEntries(citations.map((c) => [c.id, c]));
    if (result.status === "error") {
      box.append(el("h3", null, "No answer"), el("p", "error", result.error || "the run failed"));
    } else if (result.status === "evidence-only") {
      box.append(
        el("h3", null, "Evidence"),
        el("p", "hint", "No model is configured on this server: these are the passages an answer would be read from."),
      );
    } else {
      box.append(el("h3", null, result.model ? "Answer (" + result.model + ")" : "Answer"));
      box.append(answerText(result.answer || "", byId, collection));
    }
    if (!citations.length) return;
    box.append(el("h4", null, result.status === "evidence-only" ? "Passages" : "Sources"));
    const list = el("ul", "citations");
    for (const c of citations) {
      const excerpt = c.text.length > 400 ? c.text.slice(0, 400) + "…" : c.text;
      const where = [c.source, c.page ? "p. " + c.page + (c.ocr ? " (OCR)" : "") : "", c.section || ""];
      const label = " " + where.filter(Boolean).join(" · ") + ": ";
      list.append(el("li", null, citationButton(c, collection), label, el("q", null, excerpt)));
    }
    box.append(list);
  }

  // -- a citation where it stands -----------------------------------------------------------------
  async function openCitation(citation, collection) {
    const panel = $("doc");
    const text = $("doc-text");
    if (!collection) {
      notice("Only passages of a collection can be opened here.");
      return;
    }
    const query = new URLSearchParams({
      collection,
      doc_id: citation.doc_id,
      start: String(citation.start),
      end: String(citation.end),
    });
    let passage;
    try {
      passage = await getJSON("/page/api/passage?" + query.toString());
    } catch (e) {
      notice("Cannot open passage " + citation.id + " (" + e.message + ").");
      return;
    }
    const where = [passage.source];
    if (passage.page) where.push((passage.page.includes("-") ? "pages " : "page ") + passage.page + (passage.ocr ? " (OCR)" : ""));
    if (passage.section) where.push("section: " + passage.section);
    where.push("characters " + passage.start + "–" + passage.end);
    $("doc-source").textContent = where.join(" · ");
    clear(text);
    const mark = el("mark", null, passage.span);
    mark.id = "cited";
    text.append(passage.clipped_before ? "… " : "", passage.before, mark, passage.after);
    if (passage.clipped_after) text.append(" …");
    panel.hidden = false;
    $("doc-h").focus({ preventScroll: true });
    panel.scrollIntoView({ block: "nearest" });
    centerMark();
  }

  // The cited span a third of the way down the text's own box (the page itself does not jump);
  // again when the window changes size (a phone turned, a window resized).
  function centerMark() {
    const mark = $("cited");
    const text = $("doc-text");
    if (mark && !$("doc").hidden) text.scrollTop = Math.max(0, mark.offsetTop - text.clientHeight / 3);
  }

  // -- indexing ---------------------------------------------------------------------------------
  async function loadFiles() {
    try {
      state.files = (await getJSON("/page/api/files")).files;
    } catch (e) {
      state.files = [];
      notice("Cannot list the documents root (" + e.message + ").");
    }
    showFiles();
  }

  function showFiles() {
    const list = $("files");
    const wanted = $("file-filter").value.toLowerCase();
    const held = new Set((collectionInfo($("index-collection").value) || { documents: [] }).documents);
    clear(list);
    state.files.forEach((file, i) => {
      if (wanted && !file.path.toLowerCase().includes(wanted)) return;
      const box = el("input");
      box.type = "checkbox";
      box.id = "file-" + i;
      box.value = file.path;
      box.checked = held.has(file.path);
      const label = el("label", null, file.path, el("span", "hint", " (" + Math.ceil(file.size / 1024) + " KiB)"));
      label.htmlFor = box.id;
      list.append(el("li", null, box, label));
    });
    if (!list.firstChild) list.append(el("li", "hint", "No file you may index here."));
  }

  function progressRows(paths) {
    const rows = {};
    const list = $("index-progress");
    clear(list);
    for (const path of paths) {
      const status = el("span", "status", "waiting");
      list.append(el("li", null, el("span", "path", path), ": ", status));
      rows[path] = status;
    }
    return rows;
  }

  function indexEvent(rows, event) {
    if (event.type !== "progress") return;
    $("index-status").textContent = event.message || "";
    for (const path of Object.keys(rows)) {
      if ((event.message || "").includes(" of " + path + " (")) {
        rows[path].textContent = (event.step || "working") + " " + event.done + "/" + event.total;
      }
    }
  }

  function indexResult(rows, result) {
    if (result.error) {
      $("index-status").textContent = "Not indexed: " + result.error;
      return;
    }
    const changes = result.changes || {};
    for (const path of Object.keys(rows)) rows[path].textContent = "indexed (unchanged)";
    for (const path of changes.added || []) if (rows[path]) rows[path].textContent = "indexed (new)";
    for (const path of changes.changed || []) if (rows[path]) rows[path].textContent = "indexed (changed)";
    for (const skipped of result.skipped || []) {
      const path = Object.keys(rows).find((p) => skipped.startsWith(p + ": "));
      if (path) rows[path].textContent = "skipped: " + skipped.slice(path.length + 2);
      else $("index-progress").append(el("li", null, "skipped " + skipped));
    }
    for (const path of changes.removed || []) $("index-progress").append(el("li", null, path + ": removed"));
    $("index-status").textContent = "Collection " + result.collection + " is at version " + result.version + ".";
  }

  async function indexFiles() {
    const collection = $("index-collection").value.trim();
    const paths = Array.from($("files").querySelectorAll("input:checked"), (box) => box.value);
    if (!collection || !paths.length) {
      $("index-status").textContent = "Name a collection and check at least one file.";
      return;
    }
    const rows = progressRows(paths);
    $("index-status").textContent = "Indexing " + paths.length + " file(s)…";
    let result = null;
    try {
      await stream("/page/api/index", { collection, documents: paths }, (event) => {
        if (event.type === "result") result = event.result;
        else if (event.type === "error") throw new Error(event.error);
        else indexEvent(rows, event);
      });
    } catch (e) {
      $("index-status").textContent = "Not indexed: " + e.message;
      return;
    }
    if (result) indexResult(rows, result);
    state.who = await getJSON("/page/api/whoami");
    fillCollections();
  }

  function mib(bytes) {
    return (bytes / 1048576).toFixed(1) + " MiB";
  }

  function base64Of(file) {
    return new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(String(reader.result).split(",", 2)[1] || "");
      reader.onerror = () => reject(reader.error);
      reader.readAsDataURL(file);
    });
  }

  async function uploadOne(file, collection, status) {
    if (file.size > state.who.max_upload_bytes) {
      status.textContent = "skipped: over " + mib(state.who.max_upload_bytes) + ", this server's limit";
      return;
    }
    status.textContent = "uploading and indexing…";
    const body = { collection, name: file.name, content: await base64Of(file) };
    const response = await fetch("/page/api/upload", {
      method: "POST",
      headers: { ...authHeaders(), "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) {
      status.textContent = "skipped: " + (await failure(response)).message;
      return;
    }
    const done = await response.json();
    const changes = done.changes || {};
    const how = (changes.added || []).length ? "new" : (changes.changed || []).length ? "changed" : "unchanged";
    status.textContent = "indexed as " + done.source + " (" + how + "), version " + done.version;
  }

  async function uploadFiles() {
    const collection = $("index-collection").value.trim();
    const files = Array.from($("upload-files").files || []);
    if (!collection || !files.length) {
      $("index-status").textContent = "Name a collection and choose at least one file.";
      return;
    }
    const rows = progressRows(files.map((f) => f.name));
    $("index-status").textContent = "Uploading " + files.length + " file(s) into " + collection + "…";
    for (const file of files) {
      try {
        await uploadOne(file, collection, rows[file.name]);
      } catch (e) {
        rows[file.name].textContent = "failed: " + e.message;
      }
    }
    $("index-status").textContent = "Uploads finished.";
    state.who = await getJSON("/page/api/whoami");
    fillCollections();
  }

  // -- wiring -----------------------------------------------------------------------------------
  async function busy(button, work) {
    if (state.busy) return;
    state.busy = true;
    button.disabled = true;
    try {
      await work();
    } finally {
      state.busy = false;
      button.disabled = false;
    }
  }

  function wire() {
    $("key-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const key = $("key").value.trim();
      if (key) sessionStorage.setItem(KEY_ITEM, key);
      $("key").value = "";
      newConversation();
      start();
    });
    $("forget-key").addEventListener("click", () => {
      sessionStorage.removeItem(KEY_ITEM);
      newConversation();
      clear($("threads"));
      start();
    });
    $("ask-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const question = $("question").value.trim();
      if (!question) return;
      $("question").value = "";
      busy($("ask"), () => ask(question));
    });
    $("question").addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) $("ask-form").requestSubmit();
    });
    $("collection").addEventListener("change", () => {
      showCollection();
      newConversation();
    });
    $("new-thread").addEventListener("click", newConversation);
    $("doc-close").addEventListener("click", () => {
      $("doc").hidden = true;
      $("question").focus();
    });
    window.addEventListener("resize", centerMark);
    $("file-filter").addEventListener("input", showFiles);
    $("index-collection").addEventListener("input", showFiles);
    $("index-start").addEventListener("click", () => busy($("index-start"), indexFiles));
    $("upload-start").addEventListener("click", () => busy($("upload-start"), uploadFiles));
  }

  wire();
  start();
})();
