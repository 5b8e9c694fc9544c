// Test helpers for GET /v1/events: a timer scheduler that follows the injected clock, and an SSE client over http.
import { request } from "node:http";
import type { IncomingMessage } from "node:http";
import type { Scheduler } from "../../src/serve/events/hub.ts";

/** Timers on the test's clock (epoch seconds in `clock.now`): `advanceTo` moves the clock and runs what fell due. */
export function clockScheduler(clock: { now: number }) {
  const timers = new Map<number, { fn: () => void; due: number }>();
  let n = 0;
  const scheduler: Scheduler = {
    setTimeout(fn, ms) {
      timers.set(++n, { fn, due: clock.now * 1000 + ms });
      return n;
    },
    clearTimeout: (handle) => void timers.delete(handle as number),
  };
  return {
    scheduler,
    /**
     * Runs every timer due by `seconds`, soonest first, each with the clock at its due time (as a real clock would be
     * when it fires), then sets the clock to `seconds` (at most 10,000 timers).
     */
    advanceTo: (seconds: number): void => {
      for (let i = 0; i < 10_000; i++) {
        let next: [number, { fn: () => void; due: number }] | undefined;
        for (const entry of timers)
          if (entry[1].due <= seconds * 1000 && (!next || entry[1].due < next[1].due)) next = entry;
        if (!next) {
          clock.now = seconds;
          return;
        }
        timers.delete(next[0]);
        clock.now = Math.max(clock.now, next[1].due / 1000);
        next[1].fn();
      }
      throw new Error("timers kept falling due");
    },
  };
}

interface SseEvent {
  id: string;
  event: string;
  data: string;
}

/** An open stream: its response, the events and comments parsed so far (per the WHATWG rules used here). */
export interface SseClient {
  res: IncomingMessage;
  events: SseEvent[];
  comments: string[];
  retry: number | null;
  ended: boolean;
  /** Resolves once `predicate` holds, polling every 5 ms; rejects after `ms`. */
  until(predicate: () => boolean, ms?: number): Promise<void>;
  close(): void;
}

/** Opens `url` as an event stream (status 200 expected; otherwise resolves with the response and no events). */
export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: "text/event-stream", ...headers } }, (res) => {
      const client: SseClient = {
        res,
        events: [],
        comments: [],
        retry: null,
        ended: false,
        until: (predicate, ms = 5_000) => poll(predicate, ms),
        close: () => req.destroy(),
      };
      let buffer = "";
      let current: Partial<SseEvent> = {};
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (line === "") {
            if (current.data !== undefined)
              client.events.push({ id: current.id ?? "", event: current.event ?? "message", data: current.data });
            current = {};
          } else if (line.startsWith(":")) client.comments.push(line.slice(1).trim());
          else {
            const colon = line.indexOf(":");
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
            if (field === "data") current.data = current.data === undefined ? value : `${current.data}\n${value}`;
            else if (field === "id") current.id = value;
            else if (field === "event") current.event = value;
            else if (field === "retry") client.retry = Number(value);
          }
        }
      });
      const end = () => (client.ended = true);
      res.on("end", end);
      res.on("close", end);
      res.on("error", end);
      resolve(client);
    });
    req.on("error", reject);
    req.end();
  });
}

/** Resolves once `predicate` holds, looking every 5 ms; rejects after `ms`. */
export async function poll(predicate: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}
