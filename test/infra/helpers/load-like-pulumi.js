// Loads infra/ the way `pulumi up` does for this project (Pulumi.yaml: runtime nodejs, typescript, main: infra/):
// the Node language host, started in the project directory, registers ts-node (the project's, else the copy bundled
// with @pulumi/pulumi) with the tsconfig.json of that directory over its own defaults, then requires the main path.
// Here the program then runs against mocks, and what it registered and exported is printed as JSON.

const path = require('node:path');

const root = process.cwd();
const fromRoot = (id) => require(require.resolve(id, { paths: [root] }));
const pulumiDir = path.dirname(require.resolve('@pulumi/pulumi/package.json', { paths: [root] }));
const tsutils = require(path.join(pulumiDir, 'tsutils.js'));

const { tsnodeRequire, typescriptRequire } = tsutils.typeScriptRequireStrings();
const compilerOptions = tsutils.loadTypeScriptCompilerOptions('tsconfig.json');
require(tsnodeRequire).register({
  compiler: typescriptRequire,
  transpileOnly: compilerOptions.noCheck,
  project: 'tsconfig.json',
  skipProject: false,
  compilerOptions: { target: 'ES2020', module: 'nodenext', moduleResolution: 'nodenext', sourceMap: 'true', ...compilerOptions },
});

const pulumi = fromRoot('@pulumi/pulumi');
const registered = [];
const mocks = {
  newResource(args) {
    registered.push(`${args.type}::${args.name}`);
    const extra = {
      'aws:ec2/eip:Eip': { publicIp: `203.0.113.${registered.length}`, allocationId: `eipalloc-${registered.length}` },
      'aws:ec2/networkInterface:NetworkInterface': { privateIp: '172.31.0.10', privateIps: ['172.31.0.10', '172.31.0.11'] },
      'random:index/randomPassword:RandomPassword': { result: 'Generated-password-for-loading-1' },
      'aws:s3/bucket:Bucket': { bucket: 'bundle-bucket', arn: 'arn:aws:s3:::bundle-bucket' },
      'aws:ec2/instance:Instance': { privateIp: '172.31.0.20' },
    }[args.type];
    return { id: `${args.name}-id`, state: { ...args.inputs, ...extra } };
  },
  call(args) {
    return {
      'aws:ec2/getAmi:getAmi': { id: 'ami-0123456789abcdef0' },
      'aws:ec2/getVpc:getVpc': { id: 'vpc-1', cidrBlock: '172.31.0.0/16', cidrBlockAssociations: [] },
      'aws:ec2/getSubnets:getSubnets': { ids: ['subnet-1'] },
      'aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings': { locations: ['eu-west-1a'] },
      'aws:index/getRegion:getRegion': { region: 'eu-west-1', name: 'eu-west-1' },
    }[args.token];
  },
};

pulumi.runtime.setMocks(mocks, 'sandbox-kit', 'dev', false).then(() => {
  const program = require(path.join(root, 'infra'));
  program.clientConfigLocal.apply(() =>
    setTimeout(() => {
      const resolved = {};
      const names = Object.keys(program);
      Promise.all(names.map((n) => new Promise((r) => pulumi.output(program[n]).apply((v) => r((resolved[n] = typeof v)))))).then(() =>
        process.stdout.write(JSON.stringify({ exports: resolved, registered }) + '\n'),
      );
    }, 200),
  );
});
