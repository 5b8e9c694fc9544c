// The configuration the benchmark hands each server process (written as JSON, read by server-child.ts).

/** One encoding of a bare-server route: the body file and the response headers, as a flat [name, value, ...] list. */
export interface BareBody {
  file: string;
  headers: string[];
}

export interface BareRoute {
  /** The request target, query string included, exactly as wrk sends it. */
  url: string;
  identity: BareBody;
  /** Sent when Accept-Encoding mentions br; null when the handler had no brotli body. */
  br: BareBody | null;
}

export type ChildConfig =
  | {
      mode: "handler";
      host: string;
      port: number;
      dataDir: string;
      keysFile: string;
      /** createHandler's failed-authentication limit per address; its default when absent. */
      authFailureLimit?: { rate: number; burst: number };
    }
  | { mode: "bare"; host: string; port: number; routes: BareRoute[] }
  | { mode: "serve-handler"; host: string; port: number; publicDir: string };

export type ServerMode = ChildConfig["mode"];
