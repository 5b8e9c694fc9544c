// parseConfig as a table: each row an environment and the exact Config, or the exact error, it gives.
import { spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import type { Config } from "../../src/config/api-settings.ts";
import { parseConfig } from "../../src/config/api-settings.ts";
import { DEFAULT_MAX_AGE } from "../../src/config/defaults.ts";
import { parsePortalConfig } from "../../src/config/portal-settings.ts";

type Env = Record<string, string | undefined>;

/** The Config of an empty environment (paths are resolved against the working directory). */
const DEFAULTS: Config = {
  dataDir: resolve("data"),
  keysFile: resolve("data/keys.json"),
  port: 8080,
  host: "127.0.0.1",
  baseUrl: "http://127.0.0.1:8080",
  maxAge: 300,
  logRequests: true,
  waitForSnapshot: false,
  trustProxy: [],
  tls: null,
  metricsToken: undefined,
  edgeKeyTtl: 2,
  edgeFronts: [],
  edgeKeyHold: 3600,
  redisUrl: undefined,
  variantCacheBytes: 32 * 1024 * 1024,
  bodyCacheBytes: 1024 * 1024 * 1024,
  compressSlots: 2,
  workers: 1,
  countUsage: true,
  databaseUrl: resolve("data/portal.db"),
  usageFlushMs: 5000,
  usageBufferRows: 200_000,
  varnishncsa: "varnishncsa",
};

describe("parseConfig: valid environments", () => {
  it.each<[Env, Partial<Config>]>([
    [{}, {}],
    [{ UNRELATED: "x", PATH: "/bin" }, {}],
    // DATA_DIR, and KEYS_FILE's default inside it
    [
      { DATA_DIR: "/srv/fsa" },
      { dataDir: "/srv/fsa", keysFile: "/srv/fsa/keys.json", databaseUrl: "/srv/fsa/portal.db" },
    ],
    [
      { DATA_DIR: "rel/dir" },
      {
        dataDir: resolve("rel/dir"),
        keysFile: resolve("rel/dir/keys.json"),
        databaseUrl: resolve("rel/dir/portal.db"),
      },
    ],
    [
      { DATA_DIR: "/srv/fsa/" },
      { dataDir: "/srv/fsa", keysFile: "/srv/fsa/keys.json", databaseUrl: "/srv/fsa/portal.db" },
    ],
    // usage per key: off, the database (shared with the portal), the hand-over's period and buffer
    [{ USAGE: "0" }, { countUsage: false }],
    [{ DATABASE_URL: "postgres://u@db/portal" }, { databaseUrl: "postgres://u@db/portal" }],
    [
      { USAGE_FLUSH_MS: "10000", USAGE_BUFFER_ROWS: "5000" },
      { usageFlushMs: 10_000, usageBufferRows: 5000 },
    ],
    // KEYS_FILE
    [{ KEYS_FILE: "/etc/fsa/keys.json" }, { keysFile: "/etc/fsa/keys.json" }],
    [
      { KEYS_FILE: "k.json", DATA_DIR: "/srv/fsa" },
      { dataDir: "/srv/fsa", keysFile: resolve("k.json"), databaseUrl: "/srv/fsa/portal.db" },
    ],
    // PORT, and the default base URL that follows it
    [{ PORT: "0" }, { port: 0, baseUrl: "http://127.0.0.1:0" }],
    [{ PORT: "3000" }, { port: 3000, baseUrl: "http://127.0.0.1:3000" }],
    [{ PORT: "65535" }, { port: 65535, baseUrl: "http://127.0.0.1:65535" }],
    [{ PORT: " 8081 " }, { port: 8081, baseUrl: "http://127.0.0.1:8081" }],
    [{ PORT: "+8081" }, { port: 8081, baseUrl: "http://127.0.0.1:8081" }],
    // HOST, bracketed in the default base URL when it is an IPv6 address
    [{ HOST: "0.0.0.0" }, { host: "0.0.0.0", baseUrl: "http://0.0.0.0:8080" }],
    [{ HOST: "::1" }, { host: "::1", baseUrl: "http://[::1]:8080" }],
    [
      { HOST: "::", PORT: "9000" },
      { host: "::", port: 9000, baseUrl: "http://[::]:9000" },
    ],
    // BASE_URL, trailing slashes removed
    [{ BASE_URL: "https://api.example.com" }, { baseUrl: "https://api.example.com" }],
    [{ BASE_URL: "https://api.example.com/" }, { baseUrl: "https://api.example.com" }],
    [{ BASE_URL: "https://api.example.com///" }, { baseUrl: "https://api.example.com" }],
    [{ BASE_URL: "http://cdn.example.com/api/" }, { baseUrl: "http://cdn.example.com/api" }],
    [
      { BASE_URL: "https://api.example.com", PORT: "1", HOST: "::1" },
      { port: 1, host: "::1", baseUrl: "https://api.example.com" },
    ],
    // MAX_AGE
    [{ MAX_AGE: "0" }, { maxAge: 0 }],
    [{ MAX_AGE: "60" }, { maxAge: 60 }],
    [{ MAX_AGE: "86400" }, { maxAge: 86_400 }],
    // the switches
    [{ LOG_REQUESTS: "0" }, { logRequests: false }],
    [{ LOG_REQUESTS: "1" }, { logRequests: true }],
    [{ WAIT_FOR_SNAPSHOT: "1" }, { waitForSnapshot: true }],
    [{ WAIT_FOR_SNAPSHOT: "0" }, { waitForSnapshot: false }],
    // METRICS_TOKEN, VARIANT_CACHE_MB, COMPRESS_SLOTS
    [{ METRICS_TOKEN: "0123456789abcdef" }, { metricsToken: "0123456789abcdef" }],
    // EDGE_KEY_TTL: how long a front keeps a key check's answer
    [{ EDGE_KEY_TTL: "0" }, { edgeKeyTtl: 0 }],
    [{ EDGE_KEY_TTL: "60" }, { edgeKeyTtl: 60 }],
    // EDGE_KEY_HOLD and EDGE_FRONTS: the long hold of a front the server pushes key changes to
    [{ EDGE_KEY_HOLD: "0" }, { edgeKeyHold: 0 }],
    [{ EDGE_KEY_HOLD: "86400" }, { edgeKeyHold: 86_400 }],
    [
      { EDGE_FRONTS: "varnish=http://127.0.0.1:6081, nginx=http://127.0.0.1:8080/" },
      {
        edgeFronts: [
          { name: "varnish", kind: "varnish", url: "http://127.0.0.1:6081" },
          { name: "nginx", kind: "nginx", url: "http://127.0.0.1:8080" },
        ],
      },
    ],
    [
      { EDGE_FRONTS: "edge-2=nginx:http://[::1]:80,v1=varnish:http://cache.internal:6081" },
      {
        edgeFronts: [
          { name: "edge-2", kind: "nginx", url: "http://[::1]" },
          { name: "v1", kind: "varnish", url: "http://cache.internal:6081" },
        ],
      },
    ],
    [{ EDGE_FRONTS: " , " }, { edgeFronts: [] }],
    [{ VARIANT_CACHE_MB: "0" }, { variantCacheBytes: 0 }],
    [{ VARIANT_CACHE_MB: "256" }, { variantCacheBytes: 256 * 1024 * 1024 }],
    [{ BODY_CACHE_MB: "64" }, { bodyCacheBytes: 64 * 1024 * 1024 }],
    [{ COMPRESS_SLOTS: "0" }, { compressSlots: 0 }],
    [{ COMPRESS_SLOTS: "8" }, { compressSlots: 8 }],
    // WORKERS: a number, or one per core
    [{ WORKERS: "2" }, { workers: 2 }],
    [{ WORKERS: "auto" }, { workers: availableParallelism() }],
    // REDIS_URL: redis:// or rediss:// (TLS), kept as given
    [{ REDIS_URL: "redis://127.0.0.1:6379" }, { redisUrl: "redis://127.0.0.1:6379" }],
    [{ REDIS_URL: "rediss://:secret@cache.internal:6380/2" }, { redisUrl: "rediss://:secret@cache.internal:6380/2" }],
    // TLS_CERT and TLS_KEY: paths resolved, and the default base URL becomes https
    [
      { TLS_CERT: "/etc/tls/api.crt", TLS_KEY: "/etc/tls/api.key" },
      { tls: { cert: "/etc/tls/api.crt", key: "/etc/tls/api.key" }, baseUrl: "https://127.0.0.1:8080" },
    ],
    [
      { TLS_CERT: "api.crt", TLS_KEY: "api.key", PORT: "8443" },
      { tls: { cert: resolve("api.crt"), key: resolve("api.key") }, port: 8443, baseUrl: "https://127.0.0.1:8443" },
    ],
    [
      { TLS_CERT: "/c", TLS_KEY: "/k", HOST: "::" },
      { tls: { cert: "/c", key: "/k" }, host: "::", baseUrl: "https://[::]:8080" },
    ],
    // an explicit BASE_URL wins either way (TLS at a proxy: https without TLS_*; TLS here behind a name)
    [
      { TLS_CERT: "/c", TLS_KEY: "/k", BASE_URL: "https://api.example.com/" },
      { tls: { cert: "/c", key: "/k" }, baseUrl: "https://api.example.com" },
    ],
    [
      { TRUST_PROXY: "10.0.0.5", BASE_URL: "https://api.example.com" },
      { trustProxy: ["10.0.0.5"], baseUrl: "https://api.example.com" },
    ],
    // trusted proxies: addresses and networks, comma-separated, and `loopback` for a proxy on this machine
    [{ TRUST_PROXY: "0" }, {}],
    [{ TRUST_PROXY: "loopback" }, { trustProxy: ["127.0.0.0/8", "::1/128"] }],
    [{ TRUST_PROXY: " 10.0.0.0/8 , fd00::/8,192.0.2.1" }, { trustProxy: ["10.0.0.0/8", "fd00::/8", "192.0.2.1"] }],
    // an empty value is the same as none
    [
      {
        DATA_DIR: "",
        KEYS_FILE: "",
        PORT: "",
        HOST: "",
        BASE_URL: "",
        MAX_AGE: "",
        LOG_REQUESTS: "",
        WAIT_FOR_SNAPSHOT: "",
        TRUST_PROXY: "",
        TLS_CERT: "",
        TLS_KEY: "",
      },
      {},
    ],
    // and so is one of only whitespace (which the number fields would otherwise read as 0)
    [
      {
        DATA_DIR: " ",
        KEYS_FILE: "\t",
        PORT: "  ",
        HOST: " ",
        BASE_URL: " ",
        MAX_AGE: " ",
        LOG_REQUESTS: " ",
        WAIT_FOR_SNAPSHOT: "\n",
        TRUST_PROXY: " ",
        TLS_CERT: " ",
        TLS_KEY: " ",
      },
      {},
    ],
  ])("%j", (env, expected) => {
    expect(parseConfig(env)).toEqual({ ...DEFAULTS, ...expected });
  });
});

describe("parseConfig: invalid values, each with its exact message", () => {
  it.each<[Env, string]>([
    [{ PORT: "http" }, "configuration: port: Invalid input: expected number, received NaN"],
    [{ PORT: "-1" }, "configuration: port: Too small: expected number to be >=0"],
    [{ PORT: "65536" }, "configuration: port: Too big: expected number to be <=65535"],
    [{ PORT: "80.5" }, "configuration: port: Invalid input: expected int, received number"],
    [{ PORT: "Infinity" }, "configuration: port: Invalid input: expected number, received NaN"],
    [{ PORT: "0x50" }, "configuration: port: Invalid input: expected number, received NaN"],
    [{ PORT: "1e3" }, "configuration: port: Invalid input: expected number, received NaN"],
    [{ PORT: "80 80" }, "configuration: port: Invalid input: expected number, received NaN"],
    [{ MAX_AGE: "0b11" }, "configuration: maxAge: Invalid input: expected number, received NaN"],
    [{ COMPRESS_SLOTS: "0o7" }, "configuration: compressSlots: Invalid input: expected number, received NaN"],
    [
      { BASE_URL: "https://api.example.com/?x=1" },
      "configuration: baseUrl: must have no query (?), fragment (#) or credentials (@): links are made by appending paths",
    ],
    [
      { BASE_URL: "https://api.example.com#top" },
      "configuration: baseUrl: must have no query (?), fragment (#) or credentials (@): links are made by appending paths",
    ],
    [
      { BASE_URL: "https://user:pw@api.example.com" },
      "configuration: baseUrl: must have no query (?), fragment (#) or credentials (@): links are made by appending paths",
    ],
    [{ BASE_URL: "api.example.com" }, "configuration: baseUrl: Invalid URL"],
    [{ BASE_URL: "ftp://api.example.com" }, "configuration: baseUrl: Invalid URL"],
    [{ BASE_URL: "https://" }, "configuration: baseUrl: Invalid URL"],
    [{ MAX_AGE: "five" }, "configuration: maxAge: Invalid input: expected number, received NaN"],
    [{ MAX_AGE: "-1" }, "configuration: maxAge: Too small: expected number to be >=0"],
    [{ MAX_AGE: "86401" }, "configuration: maxAge: Too big: expected number to be <=86400"],
    [{ MAX_AGE: "1.5" }, "configuration: maxAge: Invalid input: expected int, received number"],
    [{ LOG_REQUESTS: "true" }, 'configuration: logRequests: Invalid option: expected one of "0"|"1"'],
    [{ LOG_REQUESTS: "off" }, 'configuration: logRequests: Invalid option: expected one of "0"|"1"'],
    [{ WAIT_FOR_SNAPSHOT: "yes" }, 'configuration: waitForSnapshot: Invalid option: expected one of "0"|"1"'],
    [
      { TRUST_PROXY: "1" },
      "configuration: trustProxy: TRUST_PROXY=1 trusted X-Forwarded-For from any peer, so a client could name any address; list the proxies instead (addresses or CIDR networks, comma-separated), e.g. TRUST_PROXY=loopback or TRUST_PROXY=10.0.0.0/8",
    ],
    [
      { TRUST_PROXY: "10.0.0.0/33" },
      'configuration: trustProxy: "10.0.0.0/33" is not an address or CIDR network (e.g. 10.0.0.5, 10.0.0.0/8, fd00::/8, loopback)',
    ],
    [
      { TRUST_PROXY: "proxy.example.com" },
      'configuration: trustProxy: "proxy.example.com" is not an address or CIDR network (e.g. 10.0.0.5, 10.0.0.0/8, fd00::/8, loopback)',
    ],
    [{ METRICS_TOKEN: "short" }, "configuration: metricsToken: must be at least 16 characters"],
    [{ EDGE_KEY_TTL: "61" }, "configuration: edgeKeyTtl: Too big: expected number to be <=60"],
    [{ EDGE_KEY_HOLD: "86401" }, "configuration: edgeKeyHold: Too big: expected number to be <=86400"],
    [{ EDGE_KEY_HOLD: "-1" }, "configuration: edgeKeyHold: Too small: expected number to be >=0"],
    [
      { EDGE_FRONTS: "http://127.0.0.1:6081" },
      'configuration: edgeFronts: "http://127.0.0.1:6081" is not name=url or name=kind:url (e.g. varnish=http://127.0.0.1:6081)',
    ],
    [
      { EDGE_FRONTS: "edge=http://127.0.0.1:6081" },
      "configuration: edgeFronts: front edge: its kind is not given and its name is not one of nginx, varnish (name=kind:url)",
    ],
    [
      { EDGE_FRONTS: "edge=squid:http://127.0.0.1:3128" },
      'configuration: edgeFronts: front edge: its kind "squid" is not one of nginx, varnish (name=kind:url)',
    ],
    [
      { EDGE_FRONTS: "Edge=nginx:http://127.0.0.1:80" },
      'configuration: edgeFronts: front name "Edge" must be 1-32 lower-case letters, digits and - (starting with a letter or digit)',
    ],
    [
      { EDGE_FRONTS: "nginx=http://127.0.0.1:80,nginx=http://127.0.0.1:81" },
      "configuration: edgeFronts: front name nginx is given twice",
    ],
    [
      { EDGE_FRONTS: "varnish=tcp://127.0.0.1:6081" },
      'configuration: edgeFronts: front varnish: a varnish front is reached at http://host:port (no path, query or credentials), not "tcp://127.0.0.1:6081"',
    ],
    [
      { EDGE_FRONTS: "nginx=http://127.0.0.1/purge" },
      'configuration: edgeFronts: front nginx: a nginx front is reached at http://host:port (no path, query or credentials), not "http://127.0.0.1/purge"',
    ],
    [
      { EDGE_FRONTS: "haproxy=unix:///run/haproxy/flash-sale-api.sock" },
      'configuration: edgeFronts: front haproxy: HAProxy is no longer a shipped front (docs/deploy.md, "HAProxy, retired"); its pushes are not made',
    ],
    [
      { EDGE_FRONTS: "nginx=unix:///run/nginx.sock" },
      'configuration: edgeFronts: front nginx: a nginx front is reached at http://host:port (no path, query or credentials), not "unix:///run/nginx.sock"',
    ],
    [{ EDGE_FRONTS: "nginx=not a url" }, 'configuration: edgeFronts: front nginx: "not a url" is not a URL'],
    [{ VARIANT_CACHE_MB: "-1" }, "configuration: variantCacheMb: Too small: expected number to be >=0"],
    [{ VARIANT_CACHE_MB: "lots" }, "configuration: variantCacheMb: Invalid input: expected number, received NaN"],
    [{ BODY_CACHE_MB: "0" }, "configuration: bodyCacheMb: Too small: expected number to be >=1"],
    [{ COMPRESS_SLOTS: "65" }, "configuration: compressSlots: Too big: expected number to be <=64"],
    [{ WORKERS: "0" }, "configuration: workers: Too small: expected number to be >=1"],
    [{ WORKERS: "many" }, "configuration: workers: Invalid input"],
    [{ REDIS_URL: "http://127.0.0.1:6379" }, "configuration: redisUrl: must be a redis:// or rediss:// URL"],
    [{ REDIS_URL: "127.0.0.1:6379" }, "configuration: redisUrl: must be a redis:// or rediss:// URL"],
    [{ USAGE_FLUSH_MS: "20000" }, "configuration: usageFlushMs: Too big: expected number to be <=10000"],
    [{ USAGE_BUFFER_ROWS: "10" }, "configuration: usageBufferRows: Too small: expected number to be >=1000"],
    [{ USAGE: "off" }, 'configuration: countUsage: Invalid option: expected one of "0"|"1"'],
    [{ TLS_CERT: "/c" }, "configuration: tlsKey: TLS_CERT and TLS_KEY must both be set, or neither"],
    [{ TLS_KEY: "/k" }, "configuration: tlsCert: TLS_CERT and TLS_KEY must both be set, or neither"],
    [{ TLS_CERT: "/c", TLS_KEY: " " }, "configuration: tlsKey: TLS_CERT and TLS_KEY must both be set, or neither"],
    // every problem at once, one a line, in the schema's order
    [
      { TRUST_PROXY: "x", PORT: "x", MAX_AGE: "x" },
      [
        "configuration: port: Invalid input: expected number, received NaN",
        "configuration: maxAge: Invalid input: expected number, received NaN",
        'configuration: trustProxy: "x" is not an address or CIDR network (e.g. 10.0.0.5, 10.0.0.0/8, fd00::/8, loopback)',
      ].join("\n"),
    ],
  ])("%j", (env, message) => {
    expect(() => parseConfig(env)).toThrow(new Error(message));
  });
});

describe("parseConfig: overrides from flags", () => {
  it.each<[Env, Parameters<typeof parseConfig>[1], Partial<Config>]>([
    [
      {},
      { dataDir: "/srv/flag" },
      { dataDir: "/srv/flag", keysFile: "/srv/flag/keys.json", databaseUrl: "/srv/flag/portal.db" },
    ],
    [
      { DATA_DIR: "/srv/env" },
      { dataDir: "/srv/flag" },
      { dataDir: "/srv/flag", keysFile: "/srv/flag/keys.json", databaseUrl: "/srv/flag/portal.db" },
    ],
    [
      { DATA_DIR: "/srv/env" },
      { dataDir: undefined },
      { dataDir: "/srv/env", keysFile: "/srv/env/keys.json", databaseUrl: "/srv/env/portal.db" },
    ],
    [
      { BASE_URL: "https://env.example.com" },
      { baseUrl: "https://flag.example.com/" },
      { baseUrl: "https://flag.example.com" },
    ],
    [{ PORT: "1" }, { port: "2" }, { port: 2, baseUrl: "http://127.0.0.1:2" }],
    // an empty flag leaves the variable in force
    [
      { DATA_DIR: "/srv/env" },
      { dataDir: "" },
      { dataDir: "/srv/env", keysFile: "/srv/env/keys.json", databaseUrl: "/srv/env/portal.db" },
    ],
    [{ BASE_URL: "https://env.example.com" }, { baseUrl: " " }, { baseUrl: "https://env.example.com" }],
  ])("%j with %j", (env, overrides, expected) => {
    expect(parseConfig(env, overrides)).toEqual({ ...DEFAULTS, ...expected });
  });

  it("an invalid override is reported like an invalid variable", () => {
    expect(() => parseConfig({}, { baseUrl: "nope" })).toThrow(new Error("configuration: baseUrl: Invalid URL"));
  });
});

describe("config/api-settings.ts's imports", () => {
  it("its default max-age is the one the handler imports from defaults.ts", () => {
    expect(DEFAULTS.maxAge).toBe(DEFAULT_MAX_AGE);
  });

  it("loads neither the handler nor the search engine (`npm run keys` reads the config)", () => {
    // A resolve hook prints every module of ours that importing src/config/api-settings.ts loads.
    const hook = `export async function resolve(s, c, next) { const r = await next(s, c); if (r.url.includes("/src/")) console.log(r.url); return r; }`;
    const register = `import { register } from "node:module"; register("data:text/javascript," + encodeURIComponent(${JSON.stringify(hook)}));`;
    const run = spawnSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "--import",
        `data:text/javascript,${encodeURIComponent(register)}`,
        "-e",
        "await import('./src/config/api-settings.ts')",
      ],
      { encoding: "utf8" },
    );
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    const loaded = [
      ...new Set(
        run.stdout
          .trim()
          .split("\n")
          .map((url) => url.slice(url.indexOf("/src/") + 1)),
      ),
    ].sort();
    // At most these (a loader hook's report of the leaves was missed once on Node 24 under load).
    expect(loaded).toContain("src/config/api-settings.ts");
    const leaves = [
      "src/config/api-settings.ts",
      "src/config/defaults.ts",
      "src/config/edge-fronts.ts",
      "src/config/proxies.ts",
      "src/config/rules.ts",
    ];
    expect(loaded.filter((f) => !leaves.includes(f))).toEqual([]);
  });
});

