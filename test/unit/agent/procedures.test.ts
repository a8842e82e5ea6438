import { Filesystem } from '../../../src/contract/gen/filesystem_pb';
import { Process } from '../../../src/contract/gen/process_pb';
import { PROCEDURES } from '../../../src/agent/procedures';

/** The server checks calls against a written-out list (so it need not load the services first): it must be theirs. */
test('the agent checks calls against exactly the procedures of its two services, with their request kinds', () => {
  const fromDescriptors = [Filesystem, Process].flatMap((service) =>
    service.methods.map((m) => [`/${service.typeName}/${m.name}`, m.methodKind === 'unary' ? 'unary' : 'stream']),
  );
  expect([...PROCEDURES].sort()).toEqual(fromDescriptors.sort());
});
