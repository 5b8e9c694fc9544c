// What answers a request once admission has said what it asks for: one responder for each kind of endpoint (the
// endpoint table's `answer`, src/api/endpoints.ts), kept in src/serve/endpoints/<answer>.ts as its `responder`. The
// handler loads them by that name at start-up, so a new kind of endpoint is a row in the table and one file.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Answer } from "../api/endpoints.ts";
import type { LoadedSnapshot } from "../snapshot/load.ts";
import type { Admitted, Gate, RequestInfo } from "./admission/admission.ts";
import type { createVariants } from "./bodies/variants.ts";
import type { Resources } from "./bodies/response-body.ts";
import type { createCalendarFeeds } from "./endpoints/calendar-feeds.ts";
import type { Metrics } from "./metrics-registry.ts";
import type { createEventHub } from "./events/hub.ts";
import type { HandlerOptions } from "./handler-types.ts";

/** What a response sent: its status, and the bytes of its body. */
export type Sent = [status: number, bytes: number];

/** Everything one request reads, swapped as one object so a request never sees two snapshots. */
export interface State {
  snapshot: LoadedSnapshot | null;
  resources: Resources | null;
  /** Admission under this state's keys and paths (and the request targets it remembers). */
  gate: Gate;
}

/**
 * Answers one admitted request: `a` is what admission found (null for an endpoint without a key), `s` the state it
 * was admitted under, `headers` the headers admission added (RateLimit-*). Returns what was sent, or a promise of it
 * for a response sent once something is made in the background (it is logged then). Positional, not an object:
 * nothing is made per request to call it.
 */
export type Responder = (
  req: IncomingMessage,
  res: ServerResponse,
  s: State,
  a: Admitted | null,
  info: RequestInfo,
  headers: string[],
  nowMs: number,
) => Sent | Promise<Sent>;

/** What the handler makes once and every responder may use. */
export interface Services {
  options: HandlerOptions;
  /** Freshness of a response that does not change sooner, s. */
  maxAge: number;
  variants: ReturnType<typeof createVariants>;
  feeds: ReturnType<typeof createCalendarFeeds>;
  events: ReturnType<typeof createEventHub>;
  metrics: Metrics | null;
}

/** A src/serve/endpoints/<answer>.ts module: its responder, made once from the services. */
export interface ResponderModule {
  responder: (services: Services) => Responder;
}

/** Loads the responder of every kind in `kinds` (src/serve/endpoints/<kind>.ts), made from `services`. */
export async function loadResponders(kinds: Iterable<Answer>, services: Services): Promise<Record<Answer, Responder>> {
  const entries = await Promise.all(
    [...new Set(kinds)].map(async (kind) => {
      const module = (await import(`./endpoints/${kind}.ts`)) as Partial<ResponderModule>;
      if (typeof module.responder !== "function")
        throw new Error(`src/serve/endpoints/${kind}.ts exports no responder for the endpoints that answer "${kind}"`);
      return [kind, module.responder(services)] as const;
    }),
  );
  return Object.fromEntries(entries) as Record<Answer, Responder>;
}
