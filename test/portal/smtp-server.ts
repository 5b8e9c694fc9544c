// A real SMTP server for the portal's tests: Debian's aiosmtpd on a free loopback port, printing each mail it
// receives on stdout, which the test reads (quoted-printable bodies decoded).
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { EventEmitter, once } from "node:events";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { freePort } from "../helpers/fixture.ts";

/** A mail as the server printed it. */
export interface ReceivedMail {
  to: string;
  subject: string;
  body: string;
  /** Its Message-ID header. */
  id: string;
}

export interface SmtpServer {
  url: string;
  mails(): ReceivedMail[];
  /** The first mail to `to` whose subject matches: at once if it has come, else when it comes (or after `timeoutMs`). */
  waitForMail(to: string, subject: RegExp, timeoutMs?: number): Promise<ReceivedMail>;
  /** The mail whose Message-ID holds `id`, when it has come (or after `timeoutMs`). */
  waitForId(id: string, timeoutMs?: number): Promise<ReceivedMail>;
  /** Stops the server's process (SIGSTOP): connections are accepted by the kernel, and nothing answers them. */
  pause(): void;
  /** Lets it go on (SIGCONT). */
  resume(): void;
  /** Starts it again, stopped, on the same port; the mails it received before stay in `mails()`. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const decodeQuotedPrintable = (text: string) =>
  text.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

function parseMails(output: string): ReceivedMail[] {
  const mails: ReceivedMail[] = [];
  const re = /-+ MESSAGE FOLLOWS -+\r?\n([\s\S]*?)\r?\n-+ END MESSAGE -+/g;
  for (const [, message] of output.matchAll(re)) {
    const split = message!.search(/\r?\n\r?\n/);
    const head = message!.slice(0, split).replace(/\r?\n(?=[ \t])/g, ""); // a long header folded: unfolded
    const header = (name: string) => new RegExp(`^${name}: (.*)$`, "mi").exec(head)?.[1]?.trim() ?? "";
    const raw = message!.slice(split).trim();
    const body = /quoted-printable/i.test(header("Content-Transfer-Encoding")) ? decodeQuotedPrintable(raw) : raw;
    mails.push({ to: header("To"), subject: header("Subject"), body, id: header("Message-ID") });
  }
  return mails;
}

/**
 * Resolves with what `find` returns once it returns something, trying again on each `change` of `emitter` (no
 * polling); rejects after `timeoutMs`, or when the emitter says `exit`.
 */
function when<T>(what: string, emitter: EventEmitter, timeoutMs: number, find: () => T | undefined): Promise<T> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      emitter.off("change", look);
      emitter.off("exit", exited);
    };
    const look = () => {
      const found = find();
      if (found === undefined) return;
      done();
      resolve(found);
    };
    const exited = () => (done(), reject(new Error(`the SMTP server exited while waiting for ${what}`)));
    const timer = setTimeout(
      () => (done(), reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`))),
      timeoutMs,
    );
    emitter.on("change", look);
    emitter.on("exit", exited);
    look();
  });
}

/**
 * Starts aiosmtpd on a free loopback port and waits until it says it listens. Mails are read from its stdout (kept
 * across a restart), its log from its stderr.
 */
export async function startSmtpServer(): Promise<SmtpServer> {
  const program = requireProgram("aiosmtpd");
  const port = await freePort();
  const events = new EventEmitter();
  let output = "";
  let mails: ReceivedMail[] = [];
  let child: ChildProcess;
  const start = async () => {
    let log = "";
    child = spawn(program, ["-n", "-d", "-l", `127.0.0.1:${port}`], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, PYTHONUNBUFFERED: "1" },
    });
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      mails = parseMails(output);
      events.emit("change");
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      log += chunk.toString();
      events.emit("change");
    });
    child.once("exit", () => events.emit("exit"));
    await when("aiosmtpd to listen", events, 15_000, () =>
      /Server is listening on/.test(log) ? true : undefined,
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${log}`);
    });
  };
  await start();
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails: () => mails,
    waitForMail: (to, subject, timeoutMs = 10_000) =>
      when(`a mail to ${to} about ${subject}`, events, timeoutMs, () =>
        mails.find((m) => m.to === to && subject.test(m.subject)),
      ),
    waitForId: (id, timeoutMs = 10_000) =>
      when(`the mail ${id}`, events, timeoutMs, () => mails.find((m) => m.id.includes(id))),
    pause: () => child.kill("SIGSTOP"),
    resume: () => child.kill("SIGCONT"),
    restart: start,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGCONT");
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}

/** The portal link in a mail's body. */
export function linkIn(mail: ReceivedMail): string {
  const link = /https?:\/\/\S+/.exec(mail.body)?.[0];
  if (!link) throw new Error(`no link in the mail: ${mail.body}`);
  return link;
}