describe("KEYS_SYNC and VARNISHNCSA, read with the other settings", () => {
  it.each([["publish"], ["follow"], ["shared"]] as const)("KEYS_SYNC=%s with REDIS_URL", (role) => {
    expect(parseConfig({ KEYS_SYNC: role, REDIS_URL: "redis://127.0.0.1:6379" }).keysSync).toBe(role);
  });
  it("KEYS_SYNC unset or blank: the keys file alone", () => {
    expect(parseConfig({ KEYS_SYNC: " " }).keysSync).toBeUndefined();
  });
  it("refuses an unknown KEYS_SYNC, and KEYS_SYNC without REDIS_URL, each with its message", () => {
    expect(() => parseConfig({ KEYS_SYNC: "both", REDIS_URL: "redis://127.0.0.1:6379" })).toThrow(
      "configuration: keysSync: must be publish, follow or shared",
    );
    expect(() => parseConfig({ KEYS_SYNC: "shared" })).toThrow(
      "configuration: keysSync: KEYS_SYNC=shared needs REDIS_URL: the keys go through Redis",
    );
  });
  it("VARNISHNCSA names the program, blank leaves the default", () => {
    expect(parseConfig({ VARNISHNCSA: "/opt/varnish/bin/varnishncsa" }).varnishncsa).toBe(
      "/opt/varnish/bin/varnishncsa",
    );
    expect(parseConfig({ VARNISHNCSA: "" }).varnishncsa).toBe("varnishncsa");
  });
});

