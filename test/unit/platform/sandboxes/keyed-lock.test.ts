import { KeyedLock } from '../../../../src/platform/sandboxes/keyed-lock';

describe('KeyedLock', () => {
  it('runs work of one key one at a time, other keys alongside', async () => {
    const lock = new KeyedLock();
    const order: string[] = [];
    const slow = (name: string, ms: number) => async () => {
      order.push(`${name}+`);
      await new Promise((r) => setTimeout(r, ms));
      order.push(`${name}-`);
    };
    await Promise.all([lock.run('a', slow('a1', 20)), lock.run('a', slow('a2', 1)), lock.run('b', slow('b1', 5))]);
    expect(order.indexOf('a2+')).toBeGreaterThan(order.indexOf('a1-'));
    expect(order.indexOf('b1+')).toBeLessThan(order.indexOf('a1-'));
  });

  it('goes on after a failure', async () => {
    const lock = new KeyedLock();
    await expect(lock.run('a', async () => Promise.reject(new Error('x')))).rejects.toThrow('x');
    await expect(lock.run('a', async () => 5)).resolves.toBe(5);
  });
});
