import { LOWER_ALNUM, randomText } from '../../../src/util/random-text';
import { worstExcess } from '../../helpers/char-frequency';

describe('randomText', () => {
  it('gives the asked length, only characters of the alphabet', () => {
    expect(randomText('xyz', 57)).toMatch(/^[xyz]{57}$/);
  });

  it('draws every character of the alphabet', () => {
    expect(new Set(randomText('abc', 300)).size).toBe(3);
  });

  it('draws them uniformly: 36 characters from bytes, where `byte % 36` would favour a-d by 14%', () => {
    // 10,000 expected per character; a 5% excess is five standard deviations.
    expect(worstExcess(randomText(LOWER_ALNUM, 360_000), LOWER_ALNUM)).toBeLessThan(0.05);
  });
});
