// scripts/lib/fronts.ts's nginx front with `openFiles` (the edge benchmark's open-file variant): nginx as Debian runs
// it, a master and a worker, the worker's open-file limit set by worker_rlimit_nofile, which a single nginx process
// (master_process off) ignores; stopped, its children are gone too (they outlive a master that is killed).
import { describe, expect, it } from "vitest";
import { childrenOf, ended, nginxOpenFilesLimit, nginxWorkers, startNginxFront } from "../../scripts/lib/fronts.ts";
import { openFiles } from "../../scripts/lib/proc.ts";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { freePort, tempDir } from "../helpers/fixture.ts";

describe("startNginxFront with openFiles", () => {
  it("runs a worker whose open-file limit is worker_rlimit_nofile, and stops it with its master", async () => {
    // Under the usual hard limits (Debian's 1,048,576; a container's 20,000 here): nginx lowers or raises to it.
    const files = 500;
    const front = await startNginxFront({
      program: requireProgram("nginx"),
      purgeModule: requireProgram("ngx_http_cache_purge_module.so"),
      dir: await tempDir("fsa-nginx-"),
      port: await freePort(),
      upstreamPort: await freePort(), // nothing there: /healthz is nginx's 502, enough to know it answers
      openFiles: files,
    });
    const children = childrenOf(front.child.pid!); // the worker, the cache manager and loader
    const workers = nginxWorkers(front.child.pid!);
    try {
      expect(workers).toHaveLength(1);
      expect(openFiles(workers[0]!).limit).toBe(nginxOpenFilesLimit(files));
      expect((await fetch(`${front.url}/healthz`)).status).toBe(502);
    } finally {
      await front.stop();
    }
    expect(children.length).toBeGreaterThan(1);
    expect(children.filter((pid) => !ended(pid))).toEqual([]);
  });
});
