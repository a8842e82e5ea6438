import { newBuildID, newTemplateID } from '../../../../src/platform/templates/ids';
import { LOWER_ALNUM } from '../../../../src/util/random-text';
import { worstExcess } from '../../../helpers/char-frequency';

describe('template identifiers', () => {
  it('template IDs are made like sandbox IDs: 20 lower-case letters and digits', () => {
    expect(newTemplateID()).toMatch(/^[a-z0-9]{20}$/);
  });

  it('template IDs draw their characters uniformly (no modulo bias)', () => {
    const text = Array.from({ length: 18_000 }, newTemplateID).join('');
    expect(worstExcess(text, LOWER_ALNUM)).toBeLessThan(0.05);
  });

  it('build IDs are UUIDs', () => {
    expect(newBuildID()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });
});
