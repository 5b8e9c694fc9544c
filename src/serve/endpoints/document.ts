// The documents served without a key (the OpenAPI document and the reference page): from the snapshot's memory,
// with an ETag, Cache-Control and open CORS like every resource, but no key, no rate limit and no variants.
import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError, notFound } from "../../errors.ts";
import type { LoadedSnapshot } from "../../snapshot/load.ts";
import { sendRepresentation } from "../bodies/respond.ts";
import type { ResponderModule } from "../responder.ts";

/** Sends the document at `path` of `snapshot` (a 503 while there is none), fresh for `maxAge` s; returns [status, bytes]. */
function sendDocument(
  req: IncomingMessage,
  res: ServerResponse,
  snapshot: LoadedSnapshot | null,
  path: string,
  maxAge: number,
): [number, number] {
  if (!snapshot) throw new ApiError(503, "service_unavailable", "no snapshot is loaded yet", { "Retry-After": "5" });
  const document = snapshot.documents.get(path);
  if (!document) throw notFound();
  return sendRepresentation(
    req,
    res,
    { body: document.blob, contentType: document.type, gzip: null, brotli: null, scratch: false },
    { ttl: maxAge, headers: [], keyed: false },
  );
}

/** The documents' responder: the document at the request's path, fresh for MAX_AGE. */
export const responder: ResponderModule["responder"] =
  ({ maxAge }) =>
  (req, res, s, _a, info) =>
    sendDocument(req, res, s.snapshot, info.path, maxAge);
