// GET /healthz: whether a snapshot is served, which, and how old it is (no key needed).
import cluster from "node:cluster";
import type { LoadedSnapshot } from "../../snapshot/load.ts";
import { sendJson } from "../bodies/respond.ts";
import type { ResponderModule } from "../responder.ts";

/** GET /healthz: which snapshot is served, when it was built and how old it is. */
function health(snapshot: LoadedSnapshot | null, nowMs: number) {
  if (!snapshot) return { status: "unavailable", detail: "no snapshot is loaded yet" };
  const builtAt = Date.parse(snapshot.manifest.built_at);
  return {
    status: "ok",
    snapshot: snapshot.id,
    built_at: snapshot.manifest.built_at,
    age_seconds: Math.max(0, Math.floor((nowMs - builtAt) / 1000)),
    // Under WORKERS=N, which worker answered: each holds its own copy of the snapshot and switches on its own.
    ...(cluster.worker ? { worker: cluster.worker.id } : {}),
  };
}

/** GET /healthz's responder: a 503 while no snapshot is loaded. */
export const responder: ResponderModule["responder"] = () => (req, res, s, _a, _info, _headers, nowMs) =>
  sendJson(req, res, s.snapshot ? 200 : 503, health(s.snapshot, nowMs));
