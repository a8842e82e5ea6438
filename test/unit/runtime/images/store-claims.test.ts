import { leftoversOf, StoreClaims } from '../../../../src/runtime/images/store-claims';

describe('what a pull refused for disk removes', () => {
  const appeared = ['blob-mine', 'blob-shared', 'layer-mine', 'layer-other', 'manifest-unclaimed', 'blob-recorded'];

  test('alone, it removes everything that appeared but what an image record uses', () => {
    expect(leftoversOf(appeared, new Set(['blob-mine', 'layer-mine']), [], new Set(['blob-recorded']))).toEqual([
      'blob-mine',
      'blob-shared',
      'layer-mine',
      'layer-other',
      'manifest-unclaimed',
    ]);
  });

  test('beside other pulls, it removes only what it claimed and no other pull or record claims', () => {
    const own = new Set(['blob-mine', 'blob-shared', 'layer-mine', 'blob-recorded']);
    const others = [new Set(['blob-shared']), new Set(['layer-other'])];
    expect(leftoversOf(appeared, own, others, new Set(['blob-recorded']))).toEqual(['blob-mine', 'layer-mine']);
  });

  test('a claim counts as another pull until it is released', () => {
    const claims = new StoreClaims();
    const mine = claims.open();
    const theirs = claims.open();
    theirs.add('layer-other');
    expect(claims.othersThan(mine)).toEqual([theirs]);
    claims.release(theirs);
    expect(claims.othersThan(mine)).toEqual([]);
    expect(leftoversOf(['layer-other'], mine, claims.othersThan(mine), new Set())).toEqual(['layer-other']);
  });
});
