// The portal for HTTP tests: started on port 0 with its SQLite in a temp dir and mail to a real SMTP server, and a
// client that keeps cookies and sends forms as a browser does (Origin, the page's CSRF token). Mail leaves the portal
// through its outbox, after the answer: the client's `post` returns once the mail it queued has reached the server.
import { join } from "node:path";
import { createMailer } from "../../src/portal/mailer.ts";
import type { MailTransport } from "../../src/portal/mailer.ts";
import { startPortal } from "../../src/portal/server.ts";
import type { RunningPortal, StartPortalOptions } from "../../src/portal/server.ts";
import { tempDir } from "../helpers/fixture.ts";
import { afterAll, beforeAll } from "vitest";
import { startSmtpServer } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

export interface TestPortal extends RunningPortal {
  keysFile: string;
  dir: string;
  /** The injected clock, ms; move it to move time. */
  clock: { now: number };
}

/** The outboxes of the test portals running, by URL: what a client's `post` waits for. */
const outboxes = new Map<string, { flush(): Promise<void> }>();

/** SMTP to `smtp`, each send resolved once the server has printed the mail (so that its `mails()` holds it). */
export function smtpTransport(smtp: SmtpServer): MailTransport {
  const smtpMailer = createMailer(smtp.url, "Portal <portal@example.test>", () => {});
  return {
    send: async (mail, id) => {
      await smtpMailer.send(mail, id);
      await smtp.waitForId(id);
    },
    close: () => smtpMailer.close(),
  };
}

/** Starts the portal on 127.0.0.1:0 with a fresh SQLite database (or `databaseUrl`) and mail going to `smtp`. */
export async function startTestPortal(
  smtp: SmtpServer,
  options: Partial<StartPortalOptions> & { keysFile?: string } = {},
): Promise<TestPortal> {
  const dir = await tempDir("fsa-portal-");
  const clock = { now: Date.now() };
  const keysFile = options.keysFile ?? join(dir, "keys.json");
  const portal = await startPortal({
    databaseUrl: join(dir, "portal.db"),
    host: "127.0.0.1",
    port: 0,
    keysFile,
    apiUrl: "http://127.0.0.1:9",
    mailer: smtpTransport(smtp),
    clock: () => clock.now,
    ...options,
  });
  outboxes.set(portal.url, portal.outbox);
  const close = async () => {
    outboxes.delete(portal.url);
    await portal.close();
  };
  return { ...portal, close, keysFile, dir, clock };
}

/** A response read once: status, headers and text. */
export interface Page {
  status: number;
  headers: Headers;
  text: string;
  url: string;
}

/** A cookie-keeping client; `post` sends the CSRF token of the last page it got, as the form on it would. */
export class PortalClient {
  readonly cookies = new Map<string, string>();
  last: Page | undefined;
  readonly base: string;
  constructor(base: string) {
    this.base = base;
  }

  /** The CSRF token in the last page's forms. */
  get csrf(): string {
    return /name="_csrf" value="([^"]+)"/.exec(this.last?.text ?? "")?.[1] ?? "";
  }

  /** Headers sent with every request (an X-Forwarded-For, say). */
  readonly extraHeaders: Record<string, string> = {};

  async request(path: string, init: RequestInit = {}): Promise<Page> {
    const headers = new Headers(init.headers);
    for (const [name, value] of Object.entries(this.extraHeaders)) headers.set(name, value);
    if (this.cookies.size) headers.set("cookie", [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    const res = await fetch(new URL(path, this.base), { ...init, headers, redirect: "manual" });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === "" || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const page = { status: res.status, headers: res.headers, text: await res.text(), url: path };
    if (res.status >= 300 && res.status < 400 && res.headers.get("location")) {
      return this.request(res.headers.get("location")!);
    }
    this.last = page;
    return page;
  }

  get(path: string): Promise<Page> {
    return this.request(path);
  }

  /**
   * Posts `fields` as a form from the portal's own origin, with the last page's CSRF token unless `csrf` says
   * otherwise. To a test portal, returns once its outbox has sent what is due (the mail the form asked for).
   */
  async post(
    path: string,
    fields: Record<string, string>,
    options: { csrf?: string | null; origin?: string | null } = {},
  ): Promise<Page> {
    const body = new URLSearchParams(fields);
    const token = options.csrf === undefined ? this.csrf : options.csrf;
    if (token !== null) body.set("_csrf", token);
    const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
    const origin = options.origin === undefined ? new URL(this.base).origin : options.origin;
    if (origin !== null) headers.origin = origin;
    const page = await this.request(path, { method: "POST", body, headers });
    await outboxes.get(this.base)?.flush();
    return page;
  }
}

/** Signs up a partner, opens the verification link from the mail and confirms it: the client is signed in after. */
export async function signUpAndVerify(
  client: PortalClient,
  smtp: SmtpServer,
  account: { email: string; password?: string; partner?: string },
): Promise<void> {
  await client.get("/sign-up");
  const done = await client.post("/sign-up", {
    email: account.email,
    password: account.password ?? "correct horse battery",
    partner: account.partner ?? "Acme Partners",
  });
  if (done.status !== 200) throw new Error(`sign-up answered ${done.status}: ${done.text}`);
  const mail = await smtp.waitForMail(account.email, /Confirm your email/);
  const link = new URL(/https?:\/\/\S+/.exec(mail.body)![0]);
  await client.get(link.pathname + link.search);
  const verified = await client.post("/verify", { token: link.searchParams.get("token")! });
  if (!verified.text.includes("Your email address is confirmed"))
    throw new Error(`verification failed (${verified.status}): ${verified.text}`);
}

/**
 * Starts a real SMTP server and a test portal mailing to it before the file's tests (beforeAll), and stops both after
 * them (afterAll): what most portal test files share. Read `.smtp` and `.portal` inside tests and hooks.
 */
export function startPortalWithSmtp(options: Partial<StartPortalOptions> = {}) {
  const started = {} as { smtp: SmtpServer; portal: TestPortal };
  beforeAll(async () => {
    started.smtp = await startSmtpServer();
    started.portal = await startTestPortal(started.smtp, options);
  });
  afterAll(async () => {
    await started.portal?.close();
    await started.smtp?.stop();
  });
  return started;
}
