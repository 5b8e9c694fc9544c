// A real SMTP server for the portal's tests: Debian's aiosmtpd on a free loopback port, printing each mail it
// receives on stdout, which the test reads (quoted-printable bodies decoded).
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { connect } from "node:net";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { freePort } from "../helpers/fixture.ts";

/** A mail as the server printed it. */
export interface ReceivedMail {
  to: string;
  subject: string;
  body: string;
}

export interface SmtpServer {
  url: string;
  mails(): ReceivedMail[];
  /** The first mail to `to` whose subject matches, received after `after` mails to anyone; polls until `timeoutMs`. */
  waitForMail(to: string, subject: RegExp, timeoutMs?: number): Promise<ReceivedMail>;
  stop(): Promise<void>;
}

const decodeQuotedPrintable = (text: string) =>
  text.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

function parseMails(output: string): ReceivedMail[] {
  const mails: ReceivedMail[] = [];
  const re = /-+ MESSAGE FOLLOWS -+\r?\n([\s\S]*?)\r?\n-+ END MESSAGE -+/g;
  for (const [, message] of output.matchAll(re)) {
    const split = message!.search(/\r?\n\r?\n/);
    const head = message!.slice(0, split);
    const header = (name: string) => new RegExp(`^${name}: (.*)$`, "mi").exec(head)?.[1]?.trim() ?? "";
    const raw = message!.slice(split).trim();
    const body = /quoted-printable/i.test(header("Content-Transfer-Encoding")) ? decodeQuotedPrintable(raw) : raw;
    mails.push({ to: header("To"), subject: header("Subject"), body });
  }
  return mails;
}

async function poll<T>(
  what: string,
  timeoutMs: number,
  attempt: () => T | undefined | Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await attempt();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const canConnect = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });

/** Starts aiosmtpd on a free loopback port and waits until it accepts connections. */
export async function startSmtpServer(): Promise<SmtpServer> {
  const program = requireProgram("aiosmtpd");
  const port = await freePort();
  const child: ChildProcess = spawn(program, ["-n", "-l", `127.0.0.1:${port}`], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, PYTHONUNBUFFERED: "1" },
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  await poll("aiosmtpd to listen", 15_000, async () => {
    if (child.exitCode !== null) throw new Error(`aiosmtpd exited (${child.exitCode}): ${output}`);
    return (await canConnect(port)) ? true : undefined;
  });
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails: () => parseMails(output),
    waitForMail: (to, subject, timeoutMs = 10_000) =>
      poll(`a mail to ${to} about ${subject}`, timeoutMs, () =>
        parseMails(output).find((m) => m.to === to && subject.test(m.subject)),
      ),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
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
