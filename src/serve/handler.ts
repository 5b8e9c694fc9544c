// createHandler(options) -> (req, res): serves a snapshot from memory after the API-key check, picking each body by the clock.
import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError, notFound, toApiError } from "../errors.ts";
import type { LoadedBlob, LoadedSegment, LoadedSnapshot } from "../snapshot/load.ts";
import { loadSnapshot, SnapshotError } from "../snapshot/load.ts";
import { createAdmission } from "./admission.ts";
import type { AdmissionOptions, Credential } from "./admission.ts";
import { createCompressor, createVariants, DEFAULT_VARIANT_CACHE_BYTES, JSON_TYPE } from "./bodies.ts";
import type { KeyRing } from "./keys.ts";
import { loadKeyRing } from "./keys.ts";
import { DEFAULT_MAX_URL_LENGTH, parseCommon, parseTarget } from "./request.ts";
import { createResources } from "./resources.ts";
import { sendJson, sendProblem, sendRepresentation } from "./respond.ts";
import { searchBody } from "./search.ts";

export { findSegment } from "./resources.ts";

/** Freshness of a response that does not change sooner, in seconds (product data may be this stale). */
export const DEFAULT_MAX_AGE = 300;
export const HEALTH_PATH = "/healthz";
const SEARCH_PATH = "/v1/products";

export interface RequestLog {
  time: string;
  method: string;
  /** The path only: the query string (and so the key) is never logged. */
  path: string;
  status: number;
  bytes: number;
  ms: number;
  /** The key's name, when the request had a valid key. */
  key?: string;
}

export interface HandlerOptions extends AdmissionOptions {
  /** Data directory with the published snapshot (`current`). */
  dataDir: string;
  /** The API keys file (hashes only). */
  keysFile: string;
  /** The clock, epoch ms. Default Date.now. Tests inject one. */
  clock?: () => number;
  /** `Cache-Control: max-age` for responses that do not change sooner. Default DEFAULT_MAX_AGE (300). */
  maxAge?: number;
  /** Longest request target, bytes. Default DEFAULT_MAX_URL_LENGTH (4096). */
  maxUrlLength?: number;
  /** Memory for cached affid/JSONP variants, bytes. Default DEFAULT_VARIANT_CACHE_BYTES (32 MB). */
  variantCacheBytes?: number;
  /** Bodies compressed with brotli in the background at once (sale lists, popular variants). Default DEFAULT_COMPRESS_SLOTS (2). */
  compressSlots?: number;
  /** Called once per request with its log entry. Default: no logging. */
  log?: (entry: RequestLog) => void;
  /** Start without a published snapshot, answering 503 until one is loaded by `reload()`. Default false: fail at start-up. */
  waitForSnapshot?: boolean;
}

export interface Handler {
  (req: IncomingMessage, res: ServerResponse): void;
  /** The snapshot being served (throws while there is none). */
  snapshot(): LoadedSnapshot;
  /** Loads the published snapshot and the keys file again and swaps to them at once. */
  reload(): Promise<{ snapshotChanged: boolean }>;
  /** The size of every structure that grows with traffic (each has a fixed bound). */
  stats(): HandlerStats;
}

export interface HandlerStats {
  /** Bytes and entries in the affid/JSONP variant cache (at most `variantCacheBytes`). */
  variantBytes: number;
  variants: number;
  /** Request targets remembered (at most ADMITTED_MAX). */
  admittedTargets: number;
  /** Bodies being compressed in the background (at most `compressSlots`). */
  compressing: number;
}

/** Everything one request reads, swapped as one object so a request never sees two snapshots. */
interface State {
  snapshot: LoadedSnapshot | null;
  keys: KeyRing;
  resources: ReturnType<typeof createResources> | null;
  /** Request targets already parsed and authenticated under this snapshot and key ring (see `Admitted`). */
  admitted: Map<string, Admitted>;
}

