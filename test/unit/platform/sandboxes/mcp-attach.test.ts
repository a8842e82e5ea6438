import { carriedImages, withAttachedLayers } from '../../../../src/platform/sandboxes/mcp-attach';

describe('carriedImages', () => {
  const pulled = { ref: 'mcp/time', key: 'mcp_time', layers: ['/images/l1', '/images/l2'] };
  const failed = { ref: 'mcp/fetch', key: 'mcp_fetch', error: 'could not be fetched: 503' };

  test("a snapshot's or fork's images come as they were (pulled, failed, pending), copies the new record may change", () => {
    const origin = { attachedImages: [pulled, failed, { ref: 'mcp/git', key: 'mcp_git' }] };
    const carried = carriedImages(origin, []);
    expect(carried).toEqual(origin.attachedImages);
    carried[2]!.layers = ['/images/l3'];
    expect(origin.attachedImages[2]).toEqual({ ref: 'mcp/git', key: 'mcp_git' });
  });

  test("the create's own images follow, pending; one the origin has already is not asked for twice", () => {
    expect(carriedImages({ attachedImages: [pulled] }, ['mcp/time', 'mcp/git'])).toEqual([pulled, { ref: 'mcp/git', key: 'mcp_git' }]);
    expect(carriedImages({}, ['mcp/time'])).toEqual([{ ref: 'mcp/time', key: 'mcp_time' }]);
  });
});

describe('withAttachedLayers', () => {
  test("a snapshot's template with attached images names their layers among its own (the collector keeps them)", () => {
    const template = { layers: ['/snap', '/tpl'], attachedImages: [{ ref: 'mcp/time', key: 'mcp_time', layers: ['/images/l1'] }] };
    expect(withAttachedLayers(template).layers).toEqual(['/snap', '/tpl', '/images/l1']);
    expect(withAttachedLayers({ layers: ['/tpl'] }).layers).toEqual(['/tpl']);
  });
});
