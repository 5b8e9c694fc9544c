// GET /v1/events: Server-Sent Events of sales beginning, ending, announced and updated, fanned out from one timer.
//
// Design (the invariants every change must keep):
// - One timer per process, armed for the next begins/ends instant of the snapshot served (schedule.ts), never one
//   per stream, and kept to the millisecond (instant-timer.ts). When it fires it reads the clock, sends every event
//   placed in (through, now] and re-arms: one that fires late sends what it passed, in order. No event is sent before
//   its instant.
// - Streams are grouped by what they are sent (affid, store and type filters: groups.ts). The next instant's frames
//   are rendered for each group as soon as the timer is armed (frames.ts), but for their `sent`, which is filled in as
//   the batch goes out; each group's bytes are written to every stream of the group, straight to the stream's socket
//   (node's response, which ends the stream, sent only its head), one write a stream and batch, in slices that bound
//   how long other requests wait (fan-out.ts): up to 100 ms for an event, 4 ms for a heartbeat, which an event
//   overtakes.
// - A stream's ID sequence is the order (pos, rank, id) of schedule.ts; Last-Event-ID resumes after the event it
//   names: begins/ends are recomputed from the snapshot (24 h back), announced/updated come from this process's
//   memory of its recent swaps (bounded), so those resume on the server that sent them only (replay.ts). What a stream
//   missed is written as its client reads it, and what comes meanwhile is queued behind it (resume.ts).
// - Bounded: streams per key, per account, per client address and per server are capped (429, 503), each place taken
//   before the stream is admitted (caps.ts); a stream whose unsent bytes in this process pass `maxUnsentBytes` is
//   dropped, and so is one that has held any unsent for `heartbeatMs` (heartbeats alone, too), or a resuming one that
//   has not read for as long; the frames rendered ahead are capped (groups.ts); close() ends every stream (the
//   server's graceful close calls it).
import cluster from "node:cluster";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { ApiError } from "../../errors.ts";
import type { LoadedSnapshot } from "../../snapshot/load.ts";
import type { Admitted } from "../admission/admission.ts";
import { createClientLimitKey } from "../admission/client-address.ts";
import { createStreamCaps } from "./caps.ts";
import { createFanOut } from "./fan-out.ts";
import type { Joined } from "./fan-out.ts";
import { fill, HEARTBEAT } from "./frames.ts";
import type { Bytes, SaleBytes, Template } from "./frames.ts";
import { createGroups, filtersOf, render } from "./groups.ts";
import type { Group } from "./groups.ts";
import { createInstantTimer } from "./instant-timer.ts";
import type { Scheduler } from "./instant-timer.ts";
import { EVENT_DEFAULTS, NODE_TIMERS } from "./options.ts";
import type { EventStreamOptions } from "./options.ts";
import { createReplay } from "./replay.ts";
import type { Replay } from "./replay.ts";
import { createResumer } from "./resume.ts";
import type { Resuming } from "./resume.ts";
import { createSchedule, firstAfter, swapEvents } from "./schedule.ts";
import type { SaleEvent, Schedule } from "./schedule.ts";

export type { Scheduler } from "./instant-timer.ts";
export type { EventStreamOptions } from "./options.ts";

interface Stream extends Joined, Resuming {
  res: ServerResponse;
  /**
   * The socket its bytes are written to directly, or null to write through `res` (a response queued behind another
   * on its connection has no socket yet). See `deliver`.
   */
  socket: Socket | null;
  /** Whether its socket is written HTTP/1.1 chunks (an HTTP/1.0 response is sent as it is, until the connection closes). */
  chunked: boolean;
  group: Group<Stream>;
  /**
   * Since when (the clock's ms) this process has held bytes of it unsent, its client taking none (the kernel's
   * buffers full); null while it holds none.
   */
  heldSince: number | null;
}

/** Under WORKERS=N, which worker holds a stream (said in its first comment, as /healthz says it): each sends alike. */
const WORKER = cluster.worker ? ` worker ${cluster.worker.id}` : "";

const HEADERS = [
  "Content-Type",
  "text/event-stream",
  "Cache-Control",
  "no-store",
  "Access-Control-Allow-Origin",
  "*",
  // nginx: do not buffer this response (deploy/ passes it through as it is).
  "X-Accel-Buffering",
  "no",
];

