// The demo partner account `npm start` makes with the demo key: verified, active, owning that key (made as the portal
// makes any partner's key, `p.<account>.<key>` in the keys file, so that what an operator does to the account, such
// as suspending it, applies to the key), so that a person can sign in to the portal at once and watch its usage.
import type { PortalDatabase } from "../db/database.ts";
import { DEFAULT_KEYS_PER_ACCOUNT } from "../config/defaults.ts";
import { createPartnerKey } from "./partner-keys.ts";
import { hashPassword } from "./passwords.ts";
import { randomId } from "./secrets.ts";
import { createAccount, findAccountByEmail, updateAccount } from "./store/accounts.ts";
import { endAllSessions } from "./store/sessions.ts";

/** The demo account's email (example.com: a domain reserved for examples, which no one receives mail at). */
const DEMO_EMAIL = "demo@example.com";

/** The demo key's label in the portal. */
export const DEMO_LABEL = "demo";

/**
 * Makes the demo account, with a new random password, and a key of its own in `keysFile`; returns the password and
 * the key: the only time they are seen. A database that kept the account from an earlier demo (its keys file was
 * removed, and its keys with it) has the account given the new password and key, its old keys' rows dropped.
 */
export async function createDemoAccount(
  db: PortalDatabase,
  keysFile: string,
  now: number,
): Promise<{ email: string; password: string; key: string }> {
  const password = randomId(20);
  const hash = await hashPassword(password);
  const made = await createAccount(db, { email: DEMO_EMAIL, partner: "Demo partner", password: hash }, now);
  const account = made ?? (await findAccountByEmail(db, DEMO_EMAIL))!;
  await updateAccount(db, account.id, { password: hash, verified: now, status: "active" });
  if (!made) {
    await endAllSessions(db, account.id); // the old password's sessions
    await db.run("DELETE FROM api_keys WHERE account_id = ?", [account.id]);
  }
  const { key } = await createPartnerKey(
    db,
    keysFile,
    { id: account.id, rate: null, burst: null },
    DEMO_LABEL,
    DEFAULT_KEYS_PER_ACCOUNT,
    now,
  );
  return { email: DEMO_EMAIL, password, key };
}
