/** Session approvals (`approved_for_session`), keyed by the approval key of one subcommand or exec. */
export class SessionCache {
  private readonly keys = new Map<string, string>(); // key → approval_id that granted it

  has(key: string): string | undefined {
    return this.keys.get(key);
  }

  add(key: string, approvalId: string): void {
    this.keys.set(key, approvalId);
  }

  get size(): number {
    return this.keys.size;
  }
}
