/**
 * `gate doctor [--json]`: per agent found on this machine, whether gate-sh is wired in and whether the agent
 * would really run it (src/integrations/agents/doctor.ts). Exit 1 when an agent that was set up, or that
 * names gate-sh somewhere, would not use it (a silent fallback), so scripts can check.
 */
import { diagnose, formatDoctor } from '../../integrations/index.js';

export async function run(values: { json: boolean }): Promise<number> {
  const reports = diagnose(process.env);
  process.stdout.write(values.json ? JSON.stringify(reports, null, 2) + '\n' : formatDoctor(reports));
  return reports.some((r) => r.warnings.length > 0) ? 1 : 0;
}
