// The rejection cases (issue 10): requests answered with a 401, 429 or 404, each checked first, measured against a 200
// (the product detail, identity) from the same server in the same rounds, on a handler, on a handler whose limit of
// failed authentications never bites, and on the server as deployed (whose request log is checked after).
import { createKey, generateKey } from "../../src/keys/keys-file.ts";
import { expect } from "../lib/check.ts";
import type { RawResponse } from "../lib/check.ts";
import { fmtCpuUs, fmtInt, fmtX, renderTable, starvedWarnings, verdict } from "../lib/report.ts";
import type { Row, Table, Verdict } from "../lib/report.ts";
import { pairedRatio } from "../lib/rounds.ts";
import type { Run } from "../lib/rounds.ts";
import { HOST, logVerdicts } from "./context.ts";
import type { Deployed, Family } from "./context.ts";

type Kind = "missing" | "locked" | "open" | "rate" | "notFound";
const KINDS: Record<Kind, { what: string; status: number; code: string }> = {
  missing: { what: "401 missing key", status: 401, code: "api_key_missing" },
  locked: { what: "401 invalid key, address locked out", status: 401, code: "api_key_invalid" },
  open: { what: "401 invalid key, not locked out", status: 401, code: "api_key_invalid" },
  rate: { what: "429 rate limited", status: 429, code: "rate_limited" },
  notFound: { what: "404 no such product", status: 404, code: "not_found" },
};
/** The servers, and their rejections in the order measured: the invalid key last, so its lockout overlaps no other. */
const SERVERS = [
  { server: "handler", name: "handler", kinds: ["missing", "rate", "notFound", "locked"] },
  { server: "open", name: "handler, failure limit raised", kinds: ["open"] },
  { server: "deployed", name: "as deployed", kinds: ["missing", "rate", "notFound", "locked"] },
] as const;
const label = (name: string, kind: Kind) => `reject ${KINDS[kind].what} [${name}]`;

/** A product ID no snapshot has. */
const MISSING_PRODUCT_PATH = "/v1/products/999999999/detail.json";
/** The 429 key's limit: one request a second, no burst to speak of. */
const SLOW_KEY_LIMIT = { rate: 1, burst: 1 } as const;
/**
 * Wait after a run of invalid keys: the address's failure bucket (1/s) is below one token when the run ends and has
 * one again within a second; until then every request with a key from this address that is not valid is a 401.
 */
const LOCKOUT_WAIT_MS = 1_500;
const lockoutWait = () => new Promise<void>((resolve) => setTimeout(resolve, LOCKOUT_WAIT_MS));

/**
 * Checks one rejection before it is measured: its status and problem code; an invalid key gets "too many failed
 * attempts" once the address's limit is used up (never on the "open" server); the 429 key is refused after its burst,
 * with a Retry-After. Returns the problem body's size and what the check saw.
 */
async function check(kind: Kind, who: string, get: () => Promise<RawResponse>) {
  const { status, code } = KINDS[kind];
  const attempt = async (n: number) => {
    const res = await get();
    let p: { code?: string; detail?: string } = {};
    try {
      p = JSON.parse(res.body.toString()) as typeof p;
    } catch {
      // not a problem body: the check below says what it was
    }
    expect(
      res.status === status && p.code === code,
      `${who}: answer ${n} is ${res.status} ${p.code}, expected ${status} ${code}`,
    );
    return { res, detail: p.detail ?? "" };
  };
  // The 429 key's one token goes on its first request: a 429 within three.
  if (kind === "rate") for (let i = 0; i < 2; i++) if ((await get()).status !== 200) break;
  let last = await attempt(1);
  if (kind === "rate") {
    expect(last.res.header("retry-after") !== undefined, `${who}: no Retry-After`);
    return { bytes: last.res.body.length, checked: `"${last.detail}", Retry-After ${last.res.header("retry-after")}` };
  }
  if (kind !== "locked" && kind !== "open") return { bytes: last.res.body.length, checked: `"${last.detail}"` };
  // The limit is 10 failures at once (DEFAULT_AUTH_FAILURE_LIMIT); the 11th attempt finds the address locked out.
  let lockedAt = 0;
  for (let i = 2; i <= 15; i++) {
    last = await attempt(i);
    if (!lockedAt && /too many failed/.test(last.detail)) lockedAt = i;
  }
  if (kind === "open") expect(lockedAt === 0, `${who}: locked out at attempt ${lockedAt} though the limit was raised`);
  else expect(lockedAt > 0, `${who}: no "too many failed attempts" in 15 attempts (is the failure limit on?)`);
  if (kind === "locked") await lockoutWait();
  const checked = lockedAt ? `locked out from attempt ${lockedAt}` : "15 attempts, none locked out";
  return { bytes: last.res.body.length, checked: `${checked}: "${last.detail}"` };
}