/**
 * What a request target that was answered once comes to, remembered by the exact target: clients poll the same
 * URLs (a sale list with their key), and a CDN revalidates them, so most requests skip parsing the target, looking
 * up the key and the path. Only targets with a valid key and valid parameters, on a path that exists, are kept;
 * the address's failure limit, the key's rate limit and the clock are still applied to every request.
 */
interface Admitted {
  path: string;
  query: Map<string, string[]>;
  credential: Credential;
  affid: string;
  callback: string;
  /** The path's states; null for a search. */
  states: readonly LoadedSegment[] | null;
}

/** The body for a /v1/ request, the instant it next changes, and for a search page how to gzip it. */
type Found = { body: LoadedBlob; changesAt: number | null; gzip?: (() => Buffer) | null };

/** Targets remembered per state (the set is emptied when full), and the longest one remembered. */
const ADMITTED_MAX = 10_000;
const ADMITTED_MAX_TARGET = 512;

const ALLOW = "GET, HEAD";

/** Loads the snapshot and keys (failing loudly if either is missing or corrupt) and returns the request handler. */
export async function createHandler(options: HandlerOptions): Promise<Handler> {
  const clock = options.clock ?? Date.now;
  const maxAge = options.maxAge ?? DEFAULT_MAX_AGE;
  const maxUrlLength = options.maxUrlLength ?? DEFAULT_MAX_URL_LENGTH;
  const compressor = createCompressor(options.compressSlots);
  const variants = createVariants(compressor, options.variantCacheBytes ?? DEFAULT_VARIANT_CACHE_BYTES);
  const admit = createAdmission(options);
  const stateOf = (snapshot: LoadedSnapshot | null, keys: KeyRing): State => ({ snapshot, keys, resources: snapshot ? createResources(snapshot, compressor) : null, admitted: new Map() });

  let initial: LoadedSnapshot | null = null;
  try {
    initial = await loadSnapshot(options.dataDir);
  } catch (err) {
    if (!(options.waitForSnapshot && err instanceof SnapshotError)) throw err;
  }
  let state = stateOf(initial, await loadKeyRing(options.keysFile));

  /** Checks the parameters and resolves the path of an authenticated /v1/ request target, and remembers it. */
  const remember = (s: State, target: string, path: string, query: Map<string, string[]>, credential: Credential): Admitted => {
    const { affid, callback } = parseCommon(query);
    if (!s.snapshot || !s.resources) throw new ApiError(503, "service_unavailable", "no snapshot is loaded yet", { "Retry-After": "5" });
    const admitted: Admitted = { path, query, credential, affid, callback, states: path === SEARCH_PATH ? null : s.resources.statesOf(path) };
    if (target.length <= ADMITTED_MAX_TARGET) {
      if (s.admitted.size >= ADMITTED_MAX) s.admitted.clear();
      s.admitted.set(target, admitted);
    }
    return admitted;
  };

  const handler = ((req: IncomingMessage, res: ServerResponse) => {
    const started = options.log ? performance.now() : 0;
    const s = state; // one snapshot for the whole request, even if a reload swaps state meanwhile
    let keyName: string | undefined;
    let path = "";
    let result: [number, number];
    const extra: string[] = [];
    try {
      const method = req.method ?? "GET";
      if (method !== "GET" && method !== "HEAD") throw new ApiError(405, "method_not_allowed", `${method} is not allowed; use GET or HEAD`, { Allow: ALLOW });
      // RFC 9112 section 3.2: a request with more than one Host field line is a 400.
      if (hostLines(req.rawHeaders) > 1) throw new ApiError(400, "invalid_request", "more than one Host header");
      const url = req.url ?? "/";
      const nowMs = clock();
      let a = s.admitted.get(url);
      if (a !== undefined) {
        path = a.path;
        keyName = a.credential.name;
        admit(s.keys, req, a.query, nowMs, extra, a.credential);
      } else {
        const target = parseTarget(url, maxUrlLength);
        path = target.path;
        if (path === HEALTH_PATH) {
          result = sendJson(req, res, s.snapshot ? 200 : 503, health(s.snapshot, nowMs));
          return;
        }
        if (!path.startsWith("/v1/")) throw notFound("no such resource: the API's paths start with /v1/");
        const credential = admit(s.keys, req, target.query, nowMs, extra);
        keyName = credential.name;
        a = remember(s, url, path, target.query, credential);
      }
      const { affid, callback } = a;
      const now = Math.floor(nowMs / 1000);
      // s.snapshot and s.resources exist: remember() checked (and a state without them remembers nothing).
      const { body, changesAt, gzip }: Found = a.states === null ? searchBody(s.snapshot!, a.query, now) : s.resources!.at(path, a.states, now);
      let rep: LoadedBlob = body;
      let contentType = JSON_TYPE;
      // A search page is made per request: it is gzipped only when it is sent to a client that accepts gzip.
      let gzipOnDemand = gzip ?? null;
      if (affid || callback) {
        // A search page is made per request: its variants are not cached.
        const v = variants.of(body, affid, callback, a.states !== null);
        rep = v;
        contentType = v.contentType;
        gzipOnDemand = v.gzipOnDemand;
      }
      const ttl = changesAt === null ? maxAge : Math.max(0, Math.min(maxAge, Math.floor((changesAt * 1000 - nowMs) / 1000)));
      result = sendRepresentation(req, res, rep, contentType, ttl, extra, gzipOnDemand);
    } catch (err) {
      result = sendProblem(req, res, toApiError(err), extra);
    } finally {
      if (options.log) {
        const ms = Math.round((performance.now() - started) * 1000) / 1000;
        options.log({ time: new Date().toISOString(), method: req.method ?? "", path: redactPath(path), status: result![0], bytes: result![1], ms, ...(keyName ? { key: keyName } : {}) });
      }
    }
  }) as Handler;

  handler.snapshot = () => {
    if (!state.snapshot) throw new SnapshotError("no snapshot is loaded");
    return state.snapshot;
  };
  handler.stats = () => ({ variantBytes: variants.cache.bytes, variants: variants.cache.size, admittedTargets: state.admitted.size, compressing: compressor.busy });
  handler.reload = async () => {
    const keys = await loadKeyRing(options.keysFile);
    const snapshot = await loadSnapshot(options.dataDir, { previous: state.snapshot });
    const snapshotChanged = snapshot.id !== state.snapshot?.id;
    // New keys (a key may be revoked) or a new snapshot: nothing admitted under the old state is kept.
    state = snapshotChanged ? stateOf(snapshot, keys) : { ...state, keys, admitted: new Map() };
    return { snapshotChanged };
  };
  return handler;
}

/** How many Host field lines a request has (req.headers keeps only the first). */
function hostLines(raw: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    // Compared letter by letter (ASCII case folded with | 0x20) rather than lowercased into a new string.
    if (name.length === 4 && (name.charCodeAt(0) | 0x20) === 0x68 && (name.charCodeAt(1) | 0x20) === 0x6f && (name.charCodeAt(2) | 0x20) === 0x73 && (name.charCodeAt(3) | 0x20) === 0x74) n++;
  }
  return n;
}

/** The path as logged: a run of 32 or more letters and digits may be a key sent in the wrong place, and is never logged. */
export function redactPath(path: string): string {
  return path.replace(/[A-Za-z0-9]{32,}/g, "[redacted]");
}

/** GET /healthz: which snapshot is served, when it was built and how old it is. */
function health(snapshot: LoadedSnapshot | null, nowMs: number) {
  if (!snapshot) return { status: "unavailable", detail: "no snapshot is loaded yet" };
  const builtAt = Date.parse(snapshot.manifest.built_at);
  return { status: "ok", snapshot: snapshot.id, built_at: snapshot.manifest.built_at, age_seconds: Math.max(0, Math.floor((nowMs - builtAt) / 1000)) };
}
