/** Pure parsers of what `sandbox-kit verify` reads from a sandbox host. */

/** `ps -eo pid=,args=` rows. */
export interface ProcessRow {
  pid: number;
  args: string;
}

export function parseProcesses(text: string): ProcessRow[] {
  const rows: ProcessRow[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*(\d+)\s+(.+?)\s*$/.exec(line);
    if (m) rows.push({ pid: Number(m[1]), args: m[2]! });
  }
  return rows;
}

/** The process running `<cli> <command>` (e.g. the bundle's `platform`), if any. */
export function findCommand(rows: readonly ProcessRow[], cli: string, command: string): ProcessRow | undefined {
  return rows.find((r) => {
    const words = r.args.split(/\s+/);
    const at = words.indexOf(cli);
    return at >= 0 && words[at + 1] === command;
  });
}

export interface TemplateListing {
  templateID: string;
  aliases: string[];
  /** Build status when the API reports one. */
  status?: string;
}

/** GET /templates (an array of templates with their aliases). */
export function parseTemplates(text: string): TemplateListing[] | string {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return `not JSON: ${text.trim().slice(0, 120) || '(empty)'}`;
  }
  if (!Array.isArray(doc)) return `expected a JSON array of templates, got ${text.trim().slice(0, 120)}`;
  return doc.map((t: Record<string, unknown>) => ({
    templateID: String(t.templateID ?? ''),
    aliases: Array.isArray(t.aliases) ? t.aliases.map(String) : [],
    ...(typeof t.buildStatus === 'string' ? { status: t.buildStatus } : typeof t.status === 'string' ? { status: t.status } : {}),
  }));
}

export interface ProbeReport {
  create: { status: number; sandboxID?: string; message?: string } | null;
  frames: Array<{ flags: number; message: Record<string, unknown> }>;
  kill: number | string | null;
  error: string | null;
}

export interface ProbeOutcome {
  created: boolean;
  sandboxID?: string;
  stdout: string;
  stderr: string;
  exitCode?: number;
  /** Why the probe did not get as far as the sandbox's answer. */
  problem?: string;
  removed: boolean;
}

const decode = (b64: unknown) => (typeof b64 === 'string' ? Buffer.from(b64, 'base64').toString('utf8') : '');

/** What the probe program printed (its last JSON line): the sandbox, its request's output and exit code. */
export function parseProbeReport(text: string): ProbeOutcome {
  const line = text
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .pop();
  if (!line)
    return {
      created: false,
      stdout: '',
      stderr: '',
      removed: false,
      problem: `the probe printed no report: ${text.trim().slice(0, 200) || '(nothing)'}`,
    };
  let report: ProbeReport;
  try {
    report = JSON.parse(line) as ProbeReport;
  } catch {
    return { created: false, stdout: '', stderr: '', removed: false, problem: `unreadable probe report: ${line.slice(0, 200)}` };
  }
  const created = report.create !== null && report.create.status >= 200 && report.create.status < 300;
  const removed = typeof report.kill === 'number' && report.kill >= 200 && report.kill < 300;
  let stdout = '';
  let stderr = '';
  let exitCode: number | undefined;
  let trailerError: string | undefined;
  for (const frame of report.frames) {
    if (frame.flags === -1) trailerError = `Process.Start answered ${JSON.stringify(frame.message)}`;
    if (frame.flags & 2) {
      const error = frame.message.error as { code?: string; message?: string } | undefined;
      if (error) trailerError = `Process.Start ended with ${error.code ?? 'an error'}: ${error.message ?? ''}`.trim();
      continue;
    }
    const event = (frame.message.event ?? {}) as Record<string, Record<string, unknown>>;
    if (event.data) {
      stdout += decode(event.data.stdout);
      stderr += decode(event.data.stderr);
    }
    if (event.end) exitCode = typeof event.end.exitCode === 'number' ? event.end.exitCode : 0;
  }
  const base = { created, ...(report.create?.sandboxID ? { sandboxID: report.create.sandboxID } : {}), stdout, stderr, removed };
  if (report.error) return { ...base, problem: report.error };
  if (!created)
    return {
      ...base,
      problem: `creating a sandbox failed: ${report.create ? `${report.create.status} ${report.create.message ?? ''}`.trim() : 'no answer'}`,
    };
  if (trailerError) return { ...base, problem: trailerError };
  return { ...base, ...(exitCode !== undefined ? { exitCode } : { problem: 'the process stream ended without an end event' }) };
}

/**
 * Whether a direct request from a sandbox, made past its proxy (bypassCommand), stayed off the host's own address:
 * it failed (no route out), or it was seen from the egress address. Seen from the host's address, or from any other
 * when the egress address is known, it got out.
 */
export function judgeBypass(outcome: ProbeOutcome, known: { egressIp?: string; hostSeen?: string }): { ok: boolean; detail: string } {
  const removed = outcome.created ? (outcome.removed ? '; sandbox removed' : `; sandbox ${outcome.sandboxID} NOT removed`) : '';
  if (outcome.problem) return { ok: false, detail: `${outcome.problem}${removed}` };
  const flushed = outcome.stderr.includes('nat table flushed') ? 'its NAT table flushed' : 'no NAT table to flush';
  if (outcome.exitCode !== 0) {
    const why =
      outcome.stderr
        .split('\n')
        .filter((l) => l.trim() !== '' && !l.includes('nat table flushed'))
        .pop() ?? '';
    return {
      ok: true,
      detail: `${flushed}, the direct request in sandbox ${outcome.sandboxID} got no way out (${why.trim() || `exit ${outcome.exitCode}`})${removed}`,
    };
  }
  const seen = outcome.stdout.trim();
  const base = `${flushed}, the direct request in sandbox ${outcome.sandboxID} was seen as ${seen}`;
  if (known.hostSeen !== undefined && seen === known.hostSeen) return { ok: false, detail: `${base}, the host's own address${removed}` };
  if (known.egressIp !== undefined)
    return { ok: seen === known.egressIp, detail: `${base}${seen === known.egressIp ? ', the egress address' : ''}${removed}` };
  if (known.hostSeen !== undefined)
    return { ok: true, detail: `${base}, not the host's ${known.hostSeen} (no --egress-ip to compare with)${removed}` };
  return { ok: false, detail: `${base}: neither the egress address (--egress-ip) nor the host's own is known to compare with${removed}` };
}
