// The handler's options, the log entries it makes, and the handler itself as callers see it.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Config } from "../config/api-settings.ts";
import type { ErrorLog } from "../errors.ts";
import type { KeyRecord } from "../keys/keys-file.ts";
import type { LoadedSnapshot } from "../snapshot/load.ts";
import type { AdmissionOptions } from "./admission/admission.ts";
import type { Metrics } from "./metrics-registry.ts";
import type { EventStreamOptions } from "./events/hub.ts";
import type { Usage } from "../usage/hand-over.ts";

export type { ErrorLog };

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

/**
 * The handler's options: the serving settings of the configuration (src/config/api-settings.ts documents each, with its default;
 * `npm run serve` passes its Config as it is), and what only code can give.
 */
export interface HandlerOptions
  extends
    AdmissionOptions,
    Pick<Config, "dataDir" | "keysFile">,
    Partial<
      Pick<
        Config,
        | "maxAge"
        | "variantCacheBytes"
        | "bodyCacheBytes"
        | "compressSlots"
        | "metricsToken"
        | "waitForSnapshot"
        | "edgeKeyTtl"
        | "edgeKeyHold"
      >
    > {
  /** The clock, epoch ms. Default Date.now. Tests inject one. */
  clock?: () => number;
  /** The event stream's timers, caps and bounds (src/serve/events/hub.ts documents each, with its default). */
  events?: EventStreamOptions;
  /**
   * Usage per key (src/usage/hand-over.ts): every request with a valid key is counted into `meter`, and GET
   * /v1/usage.json reads `figures`; /metrics shows `stats`. Default: nothing counted, and the usage body's `usage` is null.
   */
  usage?: Pick<Usage, "meter" | "figures"> & Partial<Pick<Usage, "stats">>;
  /**
   * The pushes to the fronts (src/edge/pusher.ts): told of the keys at every load, and asked whether a front's check
   * may be held for `edgeKeyHold`. Default none: every check is held `edgeKeyTtl`.
   */
  edge?: EdgeHolds;
  /** Called once per request with its log entry. Default: no logging. */
  log?: (entry: RequestLog) => void;
  /** Called with every unexpected error answered with a 500 (its stack, the request's method and path). Default: none. */
  onError?: (entry: ErrorLog) => void;
}

export interface Handler {
  /**
   * Answers a request; returns the bytes of the body it has written by now (0 for a response sent later: the metrics,
   * a key's usage, an event stream), which the server's send limits count (send-limits.ts).
   */
  (req: IncomingMessage, res: ServerResponse): number;
  /** The snapshot being served (throws while there is none). */
  snapshot(): LoadedSnapshot;
  /** Loads the published snapshot and the keys file again and swaps to them at once. */
  reload(): Promise<{ snapshotChanged: boolean }>;
  /** The size of every structure that grows with traffic (each has a fixed bound). */
  stats(): HandlerStats;
  /** Ends every event stream (clients reconnect elsewhere); the server's graceful close calls it first. */
  endStreams(): void;
  /**
   * Resolves once no gzip template is being made and no calendar feed rendered in the background (tests wait on it
   * instead of sleeping).
   */
  idle(): Promise<void>;
  /** The metrics, when `metricsToken` turned them on (the server adds its connections with `watch`). */
  readonly metrics: Metrics | null;
}

interface HandlerStats {
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
  /**
   * Event streams open, those still writing what they missed (resuming), the bytes all of them hold unsent in this
   * process, streams dropped for not reading, announced/updated events kept for resuming, and streams refused by the
   * cap that was full (src/serve/events/caps.ts).
   */
  events: {
    streams: number;
    replaying: number;
    unsentBytes: number;
    dropped: number;
    swapEvents: number;
    refused: { server: number; key: number; account: number; address: number };
  };
  /** Calendar feeds kept (at most 32, without affid) and rendered so far (src/serve/endpoints/calendar-feeds.ts renders ahead). */
  calendars: { feeds: number; renders: number };
}

/**
 * What the server asks of the pushes to the fronts (src/edge/pusher.ts's EdgePusher has it): told of the keys file's
 * records at every load, and whether a front's check may be held for `edgeKeyHold`. Declared here, where it is used,
 * so that the server does not import the room above it.
 */
export interface EdgeHolds {
  /** The keys file's records as a reload found them. */
  keysLoaded(records: readonly KeyRecord[]): void;
  /** May the check `query` about `hash`, asked by the front named `front`, be held for EDGE_KEY_HOLD? */
  mayHold(front: string | undefined, hash: string, query: string): boolean;
}
