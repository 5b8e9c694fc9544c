// When a failed delivery is tried again: Standard Webhooks' example schedule, with jitter.

/**
 * The waits after each failed attempt, ms: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, 10 h (Standard Webhooks' example
 * schedule and one more 10 h); each multiplied by 0.8-1.2 (jitter, so that an endpoint back after an outage is not
 * sent every delivery at one instant). Nine attempts over about 37.6 hours (at least 30 with the jitter, so always
 * over 24); the delivery then fails for good (a member may still retry it, or replay its event).
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [5e3, 3e5, 18e5, 72e5, 18e6, 36e6, 36e6, 36e6];

/** The schedule in words, for the pages. */
export const RETRY_SCHEDULE_TEXT =
  "after 5 seconds, 5 minutes, 30 minutes, 2 hours, 5 hours, then three times 10 hours, each give or take 20%";

/** When to try again after the failure of attempt number `attempts` at `now`, or null when the attempts are spent. */
export function retryAt(attempts: number, now: number, random: () => number): number | null {
  const wait = RETRY_SCHEDULE_MS[attempts - 1];
  return wait === undefined ? null : now + Math.round(wait * (0.8 + 0.4 * random()));
}
