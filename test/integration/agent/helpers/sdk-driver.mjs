// Runs one scenario with the unmodified E2B SDK and prints its outcome as JSON on stdout. A separate Node process,
// because the SDK is an ES module graph that Jest's CommonJS runtime cannot load.
// Usage: node sdk-driver.mjs <scenario> <json: {apiUrl, sandboxUrl, sandboxID, ...scenario args}>
import { createHash } from 'node:crypto';
import { appendFileSync, chmodSync } from 'node:fs';
import { Sandbox } from 'e2b';

const [scenario, argText] = process.argv.slice(2);
const args = JSON.parse(argText);
const sha = (buf) => createHash('sha256').update(buf).digest('hex');

function errorOf(err) {
  return {
    name: err?.constructor?.name,
    message: String(err?.message ?? err),
    exitCode: err?.exitCode,
    stdout: err?.stdout,
    stderr: err?.stderr,
  };
}

async function attempt(fn) {
  try {
    return { ok: await fn() };
  } catch (err) {
    return { error: errorOf(err) };
  }
}

const scenarios = {
  async commands(sbx) {
    const basic = await sbx.commands.run('echo "out $FOO $BAR"; echo err >&2; pwd; id -un', { envs: { BAR: 'from-request' } });
    const cwd = await sbx.commands.run('pwd', { cwd: args.cwd });
    const asUser = await sbx.commands.run('id -un; echo $HOME; pwd', { user: args.user });
    const failed = await attempt(() => sbx.commands.run('echo partial; exit 7'));
    const missing = await attempt(() => sbx.commands.run('no-such-command-xyz'));
    const badCwd = await attempt(() => sbx.commands.run('true', { cwd: '/no/such/dir' }));
    const badUser = await attempt(() => sbx.commands.run('true', { user: 'no-such-user-xyz' }));
    const timeout = await attempt(() => sbx.commands.run('sleep 30', { timeoutMs: 1000 }));
    const pick = (r) => ({ stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode, error: r.error });
    return { basic: pick(basic), cwd: pick(cwd), asUser: pick(asUser), failed, missing, badCwd, badUser, timeout };
  },

  async background(sbx) {
    const handle = await sbx.commands.run('cat', { background: true, stdin: true });
    const listed = (await sbx.commands.list()).map((p) => ({ pid: p.pid, cmd: p.cmd, args: p.args }));
    await sbx.commands.sendStdin(handle.pid, 'hello stdin\n');
    let seen = '';
    for (let i = 0; i < 100 && !seen.includes('hello stdin'); i++) {
      await new Promise((r) => setTimeout(r, 50));
      seen = handle.stdout;
    }
    const killed = await sbx.commands.kill(handle.pid);
    const result = await attempt(() => handle.wait());
    const killUnknown = await sbx.commands.kill(999999);
    const after = (await sbx.commands.list()).map((p) => p.pid);
    return { pid: handle.pid, listed, seen, killed, result, killUnknown, after };
  },

  async reattach(sbx) {
    const handle = await sbx.commands.run('for i in 1 2 3 4 5 6; do echo tick$i; sleep 0.3; done', { background: true });
    await handle.disconnect();
    const again = await sbx.commands.connect(handle.pid);
    const result = await again.wait();
    return { pid: handle.pid, stdout: result.stdout, exitCode: result.exitCode };
  },

  async files(sbx) {
    const dir = args.dir;
    await sbx.files.write(`${dir}/text.txt`, 'hello text');
    const text = await sbx.files.read(`${dir}/text.txt`);
    const binary = new Uint8Array(256).map((_, i) => i);
    await sbx.files.write(`${dir}/bin.dat`, binary.buffer);
    const binBack = new Uint8Array(await sbx.files.read(`${dir}/bin.dat`, { format: 'bytes' }));
    const big = Buffer.alloc(100 * 1024 * 1024);
    for (let i = 0; i < big.length; i += 4096) big.writeUInt32LE(i, i);
    const bigInfo = await sbx.files.write(`${dir}/big.dat`, new Blob([big]));
    const bigBack = Buffer.from(await sbx.files.read(`${dir}/big.dat`, { format: 'bytes' }));
    const multi = await sbx.files.write([
      { path: `${dir}/multi/a.txt`, data: 'A' },
      { path: `${dir}/multi/b.txt`, data: 'B' },
    ]);
    const made = await sbx.files.makeDir(`${dir}/made/deep`);
    const madeAgain = await sbx.files.makeDir(`${dir}/made/deep`);
    const renamed = await sbx.files.rename(`${dir}/text.txt`, `${dir}/renamed.txt`);
    const existsOld = await sbx.files.exists(`${dir}/text.txt`);
    const existsNew = await sbx.files.exists(`${dir}/renamed.txt`);
    await sbx.files.remove(`${dir}/renamed.txt`);
    const existsRemoved = await sbx.files.exists(`${dir}/renamed.txt`);
    const removedAgain = await attempt(() => sbx.files.remove(`${dir}/renamed.txt`));
    const listing = (await sbx.files.list(dir)).map((e) => ({ name: e.name, type: e.type }));
    const missing = await attempt(() => sbx.files.read(`${dir}/missing.txt`));
    const withMeta = await attempt(() => sbx.files.write(`${dir}/meta.txt`, 'm', { metadata: { color: 'blue' } }));
    const metaInfo = await attempt(() => sbx.files.getInfo(`${dir}/meta.txt`));
    return {
      text,
      binaryEqual: Buffer.from(binBack).equals(Buffer.from(binary)),
      bigInfo: { path: bigInfo.path, name: bigInfo.name },
      bigEqual: bigBack.length === big.length && sha(bigBack) === sha(big),
      multi: multi.map((m) => m.path),
      made,
      madeAgain,
      renamed: { path: renamed.path, name: renamed.name },
      existsOld,
      existsNew,
      existsRemoved,
      removedAgain,
      listing,
      missing,
      withMeta,
      metaInfo: metaInfo.ok ? { metadata: metaInfo.ok.metadata, size: metaInfo.ok.size } : metaInfo,
    };
  },

  async watch(sbx) {
    const events = [];
    const handle = await sbx.files.watchDir(args.dir, (e) => events.push({ name: e.name, type: e.type }), { timeoutMs: 20000 });
    const seen = async (name, type) => {
      for (let i = 0; i < 100 && !events.some((e) => e.name === name && e.type === type); i++) await new Promise((r) => setTimeout(r, 50));
    };
    await sbx.files.write(`${args.dir}/created.txt`, 'x');
    await seen('created.txt', 'create');
    await sbx.files.write(`${args.dir}/created.txt`, 'rewritten');
    await seen('created.txt', 'write');
    // Another process appends and changes the mode (this agent serves this host's files, so that can be this one).
    appendFileSync(`${args.dir}/created.txt`, 'more\n');
    // A chmod in the same clock tick as a write looks like the write (docs/agent.md): a moment apart, as people do it.
    await new Promise((r) => setTimeout(r, 50));
    chmodSync(`${args.dir}/created.txt`, 0o600);
    await seen('created.txt', 'chmod');
    await sbx.files.remove(`${args.dir}/created.txt`);
    await seen('created.txt', 'remove');
    await handle.stop();
    return { events };
  },

  async run(sbx) {
    const r = await sbx.commands.run(args.cmd, args.opts ?? {});
    return { stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode };
  },
};

const sbx = await Sandbox.connect(args.sandboxID, { apiUrl: args.apiUrl, sandboxUrl: args.sandboxUrl, apiKey: 'sk-local-test' });
try {
  const result = await scenarios[scenario](sbx);
  process.stdout.write(JSON.stringify({ result }));
} catch (err) {
  // With what fetch gives as the reason it failed (a reset, a timeout), for the failure message.
  const cause = err?.cause && { name: err.cause.constructor?.name, code: err.cause.code, message: String(err.cause.message ?? err.cause) };
  process.stdout.write(JSON.stringify({ thrown: { ...errorOf(err), cause } }));
}
