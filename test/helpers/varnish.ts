// A real varnishd (Debian's `varnish`) for the tests: a VCL from deploy/ with its backend port replaced, on a free
// loopback port, in its own instance directory (varnishncsa and varnishadm reach it by that name), stopped afterwards
// (scripts/lib/fronts.ts starts it).
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { startVarnishFront } from "../../scripts/lib/fronts.ts";
import { freePort, tempDir } from "./fixture.ts";

export interface Varnish {
  url: string;
  /** The instance name (a directory) for `varnishncsa -n` and `varnishadm -n`. */
  instance: string;
  stop(): Promise<void>;
}

/**
 * Starts varnishd with the VCL at `vclPath`, its `.port = "8080"` backend pointed at `backendPort`; `at` gives its
 * directory and port (to start it again where it was).
 */
export async function startVarnish(
  vclPath: string,
  backendPort: number,
  at?: { dir: string; port: number },
): Promise<Varnish> {
  requireProgram("libvmod_vsthrottle.so"); // deploy/varnish imports it: missing, varnishd would fail less clearly
  return startVarnishFront({
    program: requireProgram("varnishd"),
    pkill: requireProgram("pkill"),
    dir: at?.dir ?? (await tempDir("fsa-varnish-")),
    port: at?.port ?? (await freePort()),
    upstreamPort: backendPort,
    vcl: vclPath,
    storage: "malloc,32m",
  });
}
