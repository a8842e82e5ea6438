import { copySourceProblem, debianImage, expandEnv, planBuild, planSteps } from '../../../../src/platform/templates/plan';
import type { Step } from '../../../../src/platform/templates/wire';

const step = (type: string, args: string[], extra: Partial<Step> = {}): Step => ({
  type: type as Step['type'],
  args,
  force: false,
  ...extra,
});
const HASH = 'b'.repeat(64);

describe('planSteps', () => {
  test('plans the step types the SDK produces', () => {
    const result = planSteps([
      step('RUN', ['apt-get update && apt-get install -y jq', 'root']),
      step('COPY', ['app.txt', '/app/', 'root', '0755'], { filesHash: HASH }),
      step('ENV', ['A', '1', 'B', '$A-2']),
      step('WORKDIR', ['/app']),
      step('USER', ['user']),
    ]);
    expect(result.ok && result.plan.map((p) => p.kind)).toEqual(['RUN', 'COPY', 'ENV', 'WORKDIR', 'USER']);
    expect(result.ok && result.plan[1]).toMatchObject({ src: 'app.txt', dest: '/app/', owner: 'root', mode: 0o755, filesHash: HASH });
    expect(result.ok && result.plan[0]).toMatchObject({ user: 'root' });
  });

  test('reports every bad step at once, each naming its position and cause', () => {
    const result = planSteps([
      step('RUN', ['true']),
      step('ADD', ['x']),
      step('COPY', ['../x', '/y', '', ''], { filesHash: HASH }),
      step('ENV', ['A']),
      step('USER', ['Bad User']),
    ]);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.problems).toEqual([
      { step: '2', message: 'step 2 (ADD x): unknown step type "ADD"; supported: RUN, COPY, ENV, WORKDIR, USER' },
      {
        step: '3',
        message:
          'step 3 (COPY ../x /y): the COPY source "../x" is outside the template\'s file context; expected a path inside it (no leading ..)',
      },
      { step: '4', message: 'step 4 (ENV A): ENV needs name/value pairs; got 1 argument(s)' },
      { step: '5', message: 'step 5 (USER Bad User): USER "Bad User" is not a Unix user name' },
    ]);
  });

  test('COPY without a files hash or with a bad mode is refused', () => {
    const result = planSteps([step('COPY', ['a', '/b', '', '']), step('COPY', ['a', '/b', '', '999'], { filesHash: HASH })]);
    expect(!result.ok && result.problems.map((p) => p.message)).toEqual([
      'step 1 (COPY a /b): COPY has no filesHash; the SDK computes it from the files and uploads them under it',
      'step 2 (COPY a /b 999): COPY mode "999" is not an octal file mode such as 0644',
    ]);
  });
});

test.each([
  ['a.txt', undefined],
  ['dir/*.json', undefined],
  ['./a/../b', undefined],
  ['../a', 'outside'],
  ['a/../../b', 'outside'],
  ['/etc/passwd', 'absolute'],
  ['', 'empty'],
])('COPY source %j', (src, problem) => {
  const found = copySourceProblem(src);
  if (problem === undefined) expect(found).toBeUndefined();
  else expect(found).toContain(problem);
});

test('ENV values expand what was set before, as a Dockerfile does', () => {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: ${NAME} is the ENV syntax under test
  expect(expandEnv('$A:${B}:$MISSING:plain', { A: '1', B: '2' })).toBe('1:2::plain');
});

test('only Debian suites the base maker supports are available; the error lists them', () => {
  const supported = ['bookworm', 'stable', 'trixie'];
  expect(debianImage('debian:bookworm', supported)).toEqual({ ok: true, image: 'debian:bookworm' });
  expect(debianImage('debian', supported)).toEqual({ ok: true, image: 'debian:stable' });
  expect(debianImage('debian:latest', supported)).toEqual({ ok: true, image: 'debian:stable' });
  expect(debianImage('e2bdev/base', supported)).toEqual({
    ok: false,
    message:
      'base image "e2bdev/base" is not one made offline; those are: debian:bookworm, debian:stable, debian:trixie (fromDebianImage(\'<suite>\'))',
  });
  expect(debianImage('debian:buster', supported).ok).toBe(false);
});

