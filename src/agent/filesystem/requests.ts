/**
 * Request messages of Stat and ListDir, decoded with the generated schemas by protobuf's JSON mapping (unknown
 * fields are errors, `null` means the field's default, a uint32 may also come as a decimal string). A failure is
 * `invalid_argument` naming the field, what was given and what it accepts.
 */
import { type DescMessage, fromJson, type MessageShape } from '@bufbuild/protobuf';
import { AgentError } from '../errors';
import { ListDirRequestSchema, StatRequestSchema } from '../../contract/gen/filesystem_pb';
import { Code } from '@connectrpc/connect';

export const statRequestSchema = StatRequestSchema;
export const listDirRequestSchema = ListDirRequestSchema;

export type StatRequest = MessageShape<typeof StatRequestSchema>;
export type ListDirRequest = MessageShape<typeof ListDirRequestSchema>;

/** Decodes a parsed JSON body with a generated schema; throws `invalid_argument` saying what is wrong. */
export function decodeRequest<S extends DescMessage>(schema: S, body: unknown, messageName: string): MessageShape<S> {
  const known = schema.fields.map((f) => f.jsonName).join(', ');
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AgentError(Code.InvalidArgument, `${messageName} must be a JSON object (fields: ${known})`);
  }
  try {
    return fromJson(schema, body as never);
  } catch (err) {
    const text = (err as Error).message;
    const unknown = /key "(.*)" is unknown/.exec(text);
    const field = /cannot decode field [\w.]+\.(\w+) from JSON: (.*)$/.exec(text);
    const problem = unknown
      ? `unknown field ${JSON.stringify(unknown[1])}`
      : field
        ? `field ${JSON.stringify(jsonName(schema, field[1]!))}: ${field[2]}`
        : text;
    throw new AgentError(Code.InvalidArgument, `invalid ${messageName}: ${problem} (fields: ${known})`);
  }
}

function jsonName(schema: DescMessage, protoName: string): string {
  return schema.fields.find((f) => f.name === protoName)?.jsonName ?? protoName;
}
