import { createReadStream } from "node:fs";
import { StringDecoder } from "node:string_decoder";

/**
 * A file's lines, one at a time: read in chunks, each chunk split before the next is read, so a
 * year of records never has to fit in memory (readline's iterator queues lines ahead of a slow
 * consumer instead).
 */
export async function* linesOf(path: string): AsyncGenerator<{ text: string; number: number }> {
  const decoder = new StringDecoder("utf8");
  let rest = "";
  let number = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 64 * 1024 })) {
    const text = rest + decoder.write(chunk as Buffer);
    const parts = text.split("\n");
    rest = parts.pop() ?? "";
    for (const part of parts) yield { text: part.replace(/\r$/, ""), number: ++number };
  }
  rest += decoder.end();
  if (rest !== "") yield { text: rest, number: ++number };
}

/** The first line of a file, or null when it has none. */
export async function firstLine(path: string): Promise<string | null> {
  for await (const { text } of linesOf(path)) return text;
  return null;
}
