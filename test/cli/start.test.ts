// `npm start` as the README's quick start runs it: on an empty data directory it builds the sample catalog, makes a
// key, serves, and prints a request that works; over an operator's snapshot it cannot read, it changes nothing.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFile, readlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadKeysFile } from "../../src/keys/keys-file.ts";
import { MANIFEST_FILE, snapshotDir } from "../../src/snapshot/format.ts";
import { currentSnapshotId } from "../../src/snapshot/load.ts";
import { SERVER_NODE_FLAGS } from "../../src/serve/http/server.ts";
import { BASE, buildStandardSnapshot, tempDir } from "../helpers/fixture.ts";
import { PortalClient } from "../portal/portal-client.ts";
import { usageTable } from "../portal/usage-table.ts";

/** How soon a request must show on the portal's usage page (issue 23). */
const USAGE_WITHIN_MS = 15_000;

const REPO = fileURLToPath(new URL("../..", import.meta.url));

/** `npm start`'s program with `env`; its output so far, and a promise of its exit code. */
function start(env: Record<string, string>) {
  const all: NodeJS.ProcessEnv = { ...process.env, HOST: "127.0.0.1", PORT: "0", ...env };
  if (!("BASE_URL" in env)) delete all.BASE_URL; // the default, http://HOST:PORT, as on a fresh machine
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, "--import", "tsx", "src/cli/start.ts"], {
    cwd: REPO,
    env: all,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = { stdout: "", stderr: "" };
  child.stdout.on("data", (c: Buffer) => (out.stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (out.stderr += c.toString()));
  const exited = once(child, "exit").then(([code]) => code as number | null);
  return { child, out, exited };
}

describe("npm start", () => {
  it("on an empty data directory: builds the sample, makes a key, and prints a request that is answered", async () => {
    const root = await tempDir();
    const { child, out, exited } = start({ DATA_DIR: join(root, "data") });
    try {
      const example = await new Promise<string>((resolve, reject) => {
        child.stdout.on("data", () => {
          const m = /curl '([^']+)'/.exec(out.stdout);
          if (m) resolve(m[1]!);
        });
        void exited.then((code) => reject(new Error(`start exited (${code}): ${out.stderr}`)));
      });
      expect(out.stdout).toMatch(/created API key "demo": [A-Za-z0-9]{32}/);
      expect(out.stderr).toMatch(/building the sample catalog \(no snapshot yet\)/);
      const res = await fetch(example);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { sales: unknown[] };
      expect(body.sales.length).toBeGreaterThan(0);
      // The sample's live sale begins a minute or two from now, and the stream it points at opens with a comment.
      const events = /curl -N '([^']+)'/.exec(out.stdout)?.[1];
      const begins = /a sample sale begins at (\S+)\)/.exec(out.stdout)?.[1];
      expect(events).toMatch(/\/v1\/events\?apikey=[A-Za-z0-9]{32}$/);
      const wait = Date.parse(begins!) - Date.now();
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(120_000);
      const upcoming = (await (await fetch(example.replace("active.json", "upcoming.json"))).json()) as {
        sales: { sale_key: string; begins: string }[];
      };
      expect(upcoming.sales.find((s) => s.sale_key.endsWith("-live"))?.begins).toBe(begins!.replace(".000Z", "Z"));
      const stream = await fetch(events!);
      expect(stream.headers.get("content-type")).toBe("text/event-stream");
      const first = await stream.body!.getReader().read();
      expect(new TextDecoder().decode(first.value)).toMatch(/^retry: \d+\n: /);
      await stream.body!.cancel().catch(() => undefined);
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
  }, 120_000);

  it("makes a demo account owning the demo key: the key's requests show on the portal's usage page within 15 s", async () => {
    const root = await tempDir();
    const { child, out, exited } = start({ DATA_DIR: join(root, "data"), PORTAL_PORT: "0" });
    try {
      // Up to the last line npm start prints (each line may come in a chunk of its own).
      const [, example, portalUrl] = await new Promise<RegExpExecArray>((resolve, reject) => {
        child.stdout.on("data", () => {
          const m =
            /curl '([^']+)'[\s\S]*developer portal \(sign up, make keys\) on (\S+)[\s\S]*the demo key's usage: /.exec(
              out.stdout,
            );
          if (m) resolve(m);
        });
        void exited.then((code) => reject(new Error(`start exited (${code}): ${out.stderr}`)));
      });
      const [, email, password] = /sign in as (\S+) with the password ([a-z0-9]{20})\n/.exec(out.stdout) ?? [];
      expect(email).toBe("demo@example.com");
      expect(out.stdout).toContain(`the demo key's usage: ${portalUrl}/usage`);
      // 3 answered, 2 not found, with the demo key.
      const statuses: number[] = [];
      for (const url of [
        example!,
        example!,
        example!,
        ...Array<string>(2).fill(example!.replace("/v1/sales/active.json", "/v1/products/999999999/detail.json")),
      ]) {
        const res = await fetch(url);
        await res.arrayBuffer();
        statuses.push(res.status);
      }
      expect(statuses).toEqual([200, 200, 200, 404, 404]);
      const requested = performance.now();

      const client = new PortalClient(portalUrl!);
      await client.get("/sign-in");
      const keys = await client.post("/sign-in", { email: email!, password: password! });
      expect(keys.text).toMatch(/<h3>demo<\/h3>/);
      // Named in the keys file as every partner key is, so that what is done to the account applies to it.
      const [account] = (await loadKeysFile(join(root, "data", "keys.json"))).keys;
      expect(account?.name).toMatch(/^p\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
      for (;;) {
        const total = usageTable((await client.get("/usage")).text).get("Total");
        if (total?.[0] === 5) {
          expect(total).toEqual([5, 3, 0, 2, 0, 0]);
          break;
        }
        const waited = performance.now() - requested;
        if (waited > USAGE_WITHIN_MS)
          throw new Error(`after ${waited} ms the usage page's total is ${total?.join(", ")}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      console.log(
        `npm start: the demo key's requests on the usage page after ${Math.round(performance.now() - requested)} ms`,
      );
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
  }, 120_000);

  it("over an operator's snapshot of an older format: exits 1 naming it, and leaves it published", async () => {
    const root = await tempDir();
    const dataDir = join(root, "data");
    await buildStandardSnapshot(root, dataDir);
    const id = (await currentSnapshotId(dataDir))!;
    const manifestFile = join(snapshotDir(dataDir, id), MANIFEST_FILE);
    const manifest = JSON.parse(await readFile(manifestFile, "utf8")) as Record<string, unknown>;
    expect(manifest.source).not.toBe("sample");
    await writeFile(manifestFile, JSON.stringify({ ...manifest, format: 1 }));
    const linkBefore = await readlink(join(dataDir, "current"));

    const { child, out, exited } = start({ DATA_DIR: dataDir, BASE_URL: BASE });
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000); // a start that serves instead never exits
    expect(await exited).toBe(1);
    clearTimeout(timer);
    expect(out.stderr).toContain(`the published snapshot ${id} cannot be read`);
    expect(out.stderr).toContain("it was not built from the sample catalog, so it is left as it is");
    expect(out.stderr).not.toMatch(/building the sample catalog/);
    expect(await readlink(join(dataDir, "current"))).toBe(linkBefore);
    expect(await currentSnapshotId(dataDir)).toBe(id);
  }, 60_000);
});
