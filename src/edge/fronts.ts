// EDGE_FRONTS as fronts to push to: one constructor a kind (add a kind here and in src/config/edge-fronts.ts).
import type { FrontConfig, FrontKind } from "../config/edge-fronts.ts";
import type { Front } from "./front.ts";
import { createNginxFront } from "./nginx.ts";
import type { RememberingFront } from "./nginx.ts";
import { createVarnishFront } from "./varnish.ts";

/** A front as the pusher holds it: one that remembers what it held (nginx) is told of every long hold. */
export type PushedFront = Front & Partial<Pick<RememberingFront, "remember">>;

/** The constructor of each kind of front. */
const FRONT_MAKERS: Record<FrontKind, (name: string, url: string) => PushedFront> = {
  nginx: createNginxFront,
  varnish: createVarnishFront,
};

/** The fronts of EDGE_FRONTS. */
export function createFronts(configs: readonly FrontConfig[]): PushedFront[] {
  return configs.map((c) => FRONT_MAKERS[c.kind](c.name, c.url));
}
