import { integer, ipv4, oneOf } from '../../../src/config';
import { listFlag, parseFlags, requiredFlag, switchFlag, UsageError, valueFlag } from '../../../src/cli/args';

const spec = {
  mode: valueFlag(oneOf(['local', 'transparent']).optional()),
  sandboxes: valueFlag(integer(1, 200, 'an integer from 1 to 200').default(2)),
  'server-ip': requiredFlag(ipv4(), 'the proxy address'),
  network: listFlag(ipv4()),
  json: switchFlag(),
};

function issuesOf(argv: string[]): string[] {
  try {
    parseFlags('demo', argv, spec);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as UsageError).issues.map((i) => `${i.key}: got ${i.given}; expected ${i.expected}`);
  }
  throw new Error('expected a UsageError');
}

describe('parseFlags', () => {
  it('gives typed values with defaults', () => {
    const { values, help } = parseFlags(
      'demo',
      ['--server-ip', '203.0.113.10', '--sandboxes=3', '--json', '--network', '10.0.0.1', '--network', '10.0.0.2'],
      spec,
    );
    expect(values).toEqual({ mode: undefined, sandboxes: 3, 'server-ip': '203.0.113.10', network: ['10.0.0.1', '10.0.0.2'], json: true });
    expect(help).toBe(false);
    expect(parseFlags('demo', ['--server-ip', '203.0.113.10'], spec).values).toMatchObject({ sandboxes: 2, json: false, network: [] });
  });

  it('reports every bad flag at once, each named, with what was given and what is accepted', () => {
    expect(
      issuesOf(['--mode', 'tcp', '--sandboxes', '0', '--network', '10.0.0.1', '--network', 'nope', '--colour', 'red', '--json=yes']),
    ).toEqual([
      '--colour: got "red"; expected one of --mode, --sandboxes, --server-ip, --network, --json',
      '--json: got "yes"; expected no value (it is a switch)',
      '--mode: got "tcp"; expected one of local, transparent',
      '--sandboxes: got "0"; expected an integer from 1 to 200',
      '--server-ip: got (missing); expected the proxy address',
      '--network: got "nope"; expected an IPv4 address such as 203.0.113.10',
    ]);
  });

  it('refuses a value flag without a value, a repeated single flag and stray arguments', () => {
    expect(issuesOf(['--server-ip', '203.0.113.10', '--mode'])).toEqual(['--mode: got (no value); expected a value after the flag']);
    expect(issuesOf(['--server-ip', '203.0.113.10', '--mode', 'local', '--mode', 'transparent'])).toEqual([
      '--mode: got "local" and "transparent"; expected the flag once',
    ]);
    expect(issuesOf(['--server-ip', '203.0.113.10', 'extra'])).toEqual(['arguments: got ["extra"]; expected no arguments']);
  });

  it('takes positionals when the command declares them', () => {
    const parsed = parseFlags('demo', ['sb1', '--server-ip', '203.0.113.10'], spec, { min: 1, max: 1, what: 'one node' });
    expect(parsed.positionals).toEqual(['sb1']);
  });

  it('lets --help through even with other problems, so usage can be printed', () => {
    expect(parseFlags('demo', ['--bogus', '-h'], spec).help).toBe(true);
  });

  it('formats the error for the terminal with the command and a pointer to --help', () => {
    expect(() => parseFlags('demo', ['--sandboxes', 'x', '--server-ip', '1.2.3.4'], spec)).toThrow(
      'demo: a bad argument:\n  --sandboxes: got "x"; expected an integer from 1 to 200\nRun \'sandbox-kit demo --help\' for its options.',
    );
  });
});
