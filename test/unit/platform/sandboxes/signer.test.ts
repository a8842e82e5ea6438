import { fileSignature, signedFilesQuery } from '../../../../src/contract/file-signature';
import { findSigner } from '../../../../src/platform/sandboxes/signer';

const sandboxes = [
  { sandboxID: 'a', envdAccessToken: 'token-a' },
  { sandboxID: 'b', envdAccessToken: 'token-b' },
];

test('the signer of a URL is the sandbox whose token makes its signature; expiry is told apart', () => {
  const signature = fileSignature('/home/user/f', 'read', 'user', 'token-b', 2000);
  const q = { path: '/home/user/f', operation: 'read' as const, username: 'user', signature, expiration: 2000 };
  expect(findSigner(sandboxes, q, 1000)).toEqual({ sandboxID: 'b', expired: false });
  expect(findSigner(sandboxes, q, 3000)).toEqual({ sandboxID: 'b', expired: true });
  // Another path, operation, user or expiry than was signed: nobody signed that.
  expect(findSigner(sandboxes, { ...q, path: '/etc/shadow' }, 1000)).toBeUndefined();
  expect(findSigner(sandboxes, { ...q, operation: 'write' }, 1000)).toBeUndefined();
  expect(findSigner(sandboxes, { ...q, expiration: 99999 }, 1000)).toBeUndefined();
  expect(findSigner(sandboxes, { ...q, signature: 'v1_short' }, 1000)).toBeUndefined();
});

test('only GET/POST /files with a signature is a signed request', () => {
  expect(signedFilesQuery('GET', '/files?path=%2Fa&username=user&signature=v1_x&signature_expiration=12')).toEqual({
    path: '/a',
    operation: 'read',
    username: 'user',
    signature: 'v1_x',
    expiration: 12,
  });
  expect(signedFilesQuery('POST', '/files?signature=v1_x')).toEqual({ path: '', operation: 'write', username: '', signature: 'v1_x' });
  expect(signedFilesQuery('GET', '/files?path=/a')).toBeUndefined();
  expect(signedFilesQuery('GET', '/filesystem.Filesystem/Stat?signature=v1_x')).toBeUndefined();
  expect(signedFilesQuery('DELETE', '/files?signature=v1_x')).toBeUndefined();
});
