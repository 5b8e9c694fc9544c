// The answers of a pure function of a string kept in memory, at most `max` of them, the least recently used dropped
// first: the webhook sender's unsealed secrets, address verdicts and parsed URLs (portal/webhooks/), and SQLite's
// prepared statements by their SQL (db/sqlite.ts).

/** `compute` with its last `max` answers kept by argument. */
export function boundedMemo<T>(max: number, compute: (name: string) => T): (name: string) => T {
  const kept = new Map<string, T>();
  return (name) => {
    if (kept.has(name)) {
      const found = kept.get(name)!;
      kept.delete(name); // to the end: the most recently used
      kept.set(name, found);
      return found;
    }
    const answer = compute(name);
    kept.set(name, answer);
    if (kept.size > max) kept.delete(kept.keys().next().value!);
    return answer;
  };
}
