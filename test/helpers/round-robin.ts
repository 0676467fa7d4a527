import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A load balancer with no affinity: each request goes to the next replica in turn, with the
 * replica's own Host (as a reverse proxy would set it).
 */
export async function roundRobin(urls: string[]) {
  let next = 0;
  const sentTo: string[] = [];
  const server = createServer((req, res) => {
    const target = new URL(urls[next++ % urls.length]!);
    sentTo.push(target.host);
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => {
      res.writeHead(502).end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    sentTo,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
