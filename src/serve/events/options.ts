// GET /v1/events' settings: what a server operator may set (through the handler's options), their defaults, and the
// timers the hub runs on unless a test gives its own.
import type { Scheduler } from "./instant-timer.ts";

export interface EventStreamOptions {
  /** The timers the hub uses. Default: node's, unref'd (they never keep the process alive). */
  scheduler?: Scheduler;
  /** Interval between comment lines on every stream, ms. Default 15 000 (proxies close streams idle for long). */
  heartbeatMs?: number;
  /** The `retry:` sent on connect: how long a client waits before reconnecting, ms. Default 2 000. */
  retryMs?: number;
  /** Streams open at once on this server; more are a 503. Default 10 000. */
  maxStreams?: number;
  /** Streams open at once per key; more are a 429. Default 16. */
  maxStreamsPerKey?: number;
  /**
   * Streams open at once per account, over all its keys (a portal partner's keys, `p.<account>.<key>`; a key made by
   * `npm run keys` is an account of its own); more are a 429. Default 64 (without it, an account's 10 keys held 160).
   */
  maxStreamsPerAccount?: number;
  /** Streams open at once per client address (IPv6: per /64, as the API's limits count it); more are a 429. Default 256. */
  maxStreamsPerAddress?: number;
  /**
   * Proxies whose X-Forwarded-For names the client of a stream (addresses or networks, as the handler's `trustProxy`,
   * which the handler passes). Default: none, the client is the TCP peer.
   */
  trustProxy?: readonly string[];
  /**
   * Bytes a stream may hold unsent in this process (past the kernel's buffers) before it is dropped. Default 65 536.
   * A stream that holds any for `heartbeatMs` (its client has taken nothing meanwhile) is dropped too.
   */
  maxUnsentBytes?: number;
  /** How far back Last-Event-ID resumes, seconds. Default 86 400 (24 hours). */
  replaySeconds?: number;
  /** Announced/updated events kept for resuming (the oldest are forgotten first). Default 10 000. */
  maxSwapEvents?: number;
  /**
   * Longest an event's fan-out (to every stream) holds the event loop at a stretch, ms. Default 100: at 10,000 streams
   * one goes out whole (65-90 ms here), as fast as the server can write it; more streams, and the rest go after the
   * requests that waited (fan-out.ts says why not in short slices).
   */
  eventSliceMs?: number;
  /** The same for a heartbeat, which has no hurry, ms. Default 4. */
  heartbeatSliceMs?: number;
}

export const EVENT_DEFAULTS: Required<Omit<EventStreamOptions, "scheduler" | "trustProxy">> = {
  heartbeatMs: 15_000,
  retryMs: 2_000,
  maxStreams: 10_000,
  maxStreamsPerKey: 16,
  maxStreamsPerAccount: 64,
  maxStreamsPerAddress: 256,
  maxUnsentBytes: 65_536,
  replaySeconds: 86_400,
  maxSwapEvents: 10_000,
  eventSliceMs: 100,
  heartbeatSliceMs: 4,
};

export const NODE_TIMERS: Scheduler = {
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
