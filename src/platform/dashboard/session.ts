/**
 * The dashboard's login: whoever presents an API key gets a cookie good for SESSION_SECONDS. The cookie holds its
 * expiry and an HMAC of it under a secret of this process (never the key itself), so a restart logs everyone out
 * and nothing is stored. SameSite=Strict keeps other sites from riding on it.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SESSION_COOKIE = 'sk_dashboard';
export const SESSION_SECONDS = 12 * 60 * 60;

export class DashboardSessions {
  private readonly secret = randomBytes(32);

  private mac(expires: number): string {
    return createHmac('sha256', this.secret).update(String(expires)).digest('base64url');
  }

  /** The Set-Cookie value of a new session. */
  issue(nowMs = Date.now()): string {
    const expires = Math.floor(nowMs / 1000) + SESSION_SECONDS;
    return `${SESSION_COOKIE}=${expires}.${this.mac(expires)}; HttpOnly; SameSite=Strict; Path=/dashboard; Max-Age=${SESSION_SECONDS}`;
  }

  /** Whether the Cookie header carries a session of this process that has not expired. */
  valid(cookieHeader: string | undefined, nowMs = Date.now()): boolean {
    const value = (cookieHeader ?? '')
      .split(';')
      .map((c) => c.trim())
      .find((c) => c.startsWith(`${SESSION_COOKIE}=`))
      ?.slice(SESSION_COOKIE.length + 1);
    const match = /^([0-9]{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value ?? '');
    if (!match) return false;
    const expires = Number(match[1]);
    const want = Buffer.from(this.mac(expires));
    const got = Buffer.from(match[2] as string);
    return want.length === got.length && timingSafeEqual(want, got) && expires > nowMs / 1000;
  }
}