/** Creates the event hub of a handler: `open` answers GET /v1/events, `swap` follows the snapshot served. */
export function createEventHub(clock: () => number, options: EventStreamOptions = {}) {
  const o = { ...EVENT_DEFAULTS, ...options };
  const timers = options.scheduler ?? NODE_TIMERS;
  const streams = new Set<Stream>();
  const caps = createStreamCaps(o);
  const clientAddress = createClientLimitKey(options.trustProxy ?? []);
  const through = Math.floor(clock() / 1000);
  const replay = createReplay(o);
  const delivery = createDelivery(clock, o, replay, (s, events) => {
    const t = render(events, s.group, salesNow(hub));
    return t === null ? null : fill(t, new Date(clock()).toISOString());
  });
  const groups = createGroups<Stream>((): number => fan.seq);
  const fan = createFanOut(groups.all, delivery.deliver);
  const hub: Hub = {
    clock,
    o,
    timers,
    streams,
    caps,
    clientAddress,
    replay,
    resumer: delivery.resumer,
    groups,
    fan,
    timer: createInstantTimer(
      clock,
      timers,
      () => fire(hub),
      () => streams.size > 0,
    ),
    beat: () => beat(hub),
    schedule: null,
    through,
    heartbeat: null,
    closed: false,
  };

  return {
    /** Answers an admitted GET or HEAD /v1/events: the stream's headers, and on GET the stream. */
    open: (req: IncomingMessage, res: ServerResponse, a: Admitted, headers: readonly string[]): [number, number] =>
      openStream(hub, req, res, a, headers),

    /** Follows a swap to `snapshot`: sends what fell due under the old one, then what the swap changed. */
    swap: (snapshot: LoadedSnapshot | null): void => followSwap(hub, snapshot),

    /** Ends every stream (clients reconnect elsewhere) and stops the timers; new streams get a 503. */
    close: (): void => closeStreams(hub),

    stats: () => {
      // Bytes the streams hold unsent in this process (kernel buffers aside).
      let unsentBytes = 0;
      for (const st of streams) unsentBytes += (st.socket ?? st.res).writableLength;
      return {
        streams: streams.size,
        replaying: delivery.resumer.replaying,
        unsentBytes,
        dropped: delivery.dropped(),
        swapEvents: replay.size,
        refused: { ...caps.refused },
      };
    },
  };
}

/**
 * What the hub's steps below share: its parts, made once, and the state they follow (the schedule served, the instant
 * sent through, the heartbeat's timer, closed). `deliver`, which writes every batch to every stream, reads none of it
 * (createDelivery).
 */
interface Hub {
  readonly clock: () => number;
  readonly o: typeof EVENT_DEFAULTS;
  readonly timers: Scheduler;
  readonly streams: Set<Stream>;
  readonly caps: ReturnType<typeof createStreamCaps>;
  readonly clientAddress: (req: IncomingMessage) => string;
  readonly replay: Replay;
  readonly resumer: Resumer;
  readonly groups: ReturnType<typeof createGroups<Stream>>;
  readonly fan: ReturnType<typeof createFanOut<Stream, Group<Stream>, Bytes>>;
  readonly timer: ReturnType<typeof createInstantTimer>;
  /** The heartbeat's callback (made once: each beat sets the timer of the next). */
  readonly beat: () => void;
  schedule: Schedule | null;
  /** Events placed at or before this second have been sent (or were due before any stream could want them). */
  through: number;
  heartbeat: unknown;
  closed: boolean;
}

type Resumer = ReturnType<typeof createResumer<Stream>>;

/**
 * The writing of every batch to a stream (`deliver`), the dropping of a stream that does not read, and the resumer
 * that writes resuming streams what they missed (through `write`, with `frames`); `dropped` counts the streams dropped.
 */
