// `npm run portal`: the developer portal on PORTAL_PORT (8081); `npm run portal -- admin <email>` makes an operator.
import { parseConfig } from "../config/api-settings.ts";
import { parsePortalConfig } from "../config/portal-settings.ts";
import { openDatabase } from "../db/database.ts";
import { migrate } from "../db/migrations.ts";
import { runPortal } from "../portal/run-portal.ts";
import { findAccountByEmail, updateAccount } from "../portal/store/accounts.ts";
import { startKeySyncFor } from "./start-key-sync.ts";

const log = (line: string) => console.error(line);

/** `admin <email>`: gives the account the operator role (and approves it if it was waiting). */
async function makeAdmin(databaseUrl: string, email: string): Promise<void> {
  const db = await openDatabase(databaseUrl);
  try {
    await migrate(db, Date.now());
    const account = await findAccountByEmail(db, email);
    if (!account) throw new Error(`no account has the email ${email}: sign up first`);
    // An operator needs no approval (the first one could get none under PORTAL_APPROVAL=manual).
    await updateAccount(db, account.id, {
      role: "admin",
      ...(account.status === "pending" ? { status: "active" } : {}),
    });
    console.log(`portal: ${account.email} is an operator now`);
  } finally {
    await db.close();
  }
}

async function main(args: string[]): Promise<void> {
  const api = parseConfig(process.env);
  const config = parsePortalConfig(process.env);
  if (args[0] === "admin") {
    if (!args[1] || args.length > 2) throw new Error("usage: npm run portal -- admin <email>");
    return makeAdmin(api.databaseUrl, args[1]);
  }
  if (args.length) throw new Error(`unknown arguments: ${args.join(" ")} (usage: npm run portal [-- admin <email>])`);
  // The portal changes the keys: on the one machine whose keys file is published (publish), or in Redis (shared, for
  // portals on several machines); a follower's keys file is a copy, which the next version would overwrite.
  if (api.keysSync === "follow")
    throw new Error(
      "KEYS_SYNC=follow: the portal writes the keys, so run it with KEYS_SYNC=shared (portals on several machines) or where they are published from (publish)",
    );
  const keySync = await startKeySyncFor(api.keysSync, api.redisUrl, api.keysFile, "portal");
  const portal = await runPortal(config, api, log);
  console.log(`portal: serving the developer portal on ${portal.url}`);
  const stop = () => void Promise.all([portal.close(), keySync?.close()]).then(() => process.exit(0));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(`portal: ${(err as Error).message ?? String(err)}`);
  process.exit(1);
});
