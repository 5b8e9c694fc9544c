// The programs the tests start, each with the Debian package that has it: the one list that npm test's first step
// (scripts/test-deps.ts, which .ci/run reaches through npm test) installs from, and that the tests find them with.
import { accessSync, constants, readdirSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";

/** A program a test starts. */
export interface TestProgram {
  /** Its file name, looked up on PATH. */
  name: string;
  /** The Debian package that installs it. */
  debian: string;
  /** Which tests start it, and for what. */
  why: string;
  /**
   * Where to look when it is not on PATH: absolute paths in which `*` stands for any part of one path segment
   * (`/usr/lib/postgresql/*\/bin/initdb`); the newest version (by numeric order) first. Default: none.
   */
  paths?: string[];
  /** Not a program but a file a program loads (a Varnish module): found in `paths` when it is readable. */
  file?: boolean;
}

/**
 * Every program the tests start that a fresh Debian machine may lack (Essential packages, bash and coreutils among
 * them, are always there). To add one: its name, its package, why, and `paths` for a program outside PATH, e.g.
 * `{ name: "initdb", debian: "postgresql", why: "...", paths: ["/usr/lib/postgresql/*\/bin/initdb"] }`.
 */
export const TEST_PROGRAMS: readonly TestProgram[] = [
  { name: "chromium", debian: "chromium", why: "renders /docs headless (the browser test, via playwright-core)" },
  {
    name: "nginx",
    debian: "nginx-light",
    why: "caches in front of a server (deploy/nginx)",
    paths: ["/usr/sbin/nginx"],
  },
  {
    name: "varnishd",
    debian: "varnish",
    why: "caches in front of a server (deploy/varnish)",
    paths: ["/usr/sbin/varnishd"],
  },
  {
    name: "ngx_http_cache_purge_module.so",
    debian: "libnginx-mod-http-cache-purge",
    why: "removes a changed key's held check from deploy/nginx's cache when the API pushes the change",
    paths: ["/usr/lib/nginx/modules/ngx_http_cache_purge_module.so"],
    file: true,
  },
  { name: "varnishadm", debian: "varnish", why: "bans cached responses in the Varnish test" },
  {
    name: "libvmod_vsthrottle.so",
    debian: "varnish-modules",
    why: "rate-limits keys in deploy/varnish (vsthrottle)",
    paths: ["/usr/lib/*/varnish/vmods/libvmod_vsthrottle.so"],
    file: true,
  },
  { name: "varnishncsa", debian: "varnish", why: "counts usage of requests Varnish answered from its cache" },
  { name: "redis-server", debian: "redis-server", why: "holds the rate limits shared by servers (REDIS_URL)" },
  { name: "openssl", debian: "openssl", why: "makes the certificates of the HTTPS tests" },
  { name: "rsync", debian: "rsync", why: "ships snapshots to a replica (npm run ship)" },
  { name: "python3", debian: "python3", why: "runs the guide's Python sample" },
  { name: "curl", debian: "curl", why: "runs the guide's curl sample" },
  { name: "pgrep", debian: "procps", why: "finds the cluster test's workers" },
  { name: "tail", debian: "coreutils", why: "follows nginx's access log to count usage of what nginx answered" },
  { name: "pkill", debian: "procps", why: "stops what is left of varnishd after its test" },
  {
    name: "aiosmtpd",
    debian: "python3-aiosmtpd",
    why: "receives the developer portal's mail (verification and reset links) in its tests",
  },
  {
    name: "icalendar",
    debian: "python3-icalendar",
    why: "reads the iCalendar feeds back in their test (a parser nobody here wrote; Debian's python3 imports it)",
  },
  {
    name: "initdb",
    debian: "postgresql",
    why: "makes the PostgreSQL cluster the portal's database tests run against",
    paths: ["/usr/lib/postgresql/*/bin/initdb"],
  },
  {
    name: "postgres",
    debian: "postgresql",
    why: "serves the PostgreSQL database the portal's tests run against",
    paths: ["/usr/lib/postgresql/*/bin/postgres"],
  },
];

function isExecutableFile(path: string): boolean {
  return isFileWith(path, constants.X_OK);
}

function isFileWith(path: string, mode: number): boolean {
  try {
    accessSync(path, mode);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The paths matching `pattern` (absolute; `*` within a segment), newest version first. */
function expandGlob(pattern: string): string[] {
  let found = [""];
  for (const segment of pattern.split("/").slice(1)) {
    if (!segment.includes("*")) {
      found = found.map((dir) => `${dir}/${segment}`);
      continue;
    }
    const literal = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
    const re = new RegExp(`^${segment.split("*").map(literal).join(".*")}$`);
    found = found.flatMap((dir) => {
      let names: string[];
      try {
        names = readdirSync(dir || "/");
      } catch {
        return [];
      }
      const matching = names.filter((n) => re.test(n));
      return matching.sort((a, b) => b.localeCompare(a, "en", { numeric: true })).map((n) => `${dir}/${n}`);
    });
  }
  return found;
}

/**
 * Where `program` is: the first executable of that name on `path` (PATH's form), else of its `paths`; or null. A
 * `file` is looked for in its `paths` only, and need only be readable.
 */
export function findProgram(program: TestProgram, path = process.env.PATH ?? ""): string | null {
  const listed = (program.paths ?? []).flatMap(expandGlob);
  if (program.file) return listed.find((p) => isFileWith(p, constants.R_OK)) ?? null;
  const onPath = path.split(delimiter).filter((dir) => dir !== "");
  return [...onPath.map((dir) => join(dir, program.name)), ...listed].find(isExecutableFile) ?? null;
}

/** The arguments of the apt-get command that installs `programs`' packages (each once). */
export function aptInstallArgs(programs: readonly TestProgram[]): string[] {
  return ["install", "-y", "--no-install-recommends", ...new Set(programs.map((p) => p.debian))];
}

/** The command that installs `programs`' packages, as a line to run, with `sudo` unless `asRoot`. */
export function installCommand(programs: readonly TestProgram[], asRoot: boolean): string {
  return `${asRoot ? "" : "sudo "}apt-get ${aptInstallArgs(programs).join(" ")}`;
}

/** For a test: the path of the program `name` (one of TEST_PROGRAMS); throws, naming it and its install, if missing. */
export function requireProgram(name: string): string {
  const program = TEST_PROGRAMS.find((p) => p.name === name);
  if (!program) throw new Error(`${name} is not in TEST_PROGRAMS (scripts/lib/test-programs.ts): add it there`);
  const found = findProgram(program);
  if (found) return found;
  throw new Error(
    `${name} is missing (it ${program.why}): run ${installCommand([program], process.getuid?.() === 0)} ` +
      `(npm test's first step does, when run as root)`,
  );
}
