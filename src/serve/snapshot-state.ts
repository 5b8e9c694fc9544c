// The snapshot and keys a request is answered from: loaded at start (loudly refused if missing or corrupt), and
// swapped as one State on reload, so a request never sees two snapshots; the packs only a replaced snapshot used are
// closed once no request can read them.
import { DEFAULT_BODY_CACHE_BYTES } from "../config/defaults.ts";
import { BodyCache } from "../snapshot/body-cache.ts";
import type { LoadedSnapshot } from "../snapshot/load.ts";
import { closeUnusedPacks, loadSnapshot, SnapshotError } from "../snapshot/load.ts";
import { createAdmission } from "./admission/admission.ts";
import type { KeyRing } from "./admission/api-key-check.ts";
import { createKeyRing } from "./admission/api-key-check.ts";
import { loadKeysFile } from "../keys/keys-file.ts";
import type { createCompressor } from "./bodies/compressor.ts";
import { createResources } from "./endpoints/resource.ts";
import type { createCalendarFeeds } from "./endpoints/calendar-feeds.ts";
import type { createEventHub } from "./events/hub.ts";
import type { HandlerOptions } from "./handler-types.ts";
import type { State } from "./responder.ts";

/** How long a reload waits before closing the packs only the snapshot it replaced used (no request reads them then). */
const PACK_CLOSE_DELAY_MS = 30_000;

interface StateParts {
  clock: () => number;
  compressor: ReturnType<typeof createCompressor>;
  feeds: ReturnType<typeof createCalendarFeeds>;
}

/** Loads the snapshot and keys; returns the state holder, its body cache, and `attach` for the event hub. */
export async function loadState(options: HandlerOptions, { clock, compressor, feeds }: StateParts) {
  const gate = createAdmission(options);
  const stateOf = (snapshot: LoadedSnapshot | null, keys: KeyRing): State => {
    const resources = snapshot ? createResources(snapshot, compressor) : null;
    resources?.warm(Math.floor(clock() / 1000));
    if (resources && snapshot) feeds.warm(resources, snapshot);
    return { snapshot, resources, gate: gate(keys, resources) };
  };
  const bodies = new BodyCache(options.bodyCacheBytes ?? DEFAULT_BODY_CACHE_BYTES);
  let initial: LoadedSnapshot | null = null;
  try {
    initial = await loadSnapshot(options.dataDir, { bodies });
  } catch (err) {
    if (!(options.waitForSnapshot && err instanceof SnapshotError)) throw err;
  }
  // The key ring, and the fronts told of the keys it was made from (src/edge/): at once, so that no check is answered
  // under keys the fronts have not been told of.
  const loadKeys = async () => {
    const { keys } = await loadKeysFile(options.keysFile);
    return { ring: createKeyRing(keys), told: () => options.edge?.keysLoaded(keys) };
  };
  const first = await loadKeys();
  // The state a request is answered from (read once a request), swapped whole by `reload`: a field, not a getter,
  // which was a call into this file per request.
  const held = { current: stateOf(initial, first.ring) };
  first.told();
  let events: ReturnType<typeof createEventHub> | null = null;

  /** Loads the published snapshot and the keys again and swaps to them at once. */
  const reload = async () => {
    const loaded = await loadKeys();
    const keys = loaded.ring;
    const state = held.current;
    let snapshot: LoadedSnapshot;
    try {
      snapshot = await loadSnapshot(options.dataDir, { previous: state.snapshot, bodies });
    } catch (err) {
      // The new keys hold even when the snapshot is refused: a key revoked as a broken snapshot is published is revoked.
      held.current = { ...held.current, gate: gate(keys, held.current.resources) };
      loaded.told();
      throw err;
    }
    const old = state.snapshot;
    const snapshotChanged = snapshot.id !== old?.id;
    // New keys (a key may be revoked) or a new snapshot: a new gate, so nothing admitted under the old state is kept.
    held.current = snapshotChanged ? stateOf(snapshot, keys) : { ...state, gate: gate(keys, state.resources) };
    loaded.told();
    if (snapshotChanged) events?.swap(snapshot);
    // Requests read bodies synchronously, so none reads the replaced snapshot's packs once this turn is over; the
    // wait covers the sale list composed ahead of time (endpoints/resource.ts) and leaves room to spare.
    const served = held.current.snapshot;
    if (old && old !== served) setTimeout(() => closeUnusedPacks(old, served), PACK_CLOSE_DELAY_MS).unref();
    return { snapshotChanged };
  };

  return Object.assign(held, {
    bodies,
    reload,
    /** The event hub, told of every new snapshot from now on (and of the current one). */
    attach(hub: ReturnType<typeof createEventHub>) {
      events = hub;
      hub.swap(held.current.snapshot);
    },
  });
}
