// The snapshot resources' responder (sale lists, sale and product details, categories, sizes): the body in force at
// the request's second, from memory.
import { foundSender } from "../bodies/found.ts";
import type { ResponderModule } from "../responder.ts";

/** Sends the resource's body at this second (admitted requests have a snapshot: a gate without one admits none). */
export const responder: ResponderModule["responder"] = (services) => {
  const send = foundSender(services);
  return (req, res, s, a, info, headers, nowMs) =>
    send(req, res, s.resources!.at(a!.path, a!.states!, Math.floor(nowMs / 1000)), a!, info, headers, nowMs);
};
