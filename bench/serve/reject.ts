// The serve benchmark's rejection cases (issue 10): requests answered with a 401, 429 or 404, each checked before it
// is measured, and measured against a 200 (the product detail, identity) from the same server in the same run.
import { expect } from "./check.ts";
import type { RawResponse } from "./check.ts";

/** The rejections measured. */
export type RejectKind = "missing" | "locked" | "open" | "rate" | "notFound";

/** The servers they are measured on: the in-process handler, as deployed, and a handler whose failure limit never bites. */
export type RejectServer = "handler" | "deployed" | "open";

/** A product ID no snapshot has. */
export const MISSING_PRODUCT_PATH = "/v1/products/999999999/detail.json";
/** The 429 key's limit: one request a second, no burst to speak of. */
export const SLOW_KEY_LIMIT = { rate: 1, burst: 1 } as const;
/** The limit of the "open" server's failed authentications per address: never reached by a benchmark. */
export const OPEN_AUTH_FAILURE_LIMIT = { rate: 1e9, burst: 1e9 } as const;
/**
 * Wait after a run of invalid keys before the next run: the address's failure bucket (DEFAULT_AUTH_FAILURE_LIMIT,
 * 1/s) is below one token when the run ends and has one again within a second; until then every request with a key
 * from this address, valid or not, is a 401 "too many failed attempts".
 */
export const LOCKOUT_WAIT_MS = 1_500;

const KINDS: Record<RejectKind, { what: string; short: string; status: number; code: string }> = {
  missing: { what: "401 missing key", short: "401 missing", status: 401, code: "api_key_missing" },
  locked: { what: "401 invalid key, address locked out", short: "401 locked", status: 401, code: "api_key_invalid" },
  open: { what: "401 invalid key, not locked out", short: "401 open", status: 401, code: "api_key_invalid" },
  rate: { what: "429 rate limited", short: "429", status: 429, code: "rate_limited" },
  notFound: { what: "404 no such product", short: "404", status: 404, code: "not_found" },
};

export const REJECT_SERVER_NAMES: Record<RejectServer, string> = {
  handler: "handler",
  deployed: "as deployed",
  open: "handler, failure limit raised",
};

const GROUP_KINDS: Record<RejectServer, readonly RejectKind[]> = {
  handler: ["missing", "locked", "rate", "notFound"],
  deployed: ["missing", "locked", "rate", "notFound"],
  open: ["open"],
};

export const rejectLabel = (server: RejectServer, kind: RejectKind) =>
  `reject ${KINDS[kind].what} [${REJECT_SERVER_NAMES[server]}]`;

/** Every rejection case's label, per server (for --cases and the run-time estimate). */
export const REJECT_LABELS: Record<RejectServer, readonly string[]> = {
  handler: GROUP_KINDS.handler.map((k) => rejectLabel("handler", k)),
  deployed: GROUP_KINDS.deployed.map((k) => rejectLabel("deployed", k)),
  open: GROUP_KINDS.open.map((k) => rejectLabel("open", k)),
};

export interface RejectCase {
  kind: RejectKind;
  label: string;
  /** Its name in progress lines. */
  short: string;
  /** The request target. */
  target: string;
  status: number;
  /** The problem body's size, from the check. */
  bytes: number;
  /** What the check saw, for the report. */
  checkNote: string;
  /** 2xx answers a measured run may get (the 429 key's one a second); any more is a FAIL. */
  okPerSecond: number;
}

/** One server's rejection cases and the 200 they are measured against. */
export interface RejectGroup {
  server: RejectServer;
  /** The 200: the product detail with a valid key, identity. */
  baseline: { target: string; bytes: number };
  cases: RejectCase[];
}

export interface RejectTargets {
  productPath: string;
  /** The benchmark's key (never limited), a key limited to SLOW_KEY_LIMIT, and a well-formed key that is not valid. */
  key: string;
  slowKey: string;
  badKey: string;
  /** The product's identity body, as the handler sent it. */
  productBody: Buffer;
}

const problemOf = (res: RawResponse): { code?: string; detail?: string } => {
  try {
    return JSON.parse(res.body.toString()) as { code?: string; detail?: string };
  } catch {
    return {};
  }
};

