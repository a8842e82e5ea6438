import { z } from 'zod';
import { ApiError } from '../../../../src/platform/http/types';
import { validate } from '../../../../src/platform/http/validate';

describe('validate', () => {
  const schema = z.object({ timeout: z.number().int({ message: 'expected whole seconds' }), name: z.string() }).strict();

  it('returns the parsed value', () => {
    expect(validate(schema, { timeout: 5, name: 'x' }, 'body')).toEqual({ timeout: 5, name: 'x' });
  });

  it('throws a 400 naming every field, what was given and what is accepted', () => {
    let error: unknown;
    try {
      validate(schema, { timeout: 1.5, extra: 1 }, 'body');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe(400);
    const message = (error as ApiError).message;
    expect(message).toContain('body field "timeout": expected whole seconds (given 1.5)');
    expect(message).toContain('body field "name"');
    expect(message).toContain('(given (missing))');
    expect(message).toContain('"extra"');
  });
});
