// The console's stylesheet and script, served by the portal itself (console-routes.ts). The script sends the form's
// request from the browser straight to the API with fetch, the key in the header or query the partner chose, and
// shows the answer; it keeps nothing (no storage, no cookie) and sends nothing to the portal.

/** What the portal's stylesheet lacks for the console: selects, groups of values, the answer. */
export const CONSOLE_CSS = `
[hidden]{display:none!important}
select{width:100%;font:inherit;padding:.6rem;border:1px solid #6b7280;border-radius:.375rem;background:#fff;min-height:44px}
fieldset .field>label{display:block;font-weight:600;min-height:0}
fieldset fieldset{margin:0 0 1rem}
legend{font-weight:600;padding:0 .25rem}
.choices{display:flex;flex-wrap:wrap;gap:0 1.25rem}
.required{font-weight:400}
.url,h2 code{overflow-wrap:anywhere}
#console-body{max-height:70vh;overflow:auto}
#console-headers td:first-child{white-space:nowrap}
.console-choice{display:flex;flex-wrap:wrap;align-items:flex-end;gap:0 .75rem}.console-choice .field{flex:1 1 16rem;min-width:0}
`;

/** The console's behaviour; the page works without it up to preparing the request (console-page.ts). */
export const CONSOLE_JS = `
"use strict";
(() => {
  const form = document.getElementById("console-form");
  if (!form) return;
  const LIMIT = 2000000; // characters of body shown at most
  const $ = (id) => document.getElementById(id);
  for (const el of document.querySelectorAll("[data-script]")) el.hidden = false;
  for (const el of document.querySelectorAll("[data-no-script]")) el.hidden = true;
  $("console-auth") && ($("console-auth").disabled = false);
  $("console-send").textContent = "Send request";

  // A repeatable text parameter: another input for another value.
  for (const button of form.querySelectorAll("button[data-add]")) {
    button.hidden = false;
    button.addEventListener("click", () => {
      const group = button.closest("fieldset");
      const fields = group.querySelectorAll(".field");
      const last = fields[fields.length - 1];
      const copy = last.cloneNode(true);
      const n = fields.length + 1;
      const input = copy.querySelector("input");
      const id = input.id.replace(/-\\d+$/, "-" + n);
      input.id = id;
      input.value = "";
      const label = copy.querySelector("label");
      label.htmlFor = id;
      label.textContent = button.dataset.add + ", value " + n;
      last.after(copy);
      input.focus();
    });
  }

  let reading = null; // the AbortController of the request being read
  $("console-stop").addEventListener("click", () => reading && reading.abort());

  /** The URL of the form's request, and how it is shown (the key hidden). */
  function requestUrl(key, mode) {
    const path = form.dataset.path.replace(/\\{([^}]+)\\}/g, (_, name) => {
      const input = form.querySelector('[data-in="path"][name="' + name + '"]');
      return encodeURIComponent(input ? input.value : "");
    });
    const url = new URL(form.dataset.api + path);
    for (const el of form.querySelectorAll('[data-in="query"]')) {
      if ((el.type === "checkbox" || el.type === "radio") && !el.checked) continue;
      if (el.value === "") continue;
      url.searchParams.append(el.name, el.value);
    }
    const shown = new URL(url);
    if (key && mode === "query") {
      url.searchParams.append("apikey", key);
      shown.searchParams.append("apikey", "KEY");
    }
    return { url: url.href, shown: shown.href.replace("apikey=KEY", "apikey=<your key>") };
  }

  /** What to say of the key against the key name picked (the portal knows its first and last four characters). */
  function keyCheck(key) {
    const select = $("console-key-name");
    const picked = select && select.selectedOptions[0];
    if (!picked || !picked.dataset.first4) return "";
    const { first4, last4 } = picked.dataset;
    return key.startsWith(first4) && key.endsWith(last4)
      ? ""
      :  " The key you pasted is not " + picked.label + ".";
  }

  function showHeaders(headers) {
    const body = $("console-headers").tBodies[0];
    body.replaceChildren();
    for (const [name, value] of headers) {
      const row = body.insertRow();
      const th = document.createElement("th");
      th.scope = "row";
      th.textContent = name;
      row.append(th);
      row.insertCell().textContent = value;
    }
  }

  const pretty = (text, type) => {
    if (!/json/i.test(type)) return text;
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      return text;
    }
  };

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (reading) reading.abort();
    const keyInput = $("console-key");
    const key = keyInput ? keyInput.value.trim() : "";
    const checked = form.querySelector('input[name="auth"]:checked');
    const mode = checked ? checked.value : "query";
    const { url, shown } = requestUrl(key, mode);
    const headers = {};
    if (key && mode === "x-api-key") headers["X-Api-Key"] = key;
    if (key && mode === "bearer") headers["Authorization"] = "Bearer " + key;
    const status = $("console-status");
    const sentWith = key
      ? mode === "query"
        ? ""
        : " with the key in " + (mode === "bearer" ? "Authorization: Bearer" : "X-Api-Key")
      : form.dataset.keyed === "1"
        ? " without a key"
        : "";
    $("console-request").textContent = "GET " + shown + sentWith;
    $("console-response").hidden = false;
    $("console-body").textContent = "";
    showHeaders([]);
    status.textContent = "Sending…";
    const controller = new AbortController();
    reading = controller;
    const started = performance.now();
    let res;
    try {
      res = await fetch(url, {
        headers,
        signal: controller.signal,
        cache: "no-store",
        credentials: "omit",
        referrerPolicy: "no-referrer",
      });
    } catch (e) {
      if (reading !== controller) return; // another request took over
      reading = null;
      status.textContent =
        "No answer could be read: the API did not answer, or its CORS headers do not let this page send the " +
        "request this way (" + e.message + ")." + keyCheck(key);
      return;
    }
    if (reading !== controller) return;
    const type = res.headers.get("Content-Type") || "";
    showHeaders(res.headers);
    status.textContent =
      res.status + " " + res.statusText + " after " + Math.round(performance.now() - started) + " ms: reading the body…";
    const streaming = /^text\\/event-stream/i.test(type);
    $("console-stop").hidden = !streaming;
    const decoder = new TextDecoder();
    let text = "";
    let cut = false;
    try {
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        if (text.length > LIMIT) {
          cut = true;
          controller.abort();
          break;
        }
        if (streaming && reading === controller) $("console-body").textContent = text;
      }
    } catch {
      // Stopped (the Stop button, another request): what was read is shown.
    }
    if (reading !== controller) return; // another request took over
    reading = null;
    $("console-stop").hidden = true;
    $("console-body").textContent = pretty(text, type) + (cut ? "\\n… (cut: the body is longer)" : "");
    const size = new TextEncoder().encode(text).length;
    status.textContent =
      res.status + " " + res.statusText + " in " + Math.round(performance.now() - started) + " ms, " + size +
      " bytes of " + (type || "no type") + "." + keyCheck(key);
  });
})();
`;
