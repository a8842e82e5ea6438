import { sandboxUser } from '../../../src/local/sandbox-user';

const PASSWD =
  'root:x:0:0:root:/root:/bin/bash\nadmin:x:1000:1000::/home/admin:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n';
const GROUP = 'root:x:0:\nadmin:x:1000:\ndocker:x:1001:\nnogroup:x:65534:\n';

describe('sandboxUser', () => {
  it('uses the machine user when it exists, adding nothing', () => {
    expect(sandboxUser('admin', PASSWD, GROUP, '/lab/home/admin')).toEqual({
      name: 'admin',
      uid: 1000,
      gid: 1000,
      home: '/home/admin',
      files: [],
    });
  });

  it('adds a missing user with the first id free in both files, keeping every existing line', () => {
    const user = sandboxUser('user', PASSWD, GROUP, '/lab/home/user');
    expect(user).toMatchObject({ uid: 1002, gid: 1002, home: '/lab/home/user' });
    const passwd = user.files.find((f) => f.path === '/etc/passwd')!.content;
    const group = user.files.find((f) => f.path === '/etc/group')!.content;
    expect(passwd).toBe(`${PASSWD}user:x:1002:1002:sandbox user:/lab/home/user:/bin/sh\n`);
    expect(group).toBe(`${GROUP}user:x:1002:\n`);
  });

  it('copes with files without a final newline', () => {
    const user = sandboxUser('user', 'root:x:0:0:root:/root:/bin/bash', 'root:x:0:', '/h');
    expect(user.files[0]!.content).toBe('root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000:sandbox user:/h:/bin/sh\n');
  });
});
