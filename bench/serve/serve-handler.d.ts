// Types for serve-handler 6 (it ships none), declared here so `tsc` passes even before `npm ci --prefix bench`.
declare module "serve-handler" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  /** The subset of serve-handler's options the benchmark uses. */
  interface ServeHandlerOptions {
    /** Directory served. */
    public?: string;
    /** Strong ETags (sha1 of the file) instead of Last-Modified. Default false. */
    etag?: boolean;
    /** Directory listings. Default true. */
    directoryListing?: boolean | string[];
  }

  export default function serveHandler(
    req: IncomingMessage,
    res: ServerResponse,
    options?: ServeHandlerOptions,
  ): Promise<void>;
}
