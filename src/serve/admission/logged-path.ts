// The path as a request's log line has it: never a key, even one sent in the path.

/** The path of a raw request target, for the log line of a request that failed before it was parsed. */
export function pathOf(url: string | undefined): string {
  const path = (url ?? "").split("?")[0]!;
  return path.length > 256 ? `${path.slice(0, 256)}...` : path;
}

/** The path as logged: a run of 32 or more letters and digits may be a key sent in the wrong place, and is never logged. */
export function redactPath(path: string): string {
  return path.replace(/[A-Za-z0-9]{32,}/g, "[redacted]");
}

/** redactPath, remembered for the paths requests repeat (at most REDACTED_MAX): a regex pass a request saved. */
export function redacted(path: string): string {
  let r = redactedPaths.get(path);
  if (r === undefined) {
    if (redactedPaths.size >= REDACTED_MAX) redactedPaths.clear();
    redactedPaths.set(path, (r = redactPath(path)));
  }
  return r;
}
const redactedPaths = new Map<string, string>();
const REDACTED_MAX = 4_096;
