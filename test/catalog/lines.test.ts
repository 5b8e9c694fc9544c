// forEachLine against its oracle, node's readline (crlfDelay: Infinity): the same lines for every line ending, at
// every chunk size, with characters of 1 to 4 bytes falling across chunk boundaries.
import { createReadStream } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { forEachLine } from "../../src/catalog/lines.ts";
import { tempDir } from "../helpers/fixture.ts";

async function viaReadline(path: string): Promise<string[]> {
  const out: string[] = [];
  for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) out.push(line);
  return out;
}

async function viaForEachLine(path: string, chunk?: number): Promise<string[]> {
  const out: string[] = [];
  await forEachLine(path, (text, n) => out.push(n === out.length + 1 ? text : `numbered ${n}`), chunk);
  return out;
}

const CASES: [string, string | Buffer][] = [
  ["empty file", ""],
  ["one line, no ending", '{"a":1}'],
  ["one line, ending", '{"a":1}\n'],
  ["blank lines", "\n\na\n\n\nb\n\n"],
  ["CRLF", "a\r\nb\r\n\r\nc"],
  ["lone CR", "a\rb\r\rc\r"],
  ["CR then CRLF", "a\r\r\nb"],
  ["CR at the end", "a\r"],
  ["two CRs at the end", "a\r\r"],
  ["mixed", "x\ny\r\nz\rw\n\r\n"],
  ["byte order mark", "\uFEFF{}\n{}\n"],
  ["multi-byte characters", "é\n€uro\r\n😀 grin\nñandú\r日本\n"],
  ["a long line", `${"x".repeat(5000)}\n${"é".repeat(3000)}\nend`],
  ["invalid UTF-8 inside a line", Buffer.from([0x61, 0xff, 0x62, 0x0a, 0xc3, 0xa9, 0x0a])],
  ["spaces around", "  a  \n\t\n b\r\n"],
];

describe("forEachLine", () => {
  it.each(CASES)("%s: readline's lines, at every chunk size", async (_name, content) => {
    const path = join(await tempDir("fsa-lines-"), "file.ndjson");
    await writeFile(path, content);
    const expected = await viaReadline(path);
    expect(await viaForEachLine(path)).toEqual(expected);
    for (const chunk of [1, 2, 3, 5, 7, 64]) expect(await viaForEachLine(path, chunk)).toEqual(expected);
  });

  it("rejects when the file cannot be opened", async () => {
    await expect(forEachLine(join(await tempDir("fsa-lines-"), "missing.ndjson"), () => {})).rejects.toMatchObject({
      code: "ENOENT",
    });
  });
});
