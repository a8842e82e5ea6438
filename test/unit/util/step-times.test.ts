import { StepTotals, timed } from '../../../src/util/step-times';

test('timed tells each step its duration, also when the step fails, and runs the step alone without a listener', async () => {
  const heard: Array<[string, number]> = [];
  const times = (step: string, ms: number) => heard.push([step, ms]);
  expect(await timed(times, 'wait', () => new Promise((r) => setTimeout(() => r(7), 20)))).toBe(7);
  await expect(timed(times, 'fail', () => Promise.reject(new Error('no')))).rejects.toThrow('no');
  expect(await timed(undefined, 'alone', () => 3)).toBe(3);
  expect(heard.map(([s]) => s)).toEqual(['wait', 'fail']);
  expect(heard[0]![1]).toBeGreaterThanOrEqual(15);
});

test('StepTotals: a run sums repeated steps; medians per step over the runs it appeared in; a dropped run counts nothing', () => {
  const t = new StepTotals();
  for (const [a, b] of [
    [1, 10],
    [3, 30],
    [2, 20],
  ]) {
    t.add('a', a!);
    t.add('b', b! / 2);
    t.add('b', b! / 2);
    t.endRun();
  }
  t.add('a', 100);
  t.add('c', 5);
  t.dropRun();
  t.add('c', 4);
  t.endRun();
  expect([...t.medians()]).toEqual([
    ['a', 2],
    ['b', 20],
    ['c', 4],
  ]);
});
