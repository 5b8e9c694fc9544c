// The endpoint table (endpoints.ts) as code reads it: a decoded path to its endpoint and parameters, an endpoint's
// path from its parameters, and route classes as the small numbers the metrics count under.
import { ENDPOINTS, ROUTE_CLASSES } from "./endpoints.ts";
import type { Endpoint, RouteClass } from "./endpoints.ts";

/** A route class as an index into ROUTE_CLASSES: what the metrics' typed arrays are indexed by. */
export type RouteIndex = number;

/** Each route class's index. */
export const ROUTE_INDEX = Object.fromEntries(ROUTE_CLASSES.map((r, i) => [r, i])) as Record<RouteClass, RouteIndex>;

/** A path that is an endpoint's: which, its route class's index, and its path parameters. */
export interface EndpointMatch {
  endpoint: Endpoint;
  route: RouteIndex;
  params: Readonly<Record<string, string>>;
}

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});
const exact = new Map<string, EndpointMatch>();
const templated: { re: RegExp; names: string[]; endpoint: Endpoint }[] = [];
const byId = new Map<string, { endpoint: Endpoint; parts: string[] }>();
for (const endpoint of ENDPOINTS) {
  if (byId.has(endpoint.id)) throw new Error(`endpoints: ${endpoint.id} twice`);
  // "/v1/sales/{store}/active.json" -> literal parts with the parameter names between them.
  const parts = endpoint.path.split(/\{([a-z_]+)\}/);
  byId.set(endpoint.id, { endpoint, parts });
  if (parts.length === 1) {
    exact.set(endpoint.path, { endpoint, route: ROUTE_INDEX[endpoint.route], params: NO_PARAMS });
    continue;
  }
  const names = parts.filter((_, i) => i % 2 === 1);
  const source = parts
    .map((p, i) => (i % 2 === 0 ? p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : `(${endpoint.params![p]!.pattern})`))
    .join("");
  templated.push({ re: new RegExp(`^${source}$`), names, endpoint });
}

/** The endpoint a decoded path is, with its parameters; null for a path no endpoint has. */
export function matchEndpoint(path: string): EndpointMatch | null {
  const found = exact.get(path);
  if (found) return found;
  for (const { re, names, endpoint } of templated) {
    const m = re.exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    names.forEach((name, i) => (params[name] = m[i + 1]!));
    return { endpoint, route: ROUTE_INDEX[endpoint.route], params };
  }
  return null;
}

/** The endpoint named `id` (its operation ID); throws for a name the table does not have. */
export function endpointById(id: string): Endpoint {
  const entry = byId.get(id);
  if (!entry) throw new Error(`no endpoint ${id}`);
  return entry.endpoint;
}

/** The path of endpoint `id` with its parameters filled in (each must be given, and is written as it is). */
export function endpointPath(id: string, params: Readonly<Record<string, string | number>> = NO_PARAMS): string {
  const entry = byId.get(id);
  if (!entry) throw new Error(`no endpoint ${id}`);
  const { parts } = entry;
  if (parts.length === 1) return parts[0]!;
  let out = parts[0]!;
  for (let i = 1; i < parts.length; i += 2) {
    const value = params[parts[i]!];
    if (value === undefined) throw new Error(`endpoint ${id}: no ${parts[i]}`);
    out += String(value) + parts[i + 1]!;
  }
  return out;
}

/** Every endpoint that answers `answer`. */
export function endpointsAnswering(answer: Endpoint["answer"]): Endpoint[] {
  return ENDPOINTS.filter((e) => e.answer === answer);
}
