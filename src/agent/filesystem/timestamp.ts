/**
 * Timestamp text as protobuf's JSON mapping writes google.protobuf.Timestamp: RFC 3339 in UTC with `Z`, and a
 * fraction of 0, 3, 6 or 9 digits (trailing zeros dropped in 3-digit steps). Times outside the type's range
 * (0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999999999Z) are clamped to it, so a client never rejects a
 * whole listing over one file with an absurd mtime.
 */
const MIN_SECONDS = -62135596800;
const MAX_SECONDS = 253402300799;
const NS_PER_S = 1_000_000_000n;

export function formatTimestampNs(totalNs: bigint): string {
  const { seconds, nanos } = secondsAndNanos(totalNs);
  return formatTimestamp(seconds, nanos);
}

/** Nanoseconds since the epoch as whole seconds (floored, so negative before 1970) and nanoseconds 0..999,999,999. */
export function secondsAndNanos(totalNs: bigint): { seconds: number; nanos: number } {
  // Two BigInt operations; the rest in doubles (the seconds of any range this clamps to are exact in a double).
  const wholeSeconds = totalNs / NS_PER_S;
  let nanos = Number(totalNs - wholeSeconds * NS_PER_S);
  let seconds = Number(wholeSeconds);
  if (nanos < 0) {
    nanos += 1_000_000_000;
    seconds -= 1;
  }
  return { seconds, nanos };
}

/** The text of a time given as whole seconds (floored) and nanoseconds 0..999,999,999, as a timespec holds it. */
export function formatTimestamp(seconds: number, nanos: number): string {
  if (seconds < MIN_SECONDS) {
    seconds = MIN_SECONDS;
    nanos = 0;
  } else if (seconds > MAX_SECONDS) {
    seconds = MAX_SECONDS;
    nanos = 999_999_999;
  }
  return `${secondsText(seconds)}${fraction(nanos)}Z`;
}

// The last second formatted: the entries of a listing were mostly written in the same few seconds.
let lastSeconds = 0;
let lastText = '1970-01-01T00:00:00';

/** YYYY-MM-DDTHH:MM:SS of a second within the range. */
function secondsText(seconds: number): string {
  if (seconds !== lastSeconds) {
    lastText = new Date(seconds * 1000).toISOString().slice(0, 19);
    lastSeconds = seconds;
  }
  return lastText;
}

function fraction(nanos: number): string {
  if (nanos === 0) return '';
  if (nanos % 1_000_000 === 0) return `.${String(nanos / 1_000_000).padStart(3, '0')}`;
  if (nanos % 1_000 === 0) return `.${String(nanos / 1_000).padStart(6, '0')}`;
  return `.${String(nanos).padStart(9, '0')}`;
}
