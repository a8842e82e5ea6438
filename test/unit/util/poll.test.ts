import { eventually, waitFor } from '../../../src/util/poll';

describe('waitFor', () => {
  it('resolves to the first value the check returns', async () => {
    let calls = 0;
    const value = await waitFor('the third call', () => (++calls === 3 ? `call ${calls}` : undefined), { intervalMs: 1 });
    expect(value).toBe('call 3');
  });

  it('keeps falsy values other than undefined', async () => {
    await expect(waitFor('zero', async () => 0)).resolves.toBe(0);
  });

  it('names what it waited for and the last attempt when it gives up', async () => {
    await expect(
      waitFor('the port', () => undefined, { timeoutMs: 20, intervalMs: 5, describe: () => 'connection refused' }),
    ).rejects.toThrow('timed out after 0.02 s waiting for the port (last: connection refused)');
  });
});

describe('eventually', () => {
  it('retries a failing check until it passes', async () => {
    let calls = 0;
    const value = await eventually(
      async () => {
        if (++calls < 3) throw new Error(`not yet (${calls})`);
        return calls;
      },
      { intervalMs: 1 },
    );
    expect(value).toBe(3);
  });

  it('rethrows the last error at the deadline', async () => {
    let calls = 0;
    const failure = await eventually(
      async () => {
        calls++;
        throw new Error(`attempt ${calls}`);
      },
      { timeoutMs: 20, intervalMs: 1 },
    ).catch((err: Error) => err);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toBe(`attempt ${calls}`);
  });
});
