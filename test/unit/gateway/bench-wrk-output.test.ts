import { parseWrkOutput } from '../../../scripts/bench/gateway-wrk';

const REPORT = `Running 2s test @ http://127.0.0.1:45999/
  1 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     4.29ms    3.61ms  63.04ms   91.83%
    Req/Sec     8.10k     2.22k   14.70k    76.67%
  Latency Distribution
     50%  850.00us
     75%    4.87ms
     90%    7.02ms
     99%    1.20s
  16210 requests in 2.00s, 2.65MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 4
Requests/sec:   8051.58
Transfer/sec:      1.33MB
`;

describe('parseWrkOutput', () => {
  it('reads rate, percentiles in any unit, totals and failures', () => {
    expect(parseWrkOutput(REPORT)).toEqual({ rps: 8051.58, p50Ms: 0.85, p99Ms: 1200, requests: 16210, failures: 7 });
  });

  it('counts no failures when wrk reports none', () => {
    const clean = REPORT.split('\n')
      .filter((l) => !/Socket errors|Non-2xx/.test(l))
      .join('\n');
    expect(parseWrkOutput(clean).failures).toBe(0);
  });

  it('refuses output without a latency distribution', () => {
    expect(() => parseWrkOutput('Requests/sec: 10\n')).toThrow('unexpected output');
  });
});
