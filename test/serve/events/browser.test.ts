// The guide's EventSource example, run by Chromium on a page of another origin against a live server: the sale that
// begins when the injected clock passes its instant reaches the page.
import { createServer } from "node:http";
import type { Server } from "node:http";
import { chromium } from "playwright-core";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SAMPLE_KEY } from "../../../src/api/guide.ts";
import { requireProgram } from "../../../scripts/lib/test-programs.ts";
import { BASE, D, standardCatalog, startTestApi, T0 } from "../../helpers/fixture.ts";
import type { TestApi } from "../../helpers/fixture.ts";
import { clockScheduler, poll } from "../../helpers/sse.ts";

const CHROMIUM = requireProgram("chromium");

describe("EventSource in Chromium", () => {
  let api: TestApi;
  let advanceTo: (seconds: number) => void;
  let browser: Browser;
  let other: Server;
  let otherUrl: string;
  beforeAll(async () => {
    const made: { api?: TestApi } = {};
    const timers = clockScheduler({
      get now() {
        return made.api ? made.api.clock.now : T0;
      },
      set now(v: number) {
        made.api!.clock.now = v;
      },
    });
    advanceTo = timers.advanceTo;
    api = made.api = await startTestApi(standardCatalog(), { events: { scheduler: timers.scheduler } });
    const doc = (await (await fetch(`${api.url}/v1/openapi.json`)).json()) as { info: { description: string } };
    const sample = /```javascript\n([\s\S]*?)```/.exec(doc.info.description)![1]!;
    expect(sample).toContain("new EventSource(");
    const script = sample.replaceAll(BASE, api.url).replaceAll(SAMPLE_KEY, api.key);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    other = createServer((_, res) =>
      res.writeHead(200, { "content-type": "text/html" }).end(`<!DOCTYPE html><script>${script}</script>`),
    );
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    otherUrl = `http://localhost:${(other.address() as { port: number }).port}/`;
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => other?.close(resolve));
    await api?.close();
  });

  it("the guide's sample on another origin logs a sale as it begins", async () => {
    api.clock.now = T0 + 3600;
    const page = await browser.newPage();
    const logged: string[] = [];
    page.on("console", (m) => logged.push(m.text()));
    await page.goto(otherUrl);
    await poll(() => api.handler.stats().events.streams === 1, 15_000);
    advanceTo(T0 + D); // "dresses" (women) begins
    await poll(() => logged.length > 0, 15_000);
    expect(logged[0]).toMatch(/^2026-11-23T17:00:00Z now on: Sale dresses https:\/\/www\.example-retailer\.com\//);
    await page.close();
  });
});
