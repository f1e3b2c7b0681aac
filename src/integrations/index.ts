/**
 * The integrations/ layer's public surface: other layers import from here, files inside integrations/ import each other
 * directly (never this index, so no import cycle runs through it).
 * The layer: the agents' side: agent set-up and `gate doctor`'s checks (agents/), the hooks' decisions
 * (hooks/), the JSON-RPC host session. The MCP server is loaded lazily by `gate mcp` (a dynamic import of
 * mcp-server.ts, not through here). Trust: what an agent sends (hook input, JSON-RPC) is untrusted.
 */
export { agentId, AGENTS, claudeShell, geminiShell, type Route } from './agents/agents.js';
export { diagnose, formatAgentSummary, formatDoctor } from './agents/doctor.js';
export { fsProbe, isGateShEntry } from './agents/entry.js';
export { install, setupAgent, SetupError, undoAgent } from './agents/setup.js';
export {
  gatedDecision,
  type HookAgent,
  type HookCall,
  type HookDecision,
  HookInputError,
  hookOutput,
  type HookRoute,
  parseHookInput,
  unsandboxedDecision,
} from './hooks/decision.js';
export { runHostSession } from './host-session.js';
