/** A sandbox that cannot be built as asked: nothing runs. The message is shown as `gate-sh: <message>`. */
export class SandboxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SandboxError';
  }
}

export const BWRAP_MISSING = 'bubblewrap (bwrap) is not installed: apt-get install -y bubblewrap';
