import { Code as LibraryCode } from '@connectrpc/connect';
import { codeToHttpStatus, codeToString } from '@connectrpc/connect/protocol-connect';
import { Code, codeHttpStatus, codeName } from '../../../src/contract/connect-codes';

describe('Connect error codes', () => {
  const library = Object.entries(LibraryCode).filter((e): e is [string, number] => typeof e[1] === 'number');

  test('the same codes by name and number as @connectrpc/connect', () => {
    expect(library.length).toBe(16);
    expect(Object.entries(Code)).toEqual(library);
  });

  test("each code's name and HTTP status are the library's", () => {
    for (const [, number] of library) {
      const code = number as Code;
      expect([codeName(code), codeHttpStatus(code)]).toEqual([codeToString(number), codeToHttpStatus(number)]);
    }
  });
});
