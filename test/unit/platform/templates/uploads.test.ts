/**
 * COPY uploads: the tar reader, the upload rules (what an upload may hold), the SDK's files hash recomputed from an
 * archive (against the unmodified SDK's own hashes), and unpacking that creates and never follows.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extractUpload, readUpload, saveUpload, uploadFilesHash } from '../../../../src/platform/templates/files';
import { numberField, parseHeader, parsePax, TarReader, type TarEntry } from '../../../../src/platform/templates/tar-reader';
import { normalizeMemberName, UploadRefused, UploadRules } from '../../../../src/platform/templates/upload-rules';
import { Readable } from 'node:stream';
import { runScript } from '../../../helpers/node-script';
import { header, makeTar, type RawEntry } from '../../../helpers/tar-writer';

jest.setTimeout(120_000);

let work: string;
beforeEach(() => {
  work = fs.mkdtempSync(join(tmpdir(), 'sk-uploads-'));
});
afterEach(() => fs.rmSync(work, { recursive: true, force: true }));

function entriesOf(tar: Buffer, chunk = 7): Array<{ entry: TarEntry; data: string }> {
  const reader = new TarReader();
  const out: Array<{ entry: TarEntry; data: string }> = [];
  const events = [];
  for (let i = 0; i < tar.length; i += chunk) events.push(...reader.write(tar.subarray(i, i + chunk)));
  events.push(...reader.end());
  for (const ev of events) {
    if (ev.type === 'entry') out.push({ entry: ev.entry, data: '' });
    else if (ev.type === 'data') out.at(-1)!.data += ev.chunk.toString();
  }
  return out;
}

function store(name: string, bytes: Buffer): string {
  const p = join(work, name);
  fs.writeFileSync(p, bytes);
  return p;
}

async function refusal(entries: RawEntry[]): Promise<string> {
  const err = await readUpload(store('x.tar', makeTar(entries, true))).catch((e: Error) => e);
  expect(err).toBeInstanceOf(UploadRefused);
  return (err as Error).message;
}

describe('the tar reader', () => {
  test('reads what GNU tar writes, in small chunks: long names, links, modes, data', () => {
    const ctx = join(work, 'ctx');
    const long = `${'d'.repeat(120)}/${'f'.repeat(150)}.txt`;
    fs.mkdirSync(join(ctx, 'd'.repeat(120)), { recursive: true });
    fs.writeFileSync(join(ctx, long), 'long name\n');
    fs.writeFileSync(join(ctx, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
    fs.symlinkSync('run.sh', join(ctx, 'link'));
    for (const format of ['gnu', 'pax', 'ustar']) {
      const names = format === 'ustar' ? ['run.sh', 'link'] : ['run.sh', 'link', 'd'.repeat(120), long];
      const tar = execFileSync('tar', ['-c', `--format=${format}`, '--no-recursion', '-C', ctx, ...names]);
      const got = entriesOf(tar).map(({ entry, data }) => [entry.kind, entry.name, entry.linkname, entry.mode.toString(8), data]);
      expect(got).toEqual(
        [
          ['file', 'run.sh', '', '755', '#!/bin/sh\n'],
          ['symlink', 'link', 'run.sh', '777', ''],
          ['directory', `${'d'.repeat(120)}/`, '', '755', ''],
          ['file', long, '', '644', 'long name\n'],
        ].slice(0, names.length),
      );
    }
  });

  test('numbers in octal and base-256; pax records; a bad checksum and a cut archive are errors', () => {
    const b = Buffer.alloc(12);
    b.write('0000644\0', 'latin1');
    expect(numberField(b, 0, 8)).toBe(0o644);
    const big = Buffer.alloc(12);
    big[0] = 0x80;
    big.writeUIntBE(2 ** 40, 6, 6);
    expect(numberField(big, 0, 12)).toBe(2 ** 40);
    expect([...parsePax(Buffer.from('16 path=a/b/c.x\n13 size=1234\n'))]).toEqual([
      ['path', 'a/b/c.x'],
      ['size', '1234'],
    ]);
    const h = header({ name: 'x' }, 0);
    h[0] = 'y'.charCodeAt(0);
    expect(() => parseHeader(h)).toThrow('checksum does not match');
    expect(parseHeader(Buffer.alloc(512))).toBeUndefined();
    const cut = makeTar([{ name: 'a', data: 'x'.repeat(1000) }]).subarray(0, 900);
    const reader = new TarReader();
    reader.write(cut);
    expect(() => reader.end()).toThrow('ends in the middle of an entry');
  });
});

describe('the upload rules', () => {
  test('member names: relative, inside; . and empty parts dropped', () => {
    expect(normalizeMemberName('./a//b/./c/')).toEqual({ ok: true, path: 'a/b/c' });
    expect(normalizeMemberName('/etc/passwd')).toEqual({ ok: false, why: 'is an absolute path; uploads hold relative paths only' });
    expect(normalizeMemberName('a/../../etc/x')).toEqual({ ok: false, why: 'climbs out of the upload with ..' });
    expect(normalizeMemberName('a/..')).toMatchObject({ ok: false });
  });

  test.each<[string, RawEntry[], string]>([
    ['a name climbing out', [{ name: '../../etc/x', data: 'x' }], 'archive entry "../../etc/x" climbs out of the upload with ..'],
    ['an absolute name', [{ name: '/etc/x', data: 'x' }], 'archive entry "/etc/x" is an absolute path'],
    [
      'a file under a file',
      [
        { name: 'f', data: 'x' },
        { name: 'f/g', data: 'y' },
      ],
      'archive entry "f/g" is under "f", which is a file',
    ],
    [
      'a hard link out of the tree',
      [{ name: 'h', type: '1', linkname: '/etc/shadow' }],
      'archive entry "h" is a hard link to "/etc/shadow", outside the upload',
    ],
    [
      'a hard link to a symlink',
      [
        { name: 's', type: '2', linkname: '/etc/shadow' },
        { name: 'h', type: '1', linkname: 's' },
      ],
      'archive entry "h" is a hard link to "s", which is not a file earlier in the upload',
    ],
    ['a character device', [{ name: 'sda', type: '3' }], 'archive entry "sda" is a character device; uploads hold files'],
    ['a FIFO', [{ name: 'p', type: '6' }], 'archive entry "p" is a fifo'],
    [
      'a path twice',
      [
        { name: 'a', data: '1' },
        { name: 'a', data: '2' },
      ],
      'archive entry "a" appears twice in the upload (a file before)',
    ],
    [
      'a file replacing an implied directory',
      [
        { name: 'd/f', data: '1' },
        { name: 'd', data: '2' },
      ],
      'archive entry "d" appears twice in the upload (a directory before)',
    ],
  ])('refuses %s', async (_what, entries, message) => {
    expect(await refusal(entries)).toContain(message);
  });

  test('accepts files, directories, symlinks pointing anywhere and hard links inside', () => {
    const rules = new UploadRules();
    const checked = [
      { name: 'd/', type: '5' },
      { name: 'd/f', data: 'x' },
      { name: 'd/up', type: '2', linkname: '../../..' },
      { name: 'root', type: '2', linkname: '/' },
      { name: 'h', type: '1', linkname: './d/f' },
    ].map((e) => rules.check(entriesOf(makeTar([e]))[0]!.entry));
    expect(checked.map((c) => [c.kind, c.path, c.target])).toEqual([
      ['directory', 'd', ''],
      ['file', 'd/f', ''],
      ['symlink', 'd/up', '../../..'],
      ['symlink', 'root', '/'],
      ['hardlink', 'h', 'd/f'],
    ]);
  });

  test('a refused upload is not kept; a good one replaces the earlier one', async () => {
    const dir = join(work, 'files');
    const good = makeTar([{ name: 'a.txt', data: 'hello' }], true);
    const saved = await saveUpload(dir, 'h1', Readable.from([good]));
    expect(fs.readdirSync(dir)).toEqual(['h1.tar']);
    const bad = makeTar([{ name: '../x', data: 'x' }], true);
    await expect(saveUpload(dir, 'h1', Readable.from([bad]))).rejects.toThrow('climbs out of the upload');
    await expect(saveUpload(dir, 'h2', Readable.from([Buffer.from('not a tar at all')]))).rejects.toThrow(UploadRefused);
    expect(fs.readdirSync(dir)).toEqual(['h1.tar']);
    expect(fs.readFileSync(saved.path)).toEqual(good);
  });
});

describe('unpacking', () => {
  test('creates every entry, follows nothing, keeps links as links, modes and data', async () => {
    const tar = makeTar(
      [
        { name: 'd/', type: '5', mode: 0o750 },
        { name: 'd/f', data: 'data', mode: 0o640 },
        { name: 'd/root', type: '2', linkname: '/' },
        { name: 'd/rel', type: '2', linkname: 'f' },
        { name: 'h', type: '1', linkname: 'd/f' },
        // What the SDK lists under a symlinked directory: never written through the link.
        { name: 'd/root/etc/', type: '5' },
        { name: 'd/root/etc/x', data: 'through the link' },
      ],
      true,
    );
    const archive = store('u.tar', tar);
    const { sha256 } = await readUpload(archive);
    const dir = await extractUpload(archive, join(work, 'scratch'), sha256);
    expect(fs.readFileSync(join(dir, 'd/f'), 'utf8')).toBe('data');
    expect(fs.statSync(join(dir, 'd/f')).mode & 0o7777).toBe(0o640);
    expect(fs.statSync(join(dir, 'd')).mode & 0o7777).toBe(0o750);
    expect(fs.readlinkSync(join(dir, 'd/root'))).toBe('/');
    expect(fs.readlinkSync(join(dir, 'd/rel'))).toBe('f');
    expect(fs.statSync(join(dir, 'h')).ino).toBe(fs.statSync(join(dir, 'd/f')).ino);
    expect(execFileSync('find', ['.'], { cwd: dir }).toString().trim().split('\n').sort()).toEqual([
      '.',
      './d',
      './d/f',
      './d/rel',
      './d/root',
      './h',
    ]);
  });

  test('bytes that changed since they were checked are not unpacked, and nothing is left', async () => {
    const archive = store('u.tar', makeTar([{ name: 'a', data: 'a' }]));
    const scratch = join(work, 'scratch');
    await expect(extractUpload(archive, scratch, '0'.repeat(64))).rejects.toThrow('the stored upload changed since it was checked');
    expect(fs.readdirSync(scratch)).toEqual([]);
  });
});

describe("the SDK's files hash, recomputed from the archive", () => {
  test("matches the unmodified SDK's hash for files, globs and symlinks; an archive with a directory cannot be checked", async () => {
    const ctx = join(work, 'ctx');
    fs.mkdirSync(join(ctx, 'conf'), { recursive: true });
    fs.writeFileSync(join(ctx, 'a.txt'), 'alpha\n');
    fs.writeFileSync(join(ctx, 'b.txt'), 'beta beta\n', { mode: 0o600 });
    fs.writeFileSync(join(ctx, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    fs.symlinkSync('a.txt', join(ctx, 'link.txt'));
    fs.writeFileSync(join(ctx, 'conf', 'x.conf'), 'x\n');
    const copies = [
      { src: 'a.txt', dest: '/app/a.txt', files: ['a.txt'] },
      { src: '*.txt', dest: '/app/', files: ['a.txt', 'b.txt', 'link.txt'] },
      { src: 'run.sh', dest: 'bin/run.sh', files: ['run.sh'] },
      { src: 'conf', dest: '/etc/conf', files: ['conf', 'conf/x.conf'] },
    ];
    const messages: Array<Record<string, unknown>> = [];
    const r = await runScript(join(__dirname, '..', '..', '..', 'helpers', 'sdk-files-hashes.ts'), { context: ctx, copies }, (m) =>
      messages.push(m),
    );
    expect(r.code).toBe(0);
    const sdk = messages[0]!.hashes as string[];
    expect(sdk).toHaveLength(copies.length);
    for (const [i, c] of copies.entries()) {
      const archive = join(work, `c${i}.tar.gz`);
      execFileSync('tar', ['-czf', archive, '--no-recursion', '-C', ctx, ...c.files]);
      const got = await uploadFilesHash(archive, c.src, c.dest);
      if (c.src === 'conf')
        expect(got).toMatchObject({ verifiable: false, why: 'it holds directories, whose sizes the archive does not carry' });
      else expect(got).toMatchObject({ verifiable: true, hash: sdk[i] });
      // The same files under another destination hash differently: a hash names one COPY.
      if (c.src === 'conf') continue;
      const other = await uploadFilesHash(archive, c.src, '/elsewhere');
      expect(other.verifiable && other.hash).not.toBe(sdk[i]);
    }
  });
});
