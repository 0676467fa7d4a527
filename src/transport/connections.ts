import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * Open sockets, capped per peer address and in total, so that one peer holding idle sockets
 * cannot keep anyone else out (node's own `maxConnections` drops whichever socket comes next,
 * the legitimate peer's included).
 *
 * A new socket over its peer's cap closes that peer's oldest idle socket; over the total, the
 * oldest idle socket of the peer holding the most. Idle means no request in progress on it: a
 * socket that sent nothing yet, or a keep-alive socket between requests. A socket serving a
 * request (a call, a session's event stream) is never closed for room; when there is no idle
 * socket to close, the new socket is refused (closed at once, as `maxConnections` does).
 *
 * A peer is an IPv4 address, or an IPv6 /64 (one host is usually given a whole /64).
 */
export interface ConnectionLimitsOptions {
  perPeer: number;
  total: number;
  /** Told of each socket closed or refused for room, by cap. */
  onLimit?: (event: { cap: "peer" | "total"; action: "closed_idle" | "refused" }) => void;
}

interface Tracked {
  socket: Socket;
  peer: string;
  /** Requests in progress on it. */
  busy: number;
  /** Since when it has had no request in progress (its connection, or its last answer). */
  idleSince: number;
  gone: boolean;
}

export class ConnectionLimits {
  private readonly peers = new Map<string, Set<Tracked>>();
  private readonly sockets = new WeakMap<Socket, Tracked>();
  private total = 0;

  constructor(private readonly options: ConnectionLimitsOptions) {}

  get open(): number {
    return this.total;
  }

  watch(server: Server): void {
    server.on("connection", (socket: Socket) => this.admit(socket));
    server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      const tracked = this.sockets.get(req.socket);
      if (!tracked) return;
      tracked.busy++;
      res.once("close", () => {
        tracked.busy--;
        tracked.idleSince = performance.now();
      });
    });
  }

  private admit(socket: Socket): void {
    const peer = peerOf(socket.remoteAddress);
    const own = this.peers.get(peer) ?? new Set<Tracked>();
    if (own.size >= this.options.perPeer && !this.closeOldestIdle(own, "peer")) {
      this.refuse(socket, "peer");
      return;
    }
    if (this.total >= this.options.total && !this.closeForTotal()) {
      this.refuse(socket, "total");
      return;
    }
    const tracked: Tracked = { socket, peer, busy: 0, idleSince: performance.now(), gone: false };
    own.add(tracked);
    this.peers.set(peer, own);
    this.sockets.set(socket, tracked);
    this.total++;
    socket.once("close", () => this.forget(tracked));
  }

  /** The oldest idle socket of the peer holding the most (that has one idle), closed. */
  private closeForTotal(): boolean {
    const holders = [...this.peers.values()].sort((a, b) => b.size - a.size);
    for (const sockets of holders) if (this.closeOldestIdle(sockets, "total")) return true;
    return false;
  }

  private closeOldestIdle(sockets: Set<Tracked>, cap: "peer" | "total"): boolean {
    let oldest: Tracked | null = null;
    for (const tracked of sockets)
      if (tracked.busy === 0 && (!oldest || tracked.idleSince < oldest.idleSince)) oldest = tracked;
    if (!oldest) return false;
    this.forget(oldest); // counted out now: its 'close' comes later
    oldest.socket.destroy();
    this.options.onLimit?.({ cap, action: "closed_idle" });
    return true;
  }

  private refuse(socket: Socket, cap: "peer" | "total"): void {
    socket.destroy();
    this.options.onLimit?.({ cap, action: "refused" });
  }

  private forget(tracked: Tracked): void {
    if (tracked.gone) return;
    tracked.gone = true;
    this.total--;
    const own = this.peers.get(tracked.peer);
    own?.delete(tracked);
    if (own?.size === 0) this.peers.delete(tracked.peer);
  }
}

/** The peer a remote address belongs to: the IPv4 address, or the IPv6 address's /64. */
export function peerOf(address: string | undefined): string {
  if (!address) return "unknown";
  const plain = address.replace(/%.*$/, "").toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(plain)?.[1];
  if (mapped) return mapped;
  if (!plain.includes(":")) return plain;
  const [head = "", tail = ""] = plain.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = plain.includes("::")
    ? [...left, ...Array(8 - left.length - right.length).fill("0"), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g || "0", 16).toString(16))
    .join(":")}::/64`;
}