export const rejectFamily: Family = {
  labels: SERVERS.flatMap((s) => s.kinds.map((k) => label(s.name, k))),
  seconds: (o, n) => 3 * (o.startupWarmup + 3) + (n + 3) * o.reject.rounds * (o.reject.warmup + o.reject.duration + 1),
  async run(b, wanted) {
    const { product, key, keysFile } = b.snap;
    // Every server loads the keys file at start-up: the 429 key is made before any starts.
    const slowKey = await createKey(keysFile, "bench-slow", new Date(), { ...SLOW_KEY_LIMIT });
    const targets: Record<Kind | "ok", string> = {
      ok: `${product.path}?apikey=${key}`,
      missing: product.path,
      notFound: `${MISSING_PRODUCT_PATH}?apikey=${key}`,
      rate: `${product.path}?apikey=${slowKey}`,
      locked: `${product.path}?apikey=${generateKey()}`,
      open: `${product.path}?apikey=${generateKey()}`,
    };
    const groups: Table["groups"][number][] = [];
    const checks: string[] = [];
    const deployed: Deployed[] = [];
    const { duration, warmup, rounds } = b.o.reject;
    for (const s of SERVERS) {
      const kinds = s.kinds.filter((k) => wanted(label(s.name, k)));
      if (!kinds.length) continue;
      b.log(`starting the server for the rejection cases [${s.name}] ...`);
      const limit = s.server === "open" ? { rate: 1e9, burst: 1e9 } : undefined;
      const d = s.server === "deployed" ? await b.startDeployed("deployed-reject", targets.ok) : null;
      const child = d ?? (await b.startHandler(`handler-reject-${s.server}`, targets.ok, limit));
      if (d) deployed.push(d);
      const url = (k: Kind | "ok") => `http://${HOST}:${child.port}${targets[k]}`;
      const ok = await b.get(url("ok"));
      const okText = `${s.name}: the 200 the rejections are measured against: status ${ok.status}, ${ok.body.length} bytes`;
      expect(ok.status === 200 && ok.body.equals(product.identity), `${okText}, expected 200 and the product's`);
      const cases = [];
      for (const kind of kinds) {
        cases.push({ kind, ...(await check(kind, label(s.name, kind), () => b.get(url(kind)))) });
        checks.push(`  ${label(s.name, kind)}: checked: ${cases.at(-1)!.checked}`);
      }
      const after = (k: Kind) => (k === "locked" ? { after: lockoutWait } : {});
      const streams = (["ok", ...kinds] as const).map((k) => ({
        name: k,
        url: url(k),
        pid: child.pid,
        headers: {},
        ...(k !== "ok" && after(k)),
      }));
      const runs = await b.measure(streams, { duration, warmup, rounds, label: `reject [${s.name}]` });
      await b.stop(child);
      const base = runs.get("ok")!;
      const row = (name: string, run: Run, bytes: number) => ({ name, run, bytes, extra: [non2xx(run)] });
      groups.push({
        label: s.name,
        rows: [
          row("200 product detail, identity", base, ok.body.length),
          ...cases.map((c) => ({
            ...row(KINDS[c.kind].what, runs.get(c.kind)!, c.bytes),
            ratios: vs200(runs.get(c.kind)!, base),
          })),
        ],
      });
    }
    const t: Table = {
      columns: ["server", "case", "non-2xx", "x/200 req/s", "x/200 CPU us/req"],
      groups,
      notes: [
        "  Each server's 200 (GET <product>?apikey=<valid key>, no Accept-Encoding) and its rejections, interleaved in the same",
        "  rounds; median round by req/s. x/200: the ratio to the 200 run of the same round, the median over the rounds.",
        "  body: the response body (problem+json for the rejections). non-2xx: share of wrk's completed requests.",
        "  401 missing key: <product> without apikey. 401 invalid key: a well-formed key that is not valid; after 10 failures an",
        '    address is locked out (1 a second after that): every attempt with a key that is not valid is a 401 "too many failed',
        '    attempts" (valid keys are still served). "not locked out": a handler whose authFailureLimit is 1e9/s.',
        `  429: a key limited to ${SLOW_KEY_LIMIT.rate}/s, burst ${SLOW_KEY_LIMIT.burst}. 404: ${MISSING_PRODUCT_PATH} with the valid key. After a`,
        `    locked-out run the benchmark waits ${LOCKOUT_WAIT_MS / 1000} s (the address's failure bucket refills). Each server is started for its cases.`,
        ...checks,
      ],
    };
    const logs = await logVerdicts(deployed, b.o.connections);
    const how = `rejection cases: wrk -t1 -c${b.o.connections} -d${duration}s after a ${warmup} s warm-up, each server's 200 and its rejections in ${rounds} interleaved rounds, median round`;
    return { text: `${how}\n\n${renderTable(t)}`, verdicts: [...rejectVerdicts(t, duration), ...logs] };
  },
};

