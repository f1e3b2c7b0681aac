/**
 * Bounds on a stream socket's connections: how many are open at once, all peers together and per peer
 * (a process, as the kernel names it), so that connections held open by a gated run can never take the
 * descriptors the daemon needs for itself (a rule reload, an approver attaching, an escalation). At the
 * bound, the connection that has been idle longest makes room; when none is idle the new one is refused.
 * Pure bookkeeping (no sockets, no clock of its own): the servers (server.ts, the escalation runner) call
 * it. Trust: the peer key comes from the kernel (SO_PEERCRED), never from what a connection sends.
 */

export interface TableLimits {
  /** connections open at once, all peers together */
  maxConnections: number;
  /** connections one peer holds at once */
  maxPerPeer: number;
}

export interface Held {
  readonly peer: string;
  /** when it last did something (a byte in or out), in ms */
  lastActive: number;
  /** whether it may be closed to make room (nothing in flight, no partial frame) */
  idle(): boolean;
  /** close it (the table has already forgotten it) */
  close(why: string): void;
}

export class ConnectionTable<H extends Held> {
  private readonly open = new Set<H>();
  private readonly perPeer = new Map<string, number>();

  constructor(private readonly limits: TableLimits) {}

  get size(): number {
    return this.open.size;
  }

  /** Makes room for a new connection of `peer`: true when it may be kept (call add), false when it must be refused. */
  admit(peer: string): boolean {
    const mine = this.perPeer.get(peer) ?? 0;
    if (mine >= this.limits.maxPerPeer && !this.evict((h) => h.peer === peer, `over ${this.limits.maxPerPeer} connections of one process`)) return false;
    if (this.open.size >= this.limits.maxConnections && !this.evict(() => true, `over ${this.limits.maxConnections} connections`)) return false;
    return true;
  }

  add(h: H): void {
    this.open.add(h);
    this.perPeer.set(h.peer, (this.perPeer.get(h.peer) ?? 0) + 1);
  }

  /** Forget a connection (idempotent). */
  remove(h: H): void {
    if (!this.open.delete(h)) return;
    const n = (this.perPeer.get(h.peer) ?? 1) - 1;
    if (n > 0) this.perPeer.set(h.peer, n);
    else this.perPeer.delete(h.peer);
  }

  all(): IterableIterator<H> {
    return this.open.values();
  }

  /** Closes the idle connection (of those `which` picks) that has been idle longest; false when none is idle. */
  private evict(which: (h: H) => boolean, why: string): boolean {
    let oldest: H | undefined;
    for (const h of this.open) if (which(h) && h.idle() && (!oldest || h.lastActive < oldest.lastActive)) oldest = h;
    if (!oldest) return false;
    this.remove(oldest);
    oldest.close(`closed to make room: ${why}`);
    return true;
  }
}
