/**
 * `gate setup <agent> [--route R]...` and `gate setup --undo <agent>`: wire gate-sh into an agent the way
 * that agent really picks its shell (src/integrations/agents/), no root needed; `gate setup shell` prints
 * what any other agent needs. Says what it changed; running it twice changes nothing the second time.
 */
import { agentId, AGENTS, install, type Route, setupAgent, SetupError, undoAgent } from '../../integrations/index.js';
import { shellWord } from '../../text/index.js';

/** Options, as src/cli/args/setup.ts declares them. */
export interface SetupArgs {
  agent: string;
  undo: boolean;
  route?: string[];
}

export async function run(values: SetupArgs): Promise<number> {
  if (values.agent === 'shell' && !values.undo) return genericShell();
  const id = agentId(values.agent);
  if (!id) {
    process.stderr.write(`gate: setup: unknown agent '${values.agent}' (known: ${Object.keys(AGENTS).join(', ')}, or 'shell' for any other)\n`);
    return 2;
  }
  try {
    const res = values.undo ? undoAgent(id, process.env) : setupAgent(id, (values.route as Route[] | undefined) ?? [...AGENTS[id].defaultRoutes], process.env);
    for (const c of res.changes) process.stdout.write(`${c}\n`);
    for (const n of res.notes) process.stdout.write(`note: ${n}\n`);
    return 0;
  } catch (e) {
    if (!(e instanceof SetupError)) throw e;
    process.stderr.write(`gate: setup: ${e.message}\n`);
    return 1;
  }
}

/** `gate setup shell`: what any agent needs; writes nothing. */
function genericShell(): number {
  const inst = install(process.env);
  process.stdout.write(`gate-sh for any agent:
  1. The agent must run gate-sh where it would run bash. Many agents accept a shell only when its name is
     bash (or zsh). 'gate setup claude-code' or 'gate setup gemini --route shell' writes such an entry point:
       ${inst.entry}   (a launcher: exec ${inst.gateSh} "$@")
     or make one yourself:  ln -s ${shellWord(inst.gateSh)} ~/bin/bash
  2. Point the agent at it the way it picks its shell:
       - an agent that reads SHELL or its own setting: set it to ${inst.entry}
       - an agent that runs 'bash' from PATH: start it with PATH=${shellWord(inst.entry.replace(/\/bash$/, ''))}:$PATH
       - an agent that uses the login shell: that needs root (chsh); use MCP instead:
           command ${inst.node}, args ["${inst.gate}", "mcp"]   (a gated "shell" tool)
  3. If the agent runs commands inside its own sandbox, turn that sandbox off (gate-sh sandboxes every
     command itself, and cannot reach its daemon from inside another sandbox).
  4. Check that the agent really runs gate-sh: ask it to run  echo $GATE_RUN  (gate-sh sets it; bash does not).
`);
  return 0;
}
