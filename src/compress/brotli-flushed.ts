// Brotli streams flushed at given offsets, compressed on a worker thread. A brotli template (context-brotli.ts) is
// one stream flushed twice at each page link: some 200 flushes for a sale list, each a round trip through the
// thread pool. On the event loop each round trip waits for a turn of the loop, and a loop busy with requests takes
// 2-3 ms a turn: the template of the 400 KB sample list took 1.2-3.3 s to make under load (40 ms idle), and every
// variant asked for meanwhile went out as gzip. On a thread of its own the stream is made in one turn of the loop.
import { Worker } from "node:worker_threads";

/**
 * The worker: plain JavaScript evaluated as CommonJS (no TypeScript loader needed in whatever runs the server). For
 * each job it compresses `input` as one stream with `params`, flushed at each offset in `cuts`, and answers with the
 * stream and where each flush ended in it.
 */
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const zlib = require("node:zlib");
async function flushed(input, cuts, params) {
  const encoder = zlib.createBrotliCompress({ params });
  const chunks = [];
  let size = 0;
  encoder.on("data", (chunk) => { chunks.push(chunk); size += chunk.length; });
  const ended = new Promise((resolve, reject) => { encoder.on("end", resolve); encoder.on("error", reject); });
  const flush = () => new Promise((resolve) => encoder.flush(zlib.constants.BROTLI_OPERATION_FLUSH, () => resolve(size)));
  const marks = new Int32Array(cuts.length);
  let from = 0;
  for (let i = 0; i < cuts.length; i++) {
    encoder.write(input.subarray(from, cuts[i]));
    marks[i] = await flush();
    from = cuts[i];
  }
  encoder.end(input.subarray(from));
  await ended;
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) { out.set(chunk, at); at += chunk.length; }
  return { out, marks };
}
parentPort.on("message", ({ id, input, cuts, params }) => {
  flushed(Buffer.from(input.buffer, input.byteOffset, input.byteLength), cuts, params).then(
    ({ out, marks }) => parentPort.postMessage({ id, out, marks }, [out.buffer, marks.buffer]),
    (err) => parentPort.postMessage({ id, error: String(err && err.message || err) }),
  );
});
`;

interface Job {
  resolve: (r: { stream: Buffer; marks: Int32Array }) => void;
  reject: (err: Error) => void;
}

let worker: Worker | null = null;
const jobs = new Map<number, Job>();
let nextId = 0;

/** The worker, started on first use; it holds the process open only while it has a job. */
function workerOf(): Worker {
  if (worker) return worker;
  const w = new Worker(WORKER_SOURCE, { eval: true });
  w.unref();
  w.on("message", ({ id, out, marks, error }: { id: number; out?: Uint8Array; marks?: Int32Array; error?: string }) => {
    const job = jobs.get(id);
    if (!job) return;
    jobs.delete(id);
    if (jobs.size === 0) w.unref();
    if (error !== undefined || !out || !marks) job.reject(new Error(`brotli worker: ${error ?? "no output"}`));
    else job.resolve({ stream: Buffer.from(out.buffer, out.byteOffset, out.byteLength), marks });
  });
  const fail = (err: Error) => {
    if (worker === w) worker = null;
    for (const job of jobs.values()) job.reject(err);
    jobs.clear();
  };
  w.on("error", fail);
  w.on("exit", (code) => fail(new Error(`brotli worker exited (${code})`)));
  return (worker = w);
}

/**
 * `input` compressed as one brotli stream with `params`, flushed (BROTLI_OPERATION_FLUSH) at each of `cuts`
 * (ascending offsets into `input`), on the worker thread: the stream, and the stream's length after each flush.
 */
export function brotliFlushed(
  input: Buffer,
  cuts: readonly number[],
  params: Record<number, number>,
): Promise<{ stream: Buffer; marks: Int32Array }> {
  const w = workerOf();
  const id = nextId++;
  // A copy of its own: the input is transferred, and a body's bytes may be a view of a larger snapshot buffer.
  const copy = new Uint8Array(input.length);
  copy.set(input);
  const at = Int32Array.from(cuts);
  return new Promise((resolve, reject) => {
    jobs.set(id, { resolve, reject });
    w.ref();
    w.postMessage({ id, input: copy, cuts: at, params }, [copy.buffer, at.buffer]);
  });
}
