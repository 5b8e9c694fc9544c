// The handler's options, the log entries it makes, and the handler itself as callers see it.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { LoadedSnapshot } from "../snapshot/load.ts";
import type { AdmissionOptions } from "./admission.ts";
import type { Metrics } from "./metrics.ts";

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

/** An unexpected error, as one log line: never the query string (and so never a key). */
export interface ErrorLog {
  time: string;
  /** "warn": the server goes on as it should (Redis down: limits per process); "error": something failed. */
  level: "error" | "warn";
  event: string;
  method?: string;
  path?: string;
  error: { name: string; message: string; stack?: string };
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
  /** Memory for cached affid/JSONP variants, bytes. Default DEFAULT_VARIANT_CACHE_BYTES (32 MB). */
  variantCacheBytes?: number;
  /** Memory for resource bodies read from the packs, bytes. Default DEFAULT_BODY_CACHE_BYTES (1 GB). */
  bodyCacheBytes?: number;
  /** Bodies compressed with brotli in the background at once (sale lists, popular variants). Default DEFAULT_COMPRESS_SLOTS (2). */
  compressSlots?: number;
  /** Called once per request with its log entry. Default: no logging. */
  log?: (entry: RequestLog) => void;
  /**
   * Turns metrics on: `GET /metrics` answers the Prometheus exposition to a request with `Authorization: Bearer
   * <metricsToken>`, and a 401 to any other. Default: off (no counting; /metrics is a 404).
   */
  metricsToken?: string;
  /** Called with every unexpected error answered with a 500 (its stack, the request's method and path). Default: none. */
  onError?: (entry: ErrorLog) => void;
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
  /** Resolves once no gzip template is being made in the background (tests wait on it instead of sleeping). */
  idle(): Promise<void>;
  /** The metrics, when `metricsToken` turned them on (the server adds its connections with `watch`). */
  readonly metrics: Metrics | null;
}

export interface HandlerStats {
  /** Bytes and entries in the affid/JSONP variant cache, gzip templates of lists included (at most `variantCacheBytes`). */
  variantBytes: number;
  variants: number;
  /** Request targets remembered (at most ADMITTED_MAX). */
  admittedTargets: number;
  /** Bodies being compressed in the background (at most `compressSlots`). */
  compressing: number;
  /** Bytes and entries of resource bodies held in memory (at most `bodyCacheBytes`), and reads from the packs so far. */
  bodyBytes: number;
  bodies: number;
  bodyReads: number;
}
