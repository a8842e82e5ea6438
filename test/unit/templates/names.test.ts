import { parseTemplateRef, TEMPLATE_REF } from '../../../src/platform/templates/names';

test('template references: name or name:tag; a malformed one says what is wrong', () => {
  expect(parseTemplateRef('proxy')).toEqual({ ok: true, name: 'proxy' });
  expect(parseTemplateRef('proxy:v2.1-rc_1')).toEqual({ ok: true, name: 'proxy', tag: 'v2.1-rc_1' });
  expect(parseTemplateRef('proxy:a:b')).toMatchObject({ ok: false, message: expect.stringContaining('more than one ":"') });
  expect(parseTemplateRef('proxy:')).toMatchObject({ ok: false, message: expect.stringContaining('the tag must be') });
  expect(parseTemplateRef('fromImage:v1')).toEqual({ ok: true, name: 'fromImage', tag: 'v1' });
  expect(parseTemplateRef('-proxy')).toMatchObject({ ok: false, message: expect.stringContaining('the name must be') });
  expect(parseTemplateRef('my/proxy')).toMatchObject({ ok: false, message: expect.stringContaining('the name must be') });
  expect(parseTemplateRef('proxy:has space')).toMatchObject({ ok: false });
  expect(TEMPLATE_REF.test('proxy:v2')).toBe(true);
  expect(TEMPLATE_REF.test('proxy:')).toBe(false);
});
