import { MAX_TIMER_MS } from '../../../../src/contract/connect-timeout';
import { Deadlines } from '../../../../src/platform/sandboxes/deadlines';

describe('Deadlines', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('fires at the end time, at once for a past one, and not after clear', () => {
    let now = 1_000;
    const fired: string[] = [];
    const d = new Deadlines(
      (id) => fired.push(id),
      () => now,
    );
    d.arm('a', 1_500);
    d.arm('past', 10);
    d.arm('cleared', 1_200);
    d.clear('cleared');
    jest.advanceTimersByTime(0);
    expect(fired).toEqual(['past']);
    now = 1_500;
    jest.advanceTimersByTime(500);
    expect(fired).toEqual(['past', 'a']);
  });

  it('re-arming moves the time', () => {
    const fired: string[] = [];
    const d = new Deadlines(
      (id) => fired.push(id),
      () => 0,
    );
    d.arm('a', 100);
    d.arm('a', 1_000);
    jest.advanceTimersByTime(500);
    expect(fired).toEqual([]);
    jest.advanceTimersByTime(500);
    expect(fired).toEqual(['a']);
  });

  it('reaches times beyond what one Node timer holds in steps, never early', () => {
    let now = 0;
    const fired: string[] = [];
    const d = new Deadlines(
      (id) => fired.push(id),
      () => now,
    );
    d.arm('far', MAX_TIMER_MS + 10_000);
    now = MAX_TIMER_MS;
    jest.advanceTimersByTime(MAX_TIMER_MS);
    expect(fired).toEqual([]);
    expect(d.armed('far')).toBe(true);
    now = MAX_TIMER_MS + 10_000;
    jest.advanceTimersByTime(10_000);
    expect(fired).toEqual(['far']);
  });
});
