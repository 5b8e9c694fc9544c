// EDGE_FRONTS as fronts to push to: one constructor a kind (add a kind here and in src/config/edge-fronts.ts).
import type { FrontConfig, FrontKind } from "../config/edge-fronts.ts";
import type { Front } from "./front.ts";
import { createNginxFront } from "./nginx.ts";
import type { RememberingFront } from "./nginx.ts";
import { createVarnishFront } from "./varnish.ts";

/** A front as the pusher holds it: one that remembers what it held (nginx) is told of every long hold. */
export type PushedFront = Front & Partial<Pick<RememberingFront, "remember">>;

/** The constructor of each kind of front; a kind without one (not built yet) is refused at start. */
const FRONT_MAKERS: Partial<Record<FrontKind, (name: string, url: string) => PushedFront>> = {
  nginx: createNginxFront,
  varnish: createVarnishFront,
};

/** The fronts of EDGE_FRONTS; throws for a kind this build cannot push to. */
export function createFronts(configs: readonly FrontConfig[]): PushedFront[] {
  return configs.map((c) => {
    const make = FRONT_MAKERS[c.kind];
    if (!make) throw new Error(`EDGE_FRONTS: front ${c.name}: pushes to a ${c.kind} front are not available`);
    return make(c.name, c.url);
  });
}
