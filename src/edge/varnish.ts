// The push to deploy/varnish: a changed key's checks banned by their `X-Key-Hash` (a lurker-friendly ban on an object
// header), through the `BAN` method the VCL takes from the API's address only; a resync bans every check.
import type { Front, KeyState } from "./front.ts";
import { eachLimited, pushRequest } from "./http-push.ts";

/** Hashes in one ban (64 hex digits and a `|` each: about 4 KB, within Varnish's 8 KB header limit). */
const HASHES_PER_BAN = 64;

/** deploy/varnish at `url` (http://host:port), named `name`. */
export function createVarnishFront(name: string, url: string): Front {
  const ban = (what: string) =>
    pushRequest("BAN", `${url}/`, { "X-Edge-Front": name, "X-Flash-Sale-Ban": what }, [200]);
  return {
    name,
    async push(changes: readonly KeyState[]) {
      const hex = changes.map((c) => c.hash.replace(/^sha256:/, ""));
      const batches: string[] = [];
      for (let i = 0; i < hex.length; i += HASHES_PER_BAN) batches.push(hex.slice(i, i + HASHES_PER_BAN).join("|"));
      await eachLimited(batches, 4, ban);
    },
    resync: () => ban("all").then(() => undefined),
  };
}
