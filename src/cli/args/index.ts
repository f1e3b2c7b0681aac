/** Every `gate` command's declaration, in the order `gate --help` lists them. Pure. */
import { approve } from './approve.js';
import { config } from './config.js';
import { daemon } from './daemon.js';
import { doctor } from './doctor.js';
import { explain } from './explain.js';
import { hook } from './hook.js';
import { host } from './host.js';
import { init } from './init.js';
import { jobs } from './jobs.js';
import { log } from './log.js';
import { mcp } from './mcp.js';
import { policy } from './policy.js';
import { reload } from './reload.js';
import { rules } from './rules.js';
import { setup } from './setup.js';
import type { CommandSpec } from './spec.js';
import { status } from './status.js';

export const COMMANDS: readonly CommandSpec[] = [
  init,
  policy,
  rules,
  explain,
  daemon,
  reload,
  status,
  jobs,
  approve,
  config,
  log,
  mcp,
  host,
  setup,
  doctor,
  hook,
];