const non2xx = (run: Run) => `${run.r.requests ? Math.round((100 * run.r.non2xx) / run.r.requests) : 0}%`;
/** A rejection's req/s and CPU us/req over its 200's, each taken within a round, the median over the rounds. */
const vs200 = (run: Run, base: Run) =>
  [pairedRatio(run, base, (x) => x.r.requestsPerSec), pairedRatio(run, base, (x) => x.cpu)] as const;

/** One line per rejection (CPU us/req <= the 200's from the same server and rounds), then the statuses seen. */
function rejectVerdicts(t: Table, seconds: number): Verdict[] {
  const out: Verdict[] = [];
  const problems: string[] = [];
  for (const { label: server, rows } of t.groups) {
    const [{ run: base }, ...rejections] = rows as [Row, ...Row[]];
    if (base.r.non2xx + base.r.socketErrors > 0)
      problems.push(`${server} 200: ${base.r.non2xx} non-2xx, ${base.r.socketErrors} socket errors`);
    for (const { name, run, ratios } of rejections) {
      const who = `reject ${name} [${server}]`;
      // Every answer non-2xx, but the 429 key's allowance: its burst, then its rate.
      const allowed = name.startsWith("429")
        ? Math.ceil(SLOW_KEY_LIMIT.rate * (seconds + 1)) + SLOW_KEY_LIMIT.burst
        : 0;
      const ok = run.r.requests - run.r.non2xx;
      if (ok > allowed)
        problems.push(`${who}: ${fmtInt(ok)} 2xx of ${fmtInt(run.r.requests)} (at most ${allowed} expected)`);
      if (run.r.socketErrors) problems.push(`${who}: socket errors ${run.r.socketErrorDetail}`);
      const [rps, cpu] = ratios!;
      const text = `${who}: CPU us/req <= the 200 product's (same server, same rounds): ${fmtCpuUs(run.cpu)} vs ${fmtCpuUs(base.cpu)} (${fmtX(cpu)}, the median of the rounds' ratios); req/s ${fmtInt(run.r.requestsPerSec)} vs ${fmtInt(base.r.requestsPerSec)} (${fmtX(rps)})`;
      out.push(
        verdict(
          cpu !== null && cpu <= 1,
          cpu === null ? `${who}: CPU us/req <= the 200 product's: no CPU figures (/proc not readable)` : text,
        ),
      );
    }
  }
  const text = `rejection runs got their statuses: the 200s all 2xx, the rejections all non-2xx (the 429 key: at most its burst plus ${SLOW_KEY_LIMIT.rate} 2xx a second), no socket errors${problems.length ? ` (${problems.join("; ")})` : ""}`;
  if (t.groups.length) out.push(verdict(problems.length === 0, text));
  return [...out, ...starvedWarnings(t, "rejection measurement(s)")];
}
