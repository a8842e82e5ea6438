/** The generated code in src/contract/gen is exactly what `npm run codegen` makes from src/agent/proto today. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GEN_DIR, generate } from '../../../src/agent/proto/codegen';
import { parseProto } from '../../../src/agent/proto/proto-parser';

test('src/contract/gen matches the .proto files (run `npm run codegen` after editing them)', () => {
  const generated = generate();
  expect([...generated.keys()].sort()).toEqual(fs.readdirSync(GEN_DIR).sort());
  for (const [name, content] of generated) {
    expect({ name, content: fs.readFileSync(path.join(GEN_DIR, name), 'utf8') }).toEqual({ name, content });
  }
});

test('the proto front end refuses what it does not support, naming the line', () => {
  expect(() => parseProto('syntax = "proto2";', 'x.proto')).toThrow(/only proto3/);
  expect(() => parseProto('syntax = "proto3";\npackage p;\nmessage A {\n  Missing b = 1;\n}\n', 'x.proto')).toThrow(
    /line 4: unknown type "Missing"/,
  );
  expect(() => parseProto('syntax = "proto3";\nimport "other.proto";', 'x.proto')).toThrow(/line 2: import "other.proto" is not supported/);
});
