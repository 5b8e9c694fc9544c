// The fronts the API pushes key changes to (`EDGE_FRONTS`), as the configuration names them: a leaf module, so that
// the configuration can check them without loading src/edge/.
import { z } from "zod";

/** The kinds of front a push can reach: deploy/nginx (purge), deploy/varnish (ban). */
const FRONT_KINDS = ["nginx", "varnish"] as const;
export type FrontKind = (typeof FRONT_KINDS)[number];

/** One front: the name it gives in `X-Edge-Front`, its kind, and the address its pushes go to. */
export interface FrontConfig {
  name: string;
  kind: FrontKind;
  url: string;
}

const NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;
/** The scheme each kind is pushed to with: both over HTTP. */
const SCHEME: Record<FrontKind, string> = { nginx: "http:", varnish: "http:" };

/** One `name=[kind:]url` entry, or the message that says what is wrong with it. */
function parseFront(entry: string): FrontConfig | string {
  const at = entry.indexOf("=");
  if (at < 0) return `${JSON.stringify(entry)} is not name=url or name=kind:url (e.g. varnish=http://127.0.0.1:6081)`;
  const name = entry.slice(0, at).trim();
  let rest = entry.slice(at + 1).trim();
  if (!NAME.test(name))
    return `front name ${JSON.stringify(name)} must be 1-32 lower-case letters, digits and - (starting with a letter or digit)`;
  const prefix = /^([a-z]+):(?!\/\/)/.exec(rest);
  let kind = name as FrontKind;
  if (prefix) {
    kind = prefix[1] as FrontKind;
    rest = rest.slice(prefix[0].length);
  }
  if (kind === ("haproxy" as string))
    return `front ${name}: HAProxy is no longer a shipped front (docs/deploy.md, "HAProxy, retired"); its pushes are not made`;
  if (!FRONT_KINDS.includes(kind))
    return `front ${name}: its kind ${prefix ? JSON.stringify(kind) + " is not" : "is not given and its name is not"} one of ${FRONT_KINDS.join(", ")} (name=kind:url)`;
  let url: URL;
  try {
    url = new URL(rest);
  } catch {
    return `front ${name}: ${JSON.stringify(rest)} is not a URL`;
  }
  if (url.protocol !== SCHEME[kind] || url.pathname.replace(/^\/$/, "") || url.search || url.username)
    return `front ${name}: a ${kind} front is reached at ${SCHEME[kind]}//host:port (no path, query or credentials), not ${JSON.stringify(rest)}`;
  return { name, kind, url: `${url.protocol}//${url.host}` };
}

/** `EDGE_FRONTS`, comma-separated `name=[kind:]url` entries with unique names, or the message for the first wrong one. */
function parseEdgeFronts(value: string): FrontConfig[] | string {
  const fronts: FrontConfig[] = [];
  for (const entry of value.split(",").map((e) => e.trim())) {
    if (!entry) continue;
    const front = parseFront(entry);
    if (typeof front === "string") return front;
    if (fronts.some((f) => f.name === front.name)) return `front name ${front.name} is given twice`;
    fronts.push(front);
  }
  return fronts;
}

/** `EDGE_FRONTS` as the API's configuration reads it. */
export const EdgeFrontsSchema = z
  .string()
  .default("")
  .transform((v, ctx) => {
    const fronts = parseEdgeFronts(v);
    if (typeof fronts !== "string") return fronts;
    ctx.addIssue({ code: "custom", message: fronts });
    return z.NEVER;
  });