describe("parsePortalConfig: the same rules as the API's", () => {
  it("defaults: port 8081, HOST's address, 10 keys an account, mails from the portal", () => {
    expect(parsePortalConfig({})).toMatchObject({
      port: 8081,
      host: "127.0.0.1",
      keyLimit: 10,
      approval: "auto",
      mailFrom: "Developer portal <portal@localhost>",
      trustProxy: [],
    });
    expect(parsePortalConfig({ HOST: "0.0.0.0" }).host).toBe("0.0.0.0");
    expect(parsePortalConfig({ HOST: "0.0.0.0", PORTAL_HOST: " " }).host).toBe("0.0.0.0");
    expect(parsePortalConfig({ HOST: "0.0.0.0", PORTAL_HOST: "::1" }).host).toBe("::1");
  });
  it("refuses numbers the API refuses (0x50, 1e3), and reads blank as unset (not port 0)", () => {
    expect(() => parsePortalConfig({ PORTAL_PORT: "0x50" })).toThrow(
      "configuration: port: Invalid input: expected number, received NaN",
    );
    expect(() => parsePortalConfig({ PORTAL_KEY_LIMIT: "1e3" })).toThrow(
      "configuration: keyLimit: Invalid input: expected number, received NaN",
    );
    expect(parsePortalConfig({ PORTAL_PORT: "  " }).port).toBe(8081);
    expect(parsePortalConfig({ PORTAL_KEY_LIMIT: " 25 " }).keyLimit).toBe(25);
  });
  it("lists every problem at once", () => {
    expect(() => parsePortalConfig({ PORTAL_PORT: "http", PORTAL_APPROVAL: "later" })).toThrow(
      "configuration: port: Invalid input: expected number, received NaN\nconfiguration: approval: PORTAL_APPROVAL must be auto or manual",
    );
  });
  it("reads PORTAL_SECRET_KEY as 32 bytes of base64, and refuses any other length", () => {
    const key = Buffer.alloc(32, 7);
    expect(parsePortalConfig({ PORTAL_SECRET_KEY: key.toString("base64") }).secretKey).toEqual(key);
    expect(parsePortalConfig({}).secretKey).toBeUndefined();
    expect(() => parsePortalConfig({ PORTAL_SECRET_KEY: Buffer.alloc(16).toString("base64") })).toThrow(
      "PORTAL_SECRET_KEY must be 32 bytes, base64",
    );
  });
});