function createDelivery(
  clock: () => number,
  o: typeof EVENT_DEFAULTS,
  replay: Replay,
  frames: (s: Stream, events: readonly SaleEvent[]) => Bytes | null,
) {
  let dropped = 0;

  /**
   * Writes a batch's bytes to a stream, unless it has stopped reading. Straight to its socket, in one write: the
   * response's own write costs a size line, the data and a CRLF, written together at the next tick, for each stream
   * (through it, an event reached the last of 10,000 streams 115 ms after its instant; directly, 100-106 ms). Its
   * head went through the response, which still ends it. The one function that writes every batch, events and
   * heartbeats alike (fan-out.ts says why).
   */
  const deliver = (s: Stream, bytes: Bytes) => {
    if (s.queued !== null) return resumer.queue(s, bytes);
    if (stalled(s)) return;
    if (!write(s, bytes) && s.heldSince === null) s.heldSince = clock();
  };
  /** Writes to the stream; false once what it holds unsent passes node's mark (wait for 'drain' to write more). */
  const write = (s: Stream, bytes: Bytes): boolean =>
    s.socket !== null ? s.socket.write(s.chunked ? bytes.chunked : bytes.plain) : s.res.write(bytes.plain);

  const resumer = createResumer<Stream>({
    clock,
    replay,
    heartbeatMs: o.heartbeatMs,
    frames,
    write,
    deliver,
    onDrop: () => dropped++,
  });

  /**
   * Drops a stream whose earlier writes still hold more than `maxUnsentBytes` in this process (the kernel's buffers
   * being full): a client that does not read; and one that has held any bytes unsent for `heartbeatMs`, however few
   * (a client that stopped reading, sent only heartbeats since). Looked at before each write (a heartbeat's too),
   * so that one large batch (a thousand sales beginning at once) does not drop a client that reads it. Unsent bytes
   * only shrink between writes: held before this write and before the last one (or after it), held throughout.
   */
  const stalled = (s: Stream): boolean => {
    if (s.res.destroyed) return true; // dropped already (it leaves `streams` once its socket has closed)
    // A direct stream's response holds nothing itself: its socket's count is the whole (and cheaper to read).
    const held = (s.socket ?? s.res).writableLength;
    if (held === 0) {
      s.heldSince = null;
      return false;
    }
    if (held <= o.maxUnsentBytes) {
      const now = clock();
      if (s.heldSince === null) s.heldSince = now;
      if (now - s.heldSince < o.heartbeatMs) return false;
    }
    dropped++;
    s.res.destroy();
    return true;
  };

  return { deliver, resumer, dropped: (): number => dropped };
}

/** Answers an admitted GET or HEAD /v1/events: the stream's headers, and on GET the stream. */
function openStream(
  hub: Hub,
  req: IncomingMessage,
  res: ServerResponse,
  a: Admitted,
  headers: readonly string[],
): [number, number] {
  const { stores, types } = filtersOf(a.query);
  if (hub.closed) throw new ApiError(503, "service_unavailable", "the server is closing", { "Retry-After": "1" });
  // Its place under every cap, taken now (throws the 429 or 503 of a full one), before anything is sent.
  const release = hub.caps.take(a.credential.name, hub.clientAddress(req));
  if (req.method === "HEAD") release();
  else res.once("close", release);
  res.writeHead(200, [...HEADERS, ...headers]);
  if (req.method === "HEAD") {
    res.end();
    return [200, 0];
  }
  req.socket.setNoDelay(true);
  req.socket.setTimeout(0);
  const group = hub.groups.of(a.affid, stores, types);
  const stream: Stream = {
    since: hub.fan.seq,
    res,
    socket: null,
    chunked: false,
    group,
    backlog: null,
    queued: null,
    waitingSince: null,
    heldSince: null,
  };
  hub.groups.join(stream);
  hub.streams.add(stream);
  res.once("close", () => {
    hub.resumer.stop(stream);
    hub.streams.delete(stream);
    hub.groups.leave(stream);
  });
  const now = Math.floor(hub.clock() / 1000);
  if (now < hub.through) fire(hub);
  const head = Buffer.from(`retry: ${hub.o.retryMs}\n: ${hub.schedule?.snapshot.id ?? "no snapshot"}${WORKER}\n\n`);
  const lastId = req.headers["last-event-id"];
  const missed =
    typeof lastId === "string" ? hub.replay.cursor(hub.schedule, lastId.trim(), Math.min(now, hub.through)) : null;
  res.write(head);
  // Once the head is out, the socket is the response's alone for as long as the stream lasts; a response queued
  // behind another one on its connection has no socket yet, and keeps writing through node's response.
  stream.socket = res.socket;
  stream.chunked = stream.socket !== null && res.chunkedEncoding;
  if (missed !== null) hub.resumer.start(stream, missed);
  if (hub.heartbeat === null) hub.heartbeat = hub.timers.setTimeout(hub.beat, hub.o.heartbeatMs);
  return [200, head.length];
}

