/**
 * `gate approve`: an approval console on the approval channel.
 *   gate approve                      interactive: shows each pending prompt, one-key answers (a/s/p/d/x)
 *   gate approve --json               JSON lines: events out (attached, prompt, resolved, answer),
 *                                     answers in ({"approval_id": ..., "decision": ...})
 *   gate approve --answer ID DECISION one-shot answer
 */
import { createInterface } from 'node:readline';
import { gatePaths } from '../../paths/index.js';
import { needsDaemon } from '../needs-daemon.js';
import { ApprovalClient, decisionForKey, renderPrompt, VIEW_KEY, wholeCommand } from '../../client/index.js';
import { visibleText } from '../../text/index.js';
import { parseReviewDecision, type PromptEvent, type ReviewDecision, reviewDecisionKind } from '../../protocol/index.js';

/** Options, as src/cli/args/approve.ts declares them. */
export interface ApproveArgs {
  json: boolean;
  /** an approval id to answer once, with `decision` */
  answer?: string;
  decision?: string;
  name?: string;
}

export async function run(values: ApproveArgs): Promise<number> {
  const paths = gatePaths(process.env);
  await needsDaemon(process.env);
  const client = await ApprovalClient.connect(paths);
  if (values.answer !== undefined) {
    try {
      const decision = parseReviewDecision(values.decision);
      const r = await client.call('answer', { approval_id: values.answer, decision });
      if (!r.ok) {
        process.stderr.write(`gate: ${String(r.error)}\n`);
        return 1;
      }
      process.stdout.write(`${values.answer}: ${reviewDecisionKind(decision)}\n`);
      return 0;
    } finally {
      client.close();
    }
  }
  const name = values.name ?? `${values.json ? 'json' : 'console'}-${process.pid}`;
  const closed = new Promise<void>((resolve) => (client.onClose = resolve));
  if (values.json) jsonConsole(client);
  else interactiveConsole(client);
  const attached = await client.call('attach', { name });
  if (values.json) process.stdout.write(JSON.stringify({ ...attached, re: undefined }) + '\n');
  else process.stderr.write(`attached as '${name}' to session '${paths.session}'; waiting for prompts (Ctrl-C to quit)\n`);
  await closed;
  return 0;
}

function jsonConsole(client: ApprovalClient): void {
  const out = (o: object): void => void process.stdout.write(JSON.stringify(o) + '\n');
  client.onEvent = out;
  const rl = createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    if (!line.trim()) return;
    // one untrusted JSON object per input line: the daemon checks it too
    let req: Record<string, unknown>;
    try {
      req = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return out({ type: 'error', message: 'each input line must be a JSON object {"approval_id", "decision"}' });
    }
    let decision: ReviewDecision;
    try {
      decision = parseReviewDecision(req.decision);
    } catch (e) {
      return out({ type: 'answer', approval_id: req.approval_id, ok: false, error: (e as Error).message });
    }
    client.call('answer', { approval_id: req.approval_id as string, decision }).then(
      (r) => out({ ...r, re: undefined }),
      (e: Error) => out({ type: 'answer', approval_id: req.approval_id, ok: false, error: e.message }),
    );
  });
}

function interactiveConsole(client: ApprovalClient): void {
  const open: PromptEvent[] = [];
  const err = process.stderr;
  const show = (): void => {
    if (open[0]) err.write(renderPrompt(open[0]) + (open.length > 1 ? `\n   (${open.length - 1} more waiting)` : '') + '\n> ');
  };
  client.onEvent = (e) => {
    if (e.type === 'prompt') {
      open.push(e);
      if (open.length === 1) show();
    } else if (e.type === 'resolved') {
      const i = open.findIndex((p) => p.approval_id === e.approval_id);
      if (i < 0) return;
      open.splice(i, 1);
      err.write(`\n${visibleText(`   ${String(e.approval_id)}: ${reviewDecisionKind(e.decision)} by ${String(e.approver)}${e.note ? ` (${String(e.note)})` : ''}`)}\n`);
      if (i === 0) show();
    }
  };
  const answerKey = (key: string): void => {
    const p = open[0];
    if (!p) return;
    if (key === VIEW_KEY) {
      err.write(`\n${wholeCommand(p)}\n${renderPrompt(p)}\n> `);
      return;
    }
    const d = decisionForKey(p, key);
    if (!d) {
      err.write(`\n   '${key}' is not offered here\n> `);
      return;
    }
    client.call('answer', { approval_id: p.approval_id, decision: d }).then(
      (r) => r.ok || err.write(`\n   ${String(r.error)}\n> `),
      (e: Error) => err.write(`\n   ${e.message}\n`),
    );
  };
  const input = process.stdin;
  if (input.isTTY) {
    input.setRawMode(true);
    input.setEncoding('utf8');
    input.on('data', (k: string) => {
      if (k === '\u0003' || k === '\u0004') {
        client.close();
        input.setRawMode(false);
        input.pause();
        return;
      }
      answerKey(k.trim().slice(0, 1));
    });
  } else {
    createInterface({ input }).on('line', (l) => l.trim() && answerKey(l.trim()[0]));
  }
}
