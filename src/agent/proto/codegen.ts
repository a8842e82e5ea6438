/**
 * `npm run codegen`: src/agent/proto/*.proto -> src/contract/gen/*_pb.ts. The .proto files are parsed by
 * proto-parser.ts and the descriptors are handed, as protoc would hand them, to the protoc-gen-es plugin
 * (a devDependency) over its stdin; its answer is written as is. `generate()` is also what the drift test runs.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { CodeGeneratorRequestSchema, CodeGeneratorResponseSchema, file_google_protobuf_timestamp } from '@bufbuild/protobuf/wkt';
import { parseProto } from './proto-parser';

/** The repository root: the nearest directory above this file with a package.json (from src/ or from dist/src/). */
function repoRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`codegen: no package.json above ${__dirname}`);
    dir = up;
  }
  return dir;
}

export const PROTO_DIR = path.join(repoRoot(), 'src/agent/proto');
export const GEN_DIR = path.join(repoRoot(), 'src/contract/gen');
export const PROTO_FILES = ['filesystem.proto', 'process.proto'];
const PLUGIN_OPTIONS = 'target=ts,import_extension=none';

function pluginPath(): string {
  return path.join(path.dirname(require.resolve('@bufbuild/protoc-gen-es/package.json')), 'bin', 'protoc-gen-es');
}

/** The generated files, by name under src/contract/gen. */
export function generate(): Map<string, string> {
  const files = PROTO_FILES.map((name) => parseProto(fs.readFileSync(path.join(PROTO_DIR, name), 'utf8'), name));
  const request = create(CodeGeneratorRequestSchema, {
    fileToGenerate: PROTO_FILES,
    parameter: PLUGIN_OPTIONS,
    protoFile: [file_google_protobuf_timestamp.proto, ...files],
  });
  const out = execFileSync(process.execPath, [pluginPath()], {
    input: toBinary(CodeGeneratorRequestSchema, request),
    maxBuffer: 64 * 1024 * 1024,
  });
  const response = fromBinary(CodeGeneratorResponseSchema, out);
  if (response.error) throw new Error(`protoc-gen-es: ${response.error}`);
  return new Map(response.file.map((f) => [f.name, f.content]));
}

if (require.main === module) {
  fs.mkdirSync(GEN_DIR, { recursive: true });
  for (const [name, content] of generate()) {
    fs.writeFileSync(path.join(GEN_DIR, name), content);
    console.log(`codegen: wrote ${path.relative(process.cwd(), path.join(GEN_DIR, name))}`);
  }
}
