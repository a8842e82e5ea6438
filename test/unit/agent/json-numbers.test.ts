import { nonIntegralNumber, parseJsonBody } from '../../../src/agent/connect-protocol';
import { AgentError } from '../../../src/agent/errors';

test('number literals whose exact value is not an integer are found, even when JSON.parse would round them', () => {
  expect(nonIntegralNumber('{"depth":1e-400}')).toBe('1e-400');
  expect(nonIntegralNumber('{"depth":1.5}')).toBe('1.5');
  expect(nonIntegralNumber('{"depth":0.0000001}')).toBe('0.0000001');
  expect(nonIntegralNumber('{"depth":1.0,"a":2e3,"b":120e-1,"c":0,"d":-3}')).toBeUndefined();
  expect(nonIntegralNumber('{"path":"/a/1.5e-3","depth":2}')).toBeUndefined();
  expect(nonIntegralNumber('{"path":"x\\"1.5","depth":2}')).toBeUndefined();
});

test('parseJsonBody with integersOnly refuses them as invalid_argument', () => {
  expect(() => parseJsonBody(Buffer.from('{"path":"/","depth":1e-400}'), true)).toThrow(AgentError);
  expect(() => parseJsonBody(Buffer.from('{"path":"/","depth":1e-400}'), true)).toThrow(/1e-400 is not an integer/);
  expect(parseJsonBody(Buffer.from('{"path":"/","depth":1e0}'), true)).toEqual({ path: '/', depth: 1 });
});
