// One request of a push to a front (nginx's PURGE, Varnish's BAN): over a kept-alive connection, bounded in time,
// rejected with what went wrong unless the front answered one of the statuses that mean "done".
import { Agent, request } from "node:http";

/** How long one push request may take before the front counts as unreachable. */
const PUSH_TIMEOUT_MS = 2_000;

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

/**
 * Sends `method url` with `headers`; resolves with the status when it is one of `ok`, rejects otherwise. Sent once
 * more when the connection was reset (a kept-alive one the front closed as it was reused).
 */
export function pushRequest(
  method: string,
  url: string,
  headers: Record<string, string>,
  ok: readonly number[],
): Promise<number> {
  return sendOnce(method, url, headers, ok).catch((err: NodeJS.ErrnoException) =>
    err.code === "ECONNRESET" || err.code === "EPIPE" ? sendOnce(method, url, headers, ok) : Promise.reject(err),
  );
}

function sendOnce(method: string, url: string, headers: Record<string, string>, ok: readonly number[]) {
  return new Promise<number>((resolve, reject) => {
    const req = request(url, { method, headers, agent, timeout: PUSH_TIMEOUT_MS }, (res) => {
      res.resume();
      res.on("end", () => {
        const status = res.statusCode ?? 0;
        if (ok.includes(status)) resolve(status);
        else reject(new Error(`${method} ${new URL(url).pathname}: the front answered ${status}`));
      });
    });
    req.on("timeout", () => req.destroy(new Error(`${method}: no answer within ${PUSH_TIMEOUT_MS} ms`)));
    req.on("error", reject);
    req.end();
  });
}

/** Runs `work` over `items`, `width` at a time; rejects at the first failure (the other runners go on to the end). */
export async function eachLimited<T>(items: readonly T[], width: number, work: (item: T) => Promise<unknown>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}
