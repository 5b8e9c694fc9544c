// The browser side of passkeys, served by the portal itself (nothing from another host): @simplewebauthn/browser's
// UMD bundle, read from node_modules once at start-up, and passkeys.js, ours, which runs a ceremony when a passkey
// form (views/passkey-pages.ts) is sent and sends its answer in the form, with the form's CSRF token.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** The package's bundle, which defines the global SimpleWebAuthnBrowser (its CommonJS entry is script/index.js). */
export const WEBAUTHN_JS = readFileSync(
  join(dirname(createRequire(import.meta.url).resolve("@simplewebauthn/browser")), "../dist/bundle/index.umd.min.js"),
  "utf8",
);

/**
 * Shows the passkey forms and hides the note that they need JavaScript when the browser has WebAuthn (else says it
 * has not); on a form's submit, takes its options
 * (on the form, or asked of `data-options-url` with the form's token), runs the ceremony (a registration when the
 * options name a user), puts the answer in the `response` field and sends the form. A failure is said under the
 * button, and the button can be pressed again.
 */
export const PASSKEYS_JS = `
"use strict";
(() => {
  const lib = window.SimpleWebAuthnBrowser;
  const forms = document.querySelectorAll("form[data-passkey]");
  if (!forms.length) return;
  const supported = Boolean(lib && lib.browserSupportsWebAuthn());
  for (const form of forms) form.hidden = !supported;
  for (const note of document.querySelectorAll("[data-passkey-note]")) {
    if (supported) note.hidden = true;
    else note.textContent = "This browser cannot use passkeys (it has no WebAuthn): use another one, or your password.";
  }
  if (!supported) return;

  /** The options of the form's ceremony. */
  async function optionsOf(form) {
    if (form.dataset.options) return JSON.parse(form.dataset.options);
    const body = new URLSearchParams({ _csrf: form.elements._csrf.value });
    const res = await fetch(form.dataset.optionsUrl, { method: "POST", body, credentials: "same-origin" });
    const json = await res.json().catch(() => ({}));
    if (!res.ok) throw Object.assign(new Error(json.error || "The portal did not answer: reload the page."), { said: true });
    return json;
  }

  for (const form of forms) {
    const button = form.querySelector("button");
    const message = form.querySelector("[data-passkey-message]");
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      button.disabled = true;
      message.textContent = "";
      try {
        const options = await optionsOf(form);
        const answer = options.user
          ? await lib.startRegistration({ optionsJSON: options })
          : await lib.startAuthentication({ optionsJSON: options });
        form.elements.response.value = JSON.stringify(answer);
        form.submit();
      } catch (err) {
        button.disabled = false;
        message.textContent = err && err.said
          ? err.message
          : err && err.name === "NotAllowedError"
            ? "No passkey was used (cancelled, or the time ran out). Press the button to try again."
            : "The passkey could not be used here: " + (err && err.message ? err.message : "an unknown error") + ".";
      }
    });
  }
})();
`;
