import { type Accounts, parseGroup, parsePasswd } from '../../../src/agent/accounts';
import { applyInit } from '../../../src/agent/init';
import { AgentState } from '../../../src/agent/state';
import { codeToString } from '@connectrpc/connect/protocol-connect';
import { AgentError, errorBody, fsError } from '../../../src/agent/errors';
import { baseName, lexicalTarget, resolveRequestPath } from '../../../src/agent/paths';
import { binaryText, fsPath, joinBinary } from '../../../src/agent/filesystem/binary-path';
import { type AgentOptionsInput, parseAgentOptions } from '../../../src/agent/options';
import { Code, ConnectError } from '@connectrpc/connect';

describe('errors', () => {
  test("an AgentError is a ConnectError with its code's HTTP status; its body names the code", () => {
    const status = (code: Code) => new AgentError(code, 'x').httpStatus;
    expect([Code.InvalidArgument, Code.Unauthenticated, Code.PermissionDenied, Code.NotFound].map(status)).toEqual([400, 401, 403, 404]);
    expect([Code.ResourceExhausted, Code.DeadlineExceeded, Code.Unimplemented, Code.Internal].map(status)).toEqual([429, 504, 501, 500]);
    expect(new AgentError(Code.Unimplemented, 'x', 415).httpStatus).toBe(415);
    expect(new AgentError(Code.NotFound, 'x')).toBeInstanceOf(ConnectError);
    expect(errorBody(new AgentError(Code.NotFound, 'gone'))).toBe('{"code":"not_found","message":"gone"}');
  });

  test('errno -> code', () => {
    const e = (code: string) => codeToString(fsError(Object.assign(new Error(code), { code }), 'Stat /x').code);
    expect([e('ENOENT'), e('ENOTDIR'), e('EACCES'), e('EPERM'), e('ELOOP'), e('EIO')]).toEqual([
      'not_found',
      'not_found',
      'permission_denied',
      'permission_denied',
      'invalid_argument',
      'internal',
    ]);
  });
});

describe('paths', () => {
  const home = '/home/u';
  test('relative, ~ and absolute', () => {
    const r = (p: string) => resolveRequestPath(p, home).toString();
    expect(r('')).toBe('/home/u');
    expect(r('a/b')).toBe('/home/u/a/b');
    expect(r('~')).toBe('/home/u');
    expect(r('~/x/../y/')).toBe('/home/u/y');
    expect(r('~other')).toBe('/home/u/~other');
    expect(r('/etc//passwd')).toBe('/etc/passwd');
    expect(r('/../..')).toBe('/');
  });

  test('escaped bytes resolve to raw bytes; NUL is invalid_argument', () => {
    expect(resolveRequestPath('/t/\uefff', home)).toEqual(Buffer.from([0x2f, 0x74, 0x2f, 0xff]));
    expect(() => resolveRequestPath('/a\0', home)).toThrow(AgentError);
  });

  test('join, base name, lexical symlink target', () => {
    expect(joinBinary('/', 'x')).toBe('/x');
    expect(joinBinary('/a', 'x')).toBe('/a/x');
  });

  test('binary-string paths: ASCII as is; other bytes reach the filesystem as bytes and clients as their text', () => {
    expect(fsPath('/a/b')).toBe('/a/b');
    const utf8 = Buffer.from('/t/é', 'utf8').toString('latin1');
    expect(fsPath(utf8)).toEqual(Buffer.from('/t/é', 'utf8'));
    expect(binaryText(utf8)).toBe('/t/é');
    const raw = Buffer.from([0x2f, 0x74, 0x2f, 0xff]).toString('latin1');
    expect(fsPath(raw)).toEqual(Buffer.from([0x2f, 0x74, 0x2f, 0xff]));
    expect(binaryText(raw)).toBe('/t/\uefff');
    expect(binaryText('/a"b')).toBe('/a"b');
    expect(baseName(Buffer.from('/')).toString()).toBe('/');
    expect(baseName(Buffer.from('/a/b')).toString()).toBe('b');
    expect(lexicalTarget(Buffer.from('/a/b/link'), Buffer.from('../c')).toString()).toBe('/a/c');
    expect(lexicalTarget(Buffer.from('/a/link'), Buffer.from('/abs')).toString()).toBe('/abs');
  });
});

