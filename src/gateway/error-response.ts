import { STATUS_CODES } from 'node:http';
import { ACCESS_TOKEN_RULE, type TokenVerdict } from '../contract/access-token';

/** Body of every error the gateway itself answers: JSON, with the status repeated as `code`. */
export type GatewayErrorBody =
  | { sandboxID: string; message: string; code: number }
  | { sandboxID: string; message: string; port: number; code: number }
  | { message: string; code: number };

export function sandboxNotFound(sandboxID: string): GatewayErrorBody {
  // Exactly these three fields: E2B-style clients match on them (docs/gateway.md).
  return { sandboxID, message: `The sandbox ${sandboxID} was not found`, code: 502 };
}

export function sandboxPaused(sandboxID: string, why: string): GatewayErrorBody {
  return { sandboxID, message: `The sandbox ${sandboxID} is paused; ${why}`, code: 502 };
}

export function upstreamUnreachable(sandboxID: string, port: number, reason: string): GatewayErrorBody {
  return { sandboxID, message: `The sandbox ${sandboxID} is not accepting connections on port ${port} (${reason})`, port, code: 502 };
}

export function upstreamTimedOut(sandboxID: string, port: number, afterMs: number): GatewayErrorBody {
  return { sandboxID, message: `The sandbox ${sandboxID} did not answer on port ${port} within ${afterMs} ms`, port, code: 504 };
}

export function accessDenied(sandboxID: string, verdict: Exclude<TokenVerdict, 'ok'>): GatewayErrorBody {
  const message =
    verdict === 'missing'
      ? `missing header X-Access-Token: requests to sandbox ${sandboxID} need its access token (envdAccessToken)`
      : verdict === 'malformed'
        ? `X-Access-Token is not a valid access token: tokens are ${ACCESS_TOKEN_RULE}, sent once`
        : `X-Access-Token does not match the access token of sandbox ${sandboxID}`;
  return { sandboxID, message, code: 401 };
}

export function trafficDenied(sandboxID: string, port: number, verdict: Exclude<TokenVerdict, 'ok'>): GatewayErrorBody {
  const problem =
    verdict === 'missing'
      ? 'missing header e2b-traffic-access-token: the ports of this sandbox are not public (allowPublicTraffic: false); send its trafficAccessToken'
      : verdict === 'malformed'
        ? `e2b-traffic-access-token is not a valid token: tokens are ${ACCESS_TOKEN_RULE}, sent once`
        : `e2b-traffic-access-token does not match the traffic access token of sandbox ${sandboxID}`;
  return { sandboxID, message: problem, port, code: 401 };
}

/** A raw HTTP error for a connection the HTTP parser gave up on: the connection closes after it. */
export function rawErrorResponse(code: number, reason: string, message: string): string {
  const text = JSON.stringify({ message, code });
  return `HTTP/1.1 ${code} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`;
}

/** An error body as a whole raw HTTP response, for a socket that left the HTTP server (an upgrade). */
export function rawErrorFor(body: GatewayErrorBody): string {
  const text = JSON.stringify(body);
  return `HTTP/1.1 ${body.code} ${STATUS_CODES[body.code] ?? 'Error'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`;
}
