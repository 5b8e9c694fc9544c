// How many event streams this process holds at once: in all, per key, per account and per client address. A stream
// takes its place in every count before it is admitted, in one synchronous step (no await between the look and the
// count, on the one thread of the process: so streams asked for at once meet the same caps as streams asked for in
// turn), and gives it back when it closes. Under WORKERS=N each worker process counts its own streams.
import { ApiError } from "../../errors.ts";

/** The caps, each a count of streams open at once in this process. */
export interface StreamCaps {
  maxStreams: number;
  maxStreamsPerKey: number;
  maxStreamsPerAccount: number;
  maxStreamsPerAddress: number;
}

/** What a refusal names: the cap that was full. */
type Cap = "server" | "key" | "account" | "address";

/**
 * The account a key belongs to: a portal partner's key is named `p.<account>.<key>` in the keys file, and its
 * account is `p.<account>`; a key made by `npm run keys` is an account of its own.
 */
function accountOf(keyName: string): string {
  if (!keyName.startsWith("p.")) return keyName;
  const dot = keyName.indexOf(".", 2);
  return dot > 2 ? keyName.slice(0, dot) : keyName;
}

/** A count per name, its entries dropped at zero. */
function counter() {
  const counts = new Map<string, number>();
  return {
    count: (name: string) => counts.get(name) ?? 0,
    add(name: string, n: number) {
      const left = (counts.get(name) ?? 0) + n;
      if (left > 0) counts.set(name, left);
      else counts.delete(name);
    },
  };
}

/** The counts of a hub's streams against `caps`. */
export function createStreamCaps(caps: StreamCaps) {
  let open = 0;
  const keys = counter();
  const accounts = counter();
  const addresses = counter();
  const refused: Record<Cap, number> = { server: 0, key: 0, account: 0, address: 0 };
  const tooMany = (cap: Exclude<Cap, "server">, max: number, who: string) => {
    refused[cap]++;
    return new ApiError(429, "rate_limited", `${who} may hold ${max} event streams at once`, { "Retry-After": "5" });
  };

  return {
    /**
     * Takes a stream's place for `key` (its record's name) from `address` (the client as the API's limits group it:
     * IPv6 by /64), or throws the 503 (the process is full) or 429 (a cap of its own is). Returns the function that
     * gives the place back (once, however often it is called).
     */
    take(key: string, address: string): () => void {
      const account = accountOf(key);
      if (open >= caps.maxStreams) {
        refused.server++;
        throw new ApiError(503, "service_unavailable", `this server holds its ${caps.maxStreams} streams`, {
          "Retry-After": "5",
        });
      }
      if (keys.count(key) >= caps.maxStreamsPerKey) throw tooMany("key", caps.maxStreamsPerKey, "a key");
      if (accounts.count(account) >= caps.maxStreamsPerAccount)
        throw tooMany("account", caps.maxStreamsPerAccount, "an account");
      if (addresses.count(address) >= caps.maxStreamsPerAddress)
        throw tooMany("address", caps.maxStreamsPerAddress, "a client address");
      open++;
      keys.add(key, 1);
      accounts.add(account, 1);
      addresses.add(address, 1);
      let held = true;
      return () => {
        if (!held) return;
        held = false;
        open--;
        keys.add(key, -1);
        accounts.add(account, -1);
        addresses.add(address, -1);
      };
    },
    /** Streams refused so far, by the cap that was full. */
    refused: refused as Readonly<Record<Cap, number>>,
  };
}
