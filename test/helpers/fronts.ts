// The shipped nginx front (deploy/nginx) for the tests: the real nginx from Debian on a free loopback port in front of
// a server, with its cache and logs in a temp dir removed after the test file (scripts/lib/fronts.ts starts it).
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { startNginxFront } from "../../scripts/lib/fronts.ts";
import type { Front, NginxLogs } from "../../scripts/lib/fronts.ts";
import { freePort, tempDir } from "./fixture.ts";

/**
 * nginx with the shipped site in front of 127.0.0.1:`upstreamPort`; `site` changes the site's text (a control case).
 * `at` gives its directory and port (to start it again where it was, its cache kept).
 */
export async function startNginx(
  upstreamPort: number,
  site?: (site: string) => string,
  at?: { dir: string; port: number },
): Promise<Front & { logs: NginxLogs; stderr: () => string }> {
  return startNginxFront({
    program: requireProgram("nginx"),
    purgeModule: requireProgram("ngx_http_cache_purge_module.so"),
    dir: at?.dir ?? (await tempDir("fsa-nginx-")),
    port: at?.port ?? (await freePort()),
    upstreamPort,
    ...(site ? { site } : {}),
  });
}