describe('planBuild', () => {
  const SUITES = { supportedSuites: ['bookworm', 'stable'] };

  test('a build from a Debian image: the image, then the planned steps', () => {
    const result = planBuild({ fromImage: 'debian:bookworm', steps: [step('ENV', ['A', '1'])] }, SUITES);
    expect(result).toEqual({
      ok: true,
      plan: {
        base: { kind: 'image', image: 'debian:bookworm' },
        steps: [{ kind: 'ENV', step: step('ENV', ['A', '1']), pairs: [['A', '1']] }],
      },
    });
  });

  test('a build from another template takes it as the base, whatever image is named', () => {
    const result = planBuild({ fromTemplate: 'parent', fromImage: 'alpine', steps: [] }, SUITES);
    expect(result).toEqual({ ok: true, plan: { base: { kind: 'template', name: 'parent' }, steps: [] } });
  });

  test("without a base the SDK's default image is meant: the kit's own base, unless the config says to pull E2B's", () => {
    expect(planBuild({ steps: [] }, SUITES)).toEqual({ ok: true, plan: { base: { kind: 'image', image: 'debian:bookworm' }, steps: [] } });
    expect(planBuild({ fromImage: 'e2bdev/base:latest', steps: [] }, SUITES)).toMatchObject({ plan: { base: { kind: 'image' } } });
    expect(planBuild({ steps: [] }, { ...SUITES, e2bBase: 'registry' })).toEqual({
      ok: true,
      plan: { base: { kind: 'registry', image: 'e2bdev/base' }, steps: [] },
    });
  });

  test('any other image is pulled from its registry, with the credentials the SDK sent in its own shapes', () => {
    const plan = (fromImageRegistry?: Parameters<typeof planBuild>[0]['fromImageRegistry']) =>
      planBuild({ fromImage: 'ghcr.io/org/app:1', fromImageRegistry, steps: [] }, SUITES);
    expect(plan()).toMatchObject({ ok: true, plan: { base: { kind: 'registry', image: 'ghcr.io/org/app:1' } } });
    expect(plan({ type: 'registry', username: 'u', password: 'p' })).toMatchObject({
      plan: { base: { credentials: { username: 'u', password: 'p' } } },
    });
    expect(
      planBuild(
        { fromImage: 'europe-docker.pkg.dev/p/r/app:1', fromImageRegistry: { type: 'gcp', serviceAccountJson: '{"k":1}' }, steps: [] },
        SUITES,
      ),
    ).toMatchObject({ plan: { base: { credentials: { username: '_json_key', password: '{"k":1}' } } } });
    expect(
      planBuild(
        {
          fromImage: '123456789012.dkr.ecr.eu-west-1.amazonaws.com/app:1',
          fromImageRegistry: { type: 'aws', awsAccessKeyId: 'AK', awsSecretAccessKey: 'SK', awsRegion: 'eu-west-1' },
          steps: [],
        },
        SUITES,
      ),
    ).toMatchObject({ plan: { base: { credentials: { ecr: { accessKeyId: 'AK', secretAccessKey: 'SK', region: 'eu-west-1' } } } } });
  });

  test('AWS keys for a registry not on ECR or in another region, a GCP key for another registry or not JSON: refused at once, the key not repeated', () => {
    const aws = { type: 'aws', awsAccessKeyId: 'AKIDSECRETLIKE', awsSecretAccessKey: 'SECRETKEYVALUE', awsRegion: 'eu-west-1' } as const;
    const problem = (fromImage: string, fromImageRegistry: Parameters<typeof planBuild>[0]['fromImageRegistry']) => {
      const r = planBuild({ fromImage, fromImageRegistry, steps: [] }, SUITES);
      expect(r.ok).toBe(false);
      const message = r.ok ? '' : r.problems.map((p) => p.message).join('; ');
      for (const secret of ['AKIDSECRETLIKE', 'SECRETKEYVALUE', 'PRIVATEKEYVALUE']) expect(message).not.toContain(secret);
      return message;
    };
    expect(problem('ghcr.io/org/app:1', aws)).toBe(
      'fromAWSRegistry: ghcr.io is not an Amazon ECR registry (<account>.dkr.ecr.<region>.amazonaws.com); use fromImage(image, { username, password }) for other registries',
    );
    expect(problem('debian:bookworm', aws)).toContain('fromAWSRegistry: docker.io is not an Amazon ECR registry');
    expect(problem('123456789012.dkr.ecr.us-east-1.amazonaws.com/app:1', aws)).toBe(
      "fromAWSRegistry: the registry 123456789012.dkr.ecr.us-east-1.amazonaws.com is in us-east-1, but the region given is eu-west-1; ECR's tokens hold in their own region only",
    );
    const key = JSON.stringify({ type: 'service_account', private_key: 'PRIVATEKEYVALUE' });
    expect(problem('ghcr.io/org/app:1', { type: 'gcp', serviceAccountJson: key })).toContain(
      'fromGCPRegistry: ghcr.io is not a Google Cloud registry',
    );
    expect(problem('gcr.io/p/app:1', { type: 'gcp', serviceAccountJson: 'PRIVATEKEYVALUE' })).toBe(
      'fromGCPRegistry: the service account key is not a JSON object (expected the key file of the service account, as Google Cloud gives it)',
    );
    expect(problem('gcr.io/p/app:1', { type: 'gcp', serviceAccountJson: '["PRIVATEKEYVALUE"]' })).toContain('is not a JSON object');
  });

  test("an ECR image without credentials is pulled with the host's own (its instance role)", () => {
    expect(planBuild({ fromImage: '123456789012.dkr.ecr.eu-west-1.amazonaws.com/app:1', steps: [] }, SUITES)).toMatchObject({
      plan: { base: { kind: 'registry', credentials: { ecr: {} } } },
    });
  });

  test('a malformed image and bad steps are reported together', () => {
    const result = planBuild({ fromImage: 'Not An Image', steps: [step('WORKDIR', [])] }, SUITES);
    expect(result.ok).toBe(false);
    const problems = result.ok ? [] : result.problems;
    expect(problems.map((p) => p.step)).toEqual(['base', '1']);
    expect(problems[0]!.message).toContain('fromImage: image "Not An Image"');
    expect(problems[1]!.message).toBe('step 1 (WORKDIR): WORKDIR needs a path');
  });
});
