import { DashboardSessions, SESSION_COOKIE, SESSION_SECONDS } from '../../../../src/platform/dashboard/session';

test('a session cookie is valid in its own process until it expires; a changed or foreign one never', () => {
  const sessions = new DashboardSessions();
  const now = Date.parse('2026-01-01T00:00:00Z');
  const setCookie = sessions.issue(now);
  expect(setCookie).toMatch(/HttpOnly; SameSite=Strict; Path=\/dashboard/);
  const cookie = setCookie.split(';')[0] as string;
  expect(sessions.valid(`other=1; ${cookie}`, now)).toBe(true);
  expect(sessions.valid(cookie, now + SESSION_SECONDS * 1000 + 1000)).toBe(false);
  const [name, value] = cookie.split('=') as [string, string];
  const [expires, mac] = value.split('.') as [string, string];
  expect(sessions.valid(`${name}=${Number(expires) + 1000}.${mac}`, now)).toBe(false);
  expect(new DashboardSessions().valid(cookie, now)).toBe(false);
  expect(sessions.valid(undefined, now)).toBe(false);
  expect(sessions.valid(`${SESSION_COOKIE}=garbage`, now)).toBe(false);
});