/** Follows a swap to `snapshot`: sends what fell due under the old one, then what the swap changed. */
function followSwap(hub: Hub, snapshot: LoadedSnapshot | null): void {
  if (!snapshot || snapshot === hub.schedule?.snapshot) return;
  if (hub.timer.armed) fire(hub); // what the old snapshot owed, before its bodies are let go
  // A stream still writing what it missed reads the old snapshot's bodies, and its place in them: it is ended, and
  // its client resumes from its last event on the new one.
  if (hub.resumer.replaying > 0) for (const s of hub.streams) if (s.backlog !== null) end(hub, s);
  const next = createSchedule(snapshot);
  const now = Math.floor(hub.clock() / 1000);
  const changes = hub.schedule ? swapEvents(hub.schedule, next, now) : [];
  hub.schedule = next;
  hub.replay.record(changes, snapshot, now);
  fanOut(hub, changes, null);
  arm(hub);
}

/** Ends every stream (clients reconnect elsewhere) and stops the timers; new streams get a 503. */
function closeStreams(hub: Hub): void {
  hub.closed = true;
  hub.timer.clear();
  if (hub.heartbeat !== null) hub.timers.clearTimeout(hub.heartbeat);
  hub.heartbeat = null;
  hub.groups.forget();
  hub.fan.clear();
  for (const s of hub.streams) end(hub, s);
}

/** Ends a stream: its client reconnects, and resumes from the last event it got. */
function end(hub: Hub, s: Stream): void {
  hub.resumer.stop(s);
  s.res.end();
}

/** How a batch reads its sales: from the snapshot served when it was made (a swap may come while it goes out). */
function salesNow(hub: Hub): (event: SaleEvent) => SaleBytes {
  const bodies = hub.schedule?.snapshot.bodies;
  const replay = hub.replay;
  return (event: SaleEvent): SaleBytes => replay.bytes(event) ?? bodies!.get(event.body);
}

/** Writes `events` to every stream that wants them, with the frames rendered ahead for them, by group, if any. */
function fanOut(hub: Hub, events: readonly SaleEvent[], ahead: Map<Group<Stream>, Template | null> | null): void {
  if (events.length === 0 || hub.streams.size === 0) return;
  const sent = new Date(hub.clock()).toISOString();
  const sales = salesNow(hub);
  hub.fan.push(
    (g) => {
      let t = ahead?.get(g);
      if (t === undefined) t = render(events, g, sales);
      return t === null ? null : fill(t, sent);
    },
    hub.o.eventSliceMs,
    true,
  );
}

/** Sends the begins/ends events due by now, then waits for the next instant. */
function fire(hub: Hub): void {
  const now = Math.floor(hub.clock() / 1000);
  if (now < hub.through) hub.through = now; // the clock was set back (tests): what comes after it is due again
  if (hub.schedule && now > hub.through) {
    const { events } = hub.schedule;
    const due = events.slice(firstAfter(events, hub.through), firstAfter(events, now));
    hub.through = now;
    fanOut(hub, due, hub.groups.take(due));
  }
  arm(hub);
}

/** Sets the timer for the next instant, and renders that instant's frames for every group meanwhile. */
function arm(hub: Hub): void {
  hub.timer.clear();
  if (!hub.schedule || hub.closed) return;
  const { events } = hub.schedule;
  const next = events[firstAfter(events, hub.through)];
  if (!next) return hub.groups.forget();
  hub.timer.at(next.pos * 1000);
  hub.groups.prepare(events.slice(firstAfter(events, hub.through), firstAfter(events, next.pos)), salesNow(hub));
}

/** A heartbeat to every stream, and the next one set, while any stream is open. */
function beat(hub: Hub): void {
  hub.heartbeat = null;
  if (hub.streams.size === 0 || hub.closed) return;
  hub.fan.push(() => HEARTBEAT, hub.o.heartbeatSliceMs, false);
  hub.heartbeat = hub.timers.setTimeout(hub.beat, hub.o.heartbeatMs);
}
