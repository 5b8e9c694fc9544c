// One opener of the portal's database for test/portal/db-open.test.ts, run both as a worker thread and as a child
// process: for each path it is sent, it opens the database as the portal, the usage store's thread and `npm start`
// do (openDatabase, then migrate), writes a row, closes it, and answers with what happened.
import { parentPort } from "node:worker_threads";
import { describeError } from "../../src/errors.ts";
import { openDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrations.ts";

/** What the test sends: the database file to open now. */
interface OpenRequest {
  path: string;
  opener: string;
}

async function openOnce({ path, opener }: OpenRequest): Promise<string> {
  try {
    const db = await openDatabase(path);
    try {
      await migrate(db, Date.now());
      await db.run(
        "INSERT INTO audit (id, account_id, at, event, detail, address) VALUES (?, 'x', 1, 'open', '', '')",
        [opener],
      );
    } finally {
      await db.close();
    }
    return "ok";
  } catch (err) {
    const { name, message } = describeError(err);
    const code = (err as { extendedCode?: string }).extendedCode;
    return `${name}: ${message}${code ? ` (${code})` : ""}`;
  }
}

const reply = (answer: string) => (parentPort ? parentPort.postMessage(answer) : process.send!(answer));
const listen = (handle: (req: OpenRequest) => void) =>
  parentPort ? parentPort.on("message", handle) : process.on("message", handle);
listen((req) => void openOnce(req).then(reply));
reply("ready");
