// The demo partner account `npm start` makes when it makes the demo key: verified, active, owning that key, so that a
// person can sign in to the portal at once and watch the demo key's usage.
import type { PortalDatabase } from "./db/database.ts";
import { hashPassword } from "./passwords.ts";
import { randomId } from "./secrets.ts";
import { createAccount, findAccountByEmail, updateAccount } from "./store/accounts.ts";
import { endAllSessions } from "./store/sessions.ts";

/** The demo account's email (example.com: a domain reserved for examples, which no one receives mail at). */
const DEMO_EMAIL = "demo@example.com";

/**
 * Makes the demo account the owner of the keys file's key `keyName` (`key` itself gives the first and last 4
 * characters shown), with a new random password, returned: the only time it is seen. A database that kept the
 * account from an earlier demo key (its keys file was removed) has it given the new key and password instead.
 */
export async function createDemoAccount(
  db: PortalDatabase,
  keyName: string,
  key: string,
  now: number,
): Promise<{ email: string; password: string }> {
  const password = randomId(20);
  const hash = await hashPassword(password);
  const made = await createAccount(db, { email: DEMO_EMAIL, partner: "Demo partner", password: hash }, now);
  const account = made ?? (await findAccountByEmail(db, DEMO_EMAIL))!;
  await updateAccount(db, account.id, { password: hash, verified: now, status: "active" });
  if (!made) await endAllSessions(db, account.id); // the old password's sessions
  await db.run(
    `INSERT INTO api_keys (id, account_id, file_name, label, first4, last4, created) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (file_name) DO UPDATE SET account_id = excluded.account_id, first4 = excluded.first4,
       last4 = excluded.last4, created = excluded.created`,
    [randomId(10), account.id, keyName, keyName, key.slice(0, 4), key.slice(-4), now],
  );
  return { email: DEMO_EMAIL, password };
}