/**
 * Builds and checks the rejection cases `wanted` selects on one server (null when none is): each answers with its
 * status and problem code; the invalid key gets "too many failed attempts" once the address's limit is used up on
 * the handler and as deployed, and never on the "open" server; the 429 key is refused after its burst.
 */
export async function prepareRejectGroup(
  server: RejectServer,
  t: RejectTargets,
  get: (target: string) => Promise<RawResponse>,
  wanted: (label: string) => boolean,
): Promise<RejectGroup | null> {
  const kinds = GROUP_KINDS[server].filter((k) => wanted(rejectLabel(server, k)));
  if (kinds.length === 0) return null;
  const who = REJECT_SERVER_NAMES[server];
  const baseline = `${t.productPath}?apikey=${t.key}`;
  const ok = await get(baseline);
  expect(
    ok.status === 200 && ok.body.equals(t.productBody),
    `${who}: the 200 the rejections are measured against: status ${ok.status}, ${ok.body.length} bytes (expected 200 and the product's ${t.productBody.length})`,
  );
  const cases: RejectCase[] = [];
  // The invalid key last, so that the address's lockout (invalid keys only) overlaps no other case.
  for (const kind of [...kinds].sort((a, b) => Number(a === "locked") - Number(b === "locked"))) {
    const { status, code } = KINDS[kind];
    const label = rejectLabel(server, kind);
    const target =
      kind === "missing"
        ? t.productPath
        : kind === "notFound"
          ? `${MISSING_PRODUCT_PATH}?apikey=${t.key}`
          : `${t.productPath}?apikey=${kind === "rate" ? t.slowKey : t.badKey}`;
    const check = (res: RawResponse, n: string) => {
      const p = problemOf(res);
      expect(
        res.status === status && p.code === code,
        `${label}: ${n} answer is ${res.status} ${p.code ?? res.body.subarray(0, 200).toString()}, expected ${status} ${code}`,
      );
      return p;
    };
    let last: RawResponse | null = null;
    let checkNote: string;
    if (kind === "locked" || kind === "open") {
      // The limit is 10 failures at once (DEFAULT_AUTH_FAILURE_LIMIT); the 11th attempt finds the address locked out.
      const attempts = 15;
      let lockedAt = 0;
      for (let i = 1; i <= attempts; i++) {
        last = await get(target);
        const p = check(last, `attempt ${i}'s`);
        if (!lockedAt && /too many failed/.test(p.detail ?? "")) lockedAt = i;
      }
      if (kind === "locked")
        expect(
          lockedAt > 0,
          `${label}: no "too many failed attempts" in ${attempts} attempts (is the failure limit on?)`,
        );
      else expect(lockedAt === 0, `${label}: locked out at attempt ${lockedAt} though the limit was raised`);
      checkNote =
        kind === "locked"
          ? `locked out from attempt ${lockedAt}: "${problemOf(last!).detail}"`
          : `${attempts} attempts, none locked out: "${problemOf(last!).detail}"`;
    } else if (kind === "rate") {
      // The key's one token goes on the first request (or went a moment ago): a 429 within three.
      let i = 0;
      do last = await get(target);
      while (last.status === 200 && ++i < 3);
      const p = check(last, "the key's request after its burst");
      expect(last.header("retry-after") !== undefined, `${label}: no Retry-After`);
      checkNote = `"${p.detail}", Retry-After ${last.header("retry-after")}`;
    } else {
      last = await get(target);
      checkNote = `"${check(last, "the").detail}"`;
    }
    cases.push({
      kind,
      label,
      short: KINDS[kind].short,
      target,
      status,
      bytes: last!.body.length,
      checkNote,
      okPerSecond: kind === "rate" ? SLOW_KEY_LIMIT.rate : 0,
    });
  }
  if (kinds.includes("locked")) await new Promise((r) => setTimeout(r, LOCKOUT_WAIT_MS));
  return { server, baseline: { target: baseline, bytes: ok.body.length }, cases };
}

/** Seconds a group takes: every stream (the 200 and each case) once per round, plus the waits after locked-out runs. */
export function rejectRunSeconds(
  streams: number,
  lockedStreams: number,
  rounds: number,
  warmup: number,
  duration: number,
): number {
  return (
    streams * rounds * (warmup + duration) + lockedStreams * rounds * (warmup > 0 ? 2 : 1) * (LOCKOUT_WAIT_MS / 1000)
  );
}
