/**
 * The daemon for a `gate` command that cannot work without one (`gate approve`, `gate config set`): started
 * in the background as gate-sh starts it (src/client/autostart.ts), so a console opened before any agent
 * runs just attaches and waits. Not started with GATE_NO_AUTOSTART=1 (the command then reports that no
 * daemon runs, as before), nor from inside a gated run (GATE_RUN: the environment there is the script's,
 * and a daemon started from it could carry a weaker policy); `autostart = false` in config.toml is
 * ensureDaemon's to refuse, with its own message.
 */
import type { Env } from '../paths/index.js';

export async function needsDaemon(env: Env): Promise<void> {
  if (env.GATE_NO_AUTOSTART === '1' || env.GATE_RUN) return;
  const { ensureDaemon } = await import('../client/autostart.js');
  await ensureDaemon(env);
}