describe('accounts', () => {
  test('passwd and group files; first entry wins; comments and NIS lines skipped', () => {
    const pw = parsePasswd(
      'root:x:0:0:root:/root:/bin/bash\n# c\n+nis::::::\nuser:x:1000:1000::/home/user:/bin/sh\ndup:x:1000:1000::/d:/bin/sh\nbad:x:z:1::/:/bin/sh\n',
    );
    expect(pw.byName.get('user')).toEqual({ name: 'user', uid: 1000, gid: 1000, home: '/home/user' });
    expect(pw.nameById.get(1000)).toBe('user');
    expect(pw.byName.has('bad')).toBe(false);
    const gr = parseGroup('root:x:0:\nstaff:x:50:a,b\n');
    expect(gr.get(50)).toBe('staff');
  });
});

describe('options', () => {
  test('defaults and validation', () => {
    const o = parseAgentOptions({ defaultUser: 'root' });
    expect(o).toMatchObject({ port: 49983, host: '0.0.0.0', brand: 'Svc', maxEntries: 500000, maxBodyBytes: 65536, defaultUser: 'root' });
    expect(() => parseAgentOptions({ brand: 'lower' })).toThrow(/brand/);
    expect(() => parseAgentOptions({ port: 70000 })).toThrow(/port/);
    expect(() => parseAgentOptions({ accessToken: '' })).toThrow(/accessToken/);
  });

  test('every problem at once, unknown keys and wrong types included; the error names each field', () => {
    const bad = { port: 1.5, maxBodyBytes: 10, host: '', accessToken: 'a b', brand: 'svc', colour: 'red' } as unknown as AgentOptionsInput;
    expect(() => parseAgentOptions(bad)).toThrow(
      'invalid agent options: colour: not an agent option; port: expected an integer; maxBodyBytes: expected an integer >= 1024; ' +
        'host: expected a non-empty string; accessToken: expected 1 to 1024 visible ASCII characters (no spaces, nothing outside ASCII); ' +
        'brand: expected a capitalised word of letters and digits, such as Svc',
    );
    // undefined means "the default", as a CLI that passes every flag it may have got does.
    expect(parseAgentOptions({ port: undefined, host: undefined, defaultUser: 'root' })).toMatchObject({ port: 49983, host: '0.0.0.0' });
  });
});

describe('/init body', () => {
  const state = () => new AgentState(parseAgentOptions({ defaultUser: 'root' }));
  const accounts = { refresh: () => undefined, user: (name: string) => (name === 'root' ? {} : undefined) } as unknown as Accounts;

  test('applies the fields it knows, ignores the others; null leaves a field as it was', () => {
    const s = state();
    applyInit(s, accounts, { accessToken: 'tok', envVars: { A: '1' }, defaultUser: 'root', defaultWorkdir: '/w', timestamp: 'x' });
    applyInit(s, accounts, { envVars: null, defaultWorkdir: null });
    expect({ envVars: s.envVars, user: s.defaultUser, workdir: s.defaultWorkdir, token: s.accessToken }).toEqual({
      envVars: { A: '1' },
      user: 'root',
      workdir: '/w',
      token: 'tok',
    });
  });

  test('a bad body names every bad field and changes nothing', () => {
    const s = state();
    const refuse = (body: unknown) => {
      try {
        applyInit(s, accounts, body);
      } catch (err) {
        return (err as AgentError).rawMessage;
      }
      throw new Error('accepted');
    };
    expect(refuse([1])).toBe('/init body must be a JSON object');
    expect(refuse({ accessToken: 7, envVars: { A: 1, B: 'ok' }, defaultUser: '', defaultWorkdir: 'rel' })).toBe(
      'invalid /init body: field "accessToken": expected a string; field "defaultUser": expected a user name; ' +
        'field "defaultWorkdir": expected an absolute path; field "envVars.A": expected string values ' +
        '(fields: accessToken, envVars, defaultUser, defaultWorkdir)',
    );
    expect(refuse({ envVars: ['A=1'], accessToken: 'has space' })).toMatch(
      /"accessToken": expected 1 to 1024 .*"envVars": expected an object of strings/,
    );
    expect(refuse({ defaultUser: 'nobody-here' })).toMatch(/the user "nobody-here" does not exist/);
    expect({ envVars: s.envVars, token: s.accessToken, workdir: s.defaultWorkdir }).toEqual({
      envVars: {},
      token: undefined,
      workdir: undefined,
    });
  });
});
