// `npm run keys -- create <name> | list | revoke <name>`: manages the API keys file (hashes only).
import { createKey, KeysFileError, loadKeysFile, revokeKey } from "../keys/keys-file.ts";
import { parseConfig } from "../config.ts";

const USAGE = "usage: npm run keys -- create <name> | list | revoke <name>";

async function main(argv: string[]): Promise<number> {
  const config = parseConfig(process.env);
  const [command, name, ...rest] = argv;
  if (rest.length > 0) return usage();
  switch (command) {
    case "create":
      if (!name) return usage();
      // The key alone on stdout, so that `KEY=$(npm run -s keys -- create x)` works.
      process.stdout.write((await createKey(config.keysFile, name)) + "\n");
      console.error(`created key "${name}" in ${config.keysFile}; it is shown only now`);
      return 0;
    case "revoke":
      if (!name) return usage();
      await revokeKey(config.keysFile, name);
      console.error(`revoked key "${name}"; running servers refuse it after their next reload (within seconds)`);
      return 0;
    case "list": {
      if (name) return usage();
      const { keys } = await loadKeysFile(config.keysFile);
      if (keys.length === 0) console.error(`no keys in ${config.keysFile}`);
      for (const k of keys) {
        const limits = k.rate ? `  rate ${k.rate}/s burst ${k.burst ?? "default"}` : "";
        process.stdout.write(`${k.name}\tcreated ${k.created}\t${k.revoked ? `revoked ${k.revoked}` : "active"}${limits}\n`);
      }
      return 0;
    }
    default:
      return usage();
  }
}

function usage(): number {
  console.error(USAGE);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof KeysFileError ? `keys: ${err.message}` : err);
    process.exit(1);
  },
);
