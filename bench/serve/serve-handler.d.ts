// Types for serve-handler 6 (it ships none): the one option the benchmark uses, so `tsc` passes before `npm ci --prefix bench`.
declare module "serve-handler" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  export default function serveHandler(
    req: IncomingMessage,
    res: ServerResponse,
    /** public: the directory served. */
    options?: { public?: string },
  ): Promise<void>;
}
