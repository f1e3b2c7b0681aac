/** `gate host [--name NAME] [--socket [--path PATH]]`: declaration (the command: src/cli/commands/host.ts). Pure. */
import { type CommandSpec, flag, str } from './spec.js';

export const host: CommandSpec = {
  command: 'host',
  describe: 'JSON-RPC host API on stdio (approvals, policy updates)',
  usage: 'usage: gate host [--name NAME] [--socket [--path PATH]]',
  epilogue:
    'JSON-RPC 2.0 over newline-delimited JSON. The host receives item/commandExecution/requestApproval requests and ' +
    'answers {"decision": ...}; it may call approvalPolicy/set, sandboxPolicy/set, config/read, status/read.',
  builder: (y) =>
    y
      .option('name', str('the approver name the host attaches as'))
      .option('socket', flag('serve on a Unix socket, one session per connection'))
      .option('path', str('the socket path (default: <approval folder>/host.sock, never visible inside sandboxes)', { implies: 'socket' })),
  run: async (a, ctx) =>
    ((await ctx.load('host')) as typeof import('../commands/host.js')).run({
      name: a.name as string | undefined,
      socket: a.socket === true,
      path: a.path as string | undefined,
    }),
};
