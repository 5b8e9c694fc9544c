// GET /v1/events's responder: a long-lived response (src/serve/events/), outside the caching, ETag and compression
// of every other /v1/ answer.
import type { ResponderModule } from "../responder.ts";

/** Opens the request's event stream (its caps may refuse it). */
export const responder: ResponderModule["responder"] =
  ({ events }) =>
  (req, res, _s, a, _info, headers) =>
    events.open(req, res, a!, headers);
