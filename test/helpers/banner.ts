import type { ChildProcess } from "node:child_process";

/** What `serve --http` wrote on stderr up to the end of its banner. */
export async function untilBanner(child: ChildProcess): Promise<string> {
  let banner = "";
  child.stderr!.setEncoding("utf8");
  for await (const chunk of child.stderr!) {
    banner += chunk;
    if (banner.includes("Stop with Ctrl+C")) break;
  }
  return banner;
}
