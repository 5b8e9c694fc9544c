// A body found for a /v1/ request (a snapshot resource, or a search page) sent as the variant the request asks for
// (affid, JSONP, encoding), or its 404, fresh until the answer next changes.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Admitted, RequestInfo } from "../admission/admission.ts";
import { jsonpOf } from "../admission/request-guards.ts";
import { KEYED_PROBLEM_HEADERS, sendProblem, sendRepresentation } from "./respond.ts";
import { Missing } from "./resources.ts";
import type { Found } from "./response-body.ts";
import type { createVariants } from "./variants.ts";

/** Returns send(req, res, found, a, info, headers, nowMs): `found` sent for `a` at `nowMs`. */
export function foundSender({ variants, maxAge }: { variants: ReturnType<typeof createVariants>; maxAge: number }) {
  return (
    req: IncomingMessage,
    res: ServerResponse,
    found: Found | Missing,
    a: Admitted,
    info: RequestInfo,
    headers: string[],
    nowMs: number,
  ): [status: number, bytes: number] => {
    const { changesAt } = found;
    const ttl =
      changesAt === null ? maxAge : Math.max(0, Math.min(maxAge, Math.floor((changesAt * 1000 - nowMs) / 1000)));
    if (found instanceof Missing) {
      // A 404 a cache may keep (a sale that has ended): kept apart by the key's headers like any keyed answer.
      for (let i = 0; i < KEYED_PROBLEM_HEADERS.length; i++) headers.push(KEYED_PROBLEM_HEADERS[i]!);
      return sendProblem(req, res, found.error, headers, jsonpOf(info.query), ttl);
    }
    const { body, gzip, perRequest } = found;
    const rep = variants.represent({ body, changesAt, gzip, perRequest }, a.affid, a.callback);
    return sendRepresentation(req, res, rep, { ttl, headers, keyed: true });
  };
}
