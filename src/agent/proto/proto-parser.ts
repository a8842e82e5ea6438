/**
 * A front end for the subset of proto3 the agent's two .proto files use, producing the FileDescriptorProto that
 * protoc would hand a plugin. It exists because neither protoc nor the buf CLI can be installed where the kit is
 * built (buf is fetched as a platform binary, protoc is not an npm package): with it, `npm run codegen` runs the
 * real protoc-gen-es plugin on descriptors made from the .proto text, and nothing generated is edited by hand.
 *
 * Supported: `syntax = "proto3"`, `package`, `import` (google/protobuf/timestamp.proto only), messages (nested),
 * enums, `repeated`, `optional` (proto3 presence), `oneof`, `map<K,V>`, services with unary and streaming rpcs,
 * `//` comments. Anything else is an error naming the line, never a silent difference.
 */
import { create } from '@bufbuild/protobuf';
import {
  type DescriptorProto,
  DescriptorProtoSchema,
  type EnumDescriptorProto,
  EnumDescriptorProtoSchema,
  EnumValueDescriptorProtoSchema,
  type FieldDescriptorProto,
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FieldDescriptorProtoSchema,
  type FileDescriptorProto,
  FileDescriptorProtoSchema,
  MessageOptionsSchema,
  MethodDescriptorProtoSchema,
  OneofDescriptorProtoSchema,
  ServiceDescriptorProtoSchema,
} from '@bufbuild/protobuf/wkt';

const SCALARS: Record<string, FieldDescriptorProto_Type> = {
  double: FieldDescriptorProto_Type.DOUBLE,
  float: FieldDescriptorProto_Type.FLOAT,
  int64: FieldDescriptorProto_Type.INT64,
  uint64: FieldDescriptorProto_Type.UINT64,
  int32: FieldDescriptorProto_Type.INT32,
  uint32: FieldDescriptorProto_Type.UINT32,
  sint32: FieldDescriptorProto_Type.SINT32,
  sint64: FieldDescriptorProto_Type.SINT64,
  bool: FieldDescriptorProto_Type.BOOL,
  string: FieldDescriptorProto_Type.STRING,
  bytes: FieldDescriptorProto_Type.BYTES,
};

/** Well-known files the parser knows by name: import path -> the message names they define. */
const KNOWN_IMPORTS: Record<string, string[]> = {
  'google/protobuf/timestamp.proto': ['.google.protobuf.Timestamp'],
};

interface Token {
  text: string;
  line: number;
}

function tokenize(source: string): Token[] {
  const out: Token[] = [];
  const re = /\s+|\/\/[^\n]*|"(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z0-9_.]*|\d+|[{}()<>;=,[\]]/y;
  let line = 1;
  let i = 0;
  while (i < source.length) {
    re.lastIndex = i;
    const m = re.exec(source);
    if (!m) throw new Error(`line ${line}: unexpected character ${JSON.stringify(source[i])}`);
    const text = m[0];
    if (!/^\s/.test(text) && !text.startsWith('//')) out.push({ text, line });
    line += text.split('\n').length - 1;
    i += text.length;
  }
  return out;
}

/** Unresolved field type, resolved once every message and enum name of the file is known. */
interface PendingType {
  field: FieldDescriptorProto;
  name: string;
  scope: string;
  line: number;
}

class Parser {
  private pos = 0;
  private readonly pending: PendingType[] = [];
  private readonly kinds = new Map<string, 'message' | 'enum'>();

  constructor(private readonly tokens: Token[]) {}

  private peek(): string | undefined {
    return this.tokens[this.pos]?.text;
  }

  private line(): number {
    return this.tokens[Math.min(this.pos, this.tokens.length - 1)]?.line ?? 0;
  }

  private next(): string {
    const t = this.tokens[this.pos++];
    if (!t) throw new Error('unexpected end of file');
    return t.text;
  }

  private expect(text: string): void {
    const line = this.line();
    const got = this.next();
    if (got !== text) throw new Error(`line ${line}: expected ${JSON.stringify(text)}, got ${JSON.stringify(got)}`);
  }

  private identifier(): string {
    const line = this.line();
    const got = this.next();
    if (!/^[A-Za-z_][A-Za-z0-9_.]*$/.test(got)) throw new Error(`line ${line}: expected a name, got ${JSON.stringify(got)}`);
    return got;
  }

  private integer(): number {
    const line = this.line();
    const got = this.next();
    if (!/^\d+$/.test(got)) throw new Error(`line ${line}: expected a number, got ${JSON.stringify(got)}`);
    return Number(got);
  }

  parseFile(name: string): FileDescriptorProto {
    const file = create(FileDescriptorProtoSchema, { name, syntax: 'proto3' });
    this.expect('syntax');
    this.expect('=');
    const syntax = this.next();
    if (syntax !== '"proto3"') throw new Error(`line ${this.line()}: only proto3 is supported, got ${syntax}`);
    this.expect(';');
    while (this.peek() !== undefined) {
      const line = this.line();
      const word = this.next();
      if (word === 'package') {
        file.package = this.identifier();
        this.expect(';');
      } else if (word === 'import') {
        const path = JSON.parse(this.next()) as string;
        if (!KNOWN_IMPORTS[path]) throw new Error(`line ${line}: import ${JSON.stringify(path)} is not supported`);
        for (const t of KNOWN_IMPORTS[path]!) this.kinds.set(t, 'message');
        file.dependency.push(path);
        this.expect(';');
      } else if (word === 'message') {
        file.messageType.push(this.message(`.${file.package}`));
      } else if (word === 'enum') {
        file.enumType.push(this.enumeration(`.${file.package}`));
      } else if (word === 'service') {
        file.service.push(this.service(file.package));
      } else {
        throw new Error(`line ${line}: unexpected ${JSON.stringify(word)}`);
      }
    }
    for (const p of this.pending) this.resolve(p);
    return file;
  }

  private message(scope: string): DescriptorProto {
    const name = this.identifier();
    const full = `${scope}.${name}`;
    this.kinds.set(full, 'message');
    const msg = create(DescriptorProtoSchema, { name });
    this.expect('{');
    while (this.peek() !== '}') {
      const word = this.peek();
      if (word === 'message') {
        this.next();
        msg.nestedType.push(this.message(full));
      } else if (word === 'enum') {
        this.next();
        msg.enumType.push(this.enumeration(full));
      } else if (word === 'oneof') {
        this.next();
        const index = msg.oneofDecl.length;
        msg.oneofDecl.push(create(OneofDescriptorProtoSchema, { name: this.identifier() }));
        this.expect('{');
        while (this.peek() !== '}') msg.field.push(this.field(full, msg, index));
        this.expect('}');
      } else {
        msg.field.push(this.field(full, msg, undefined));
      }
    }
    this.expect('}');
    // proto3 `optional` fields get synthetic oneofs, which protoc places after every real oneof.
    for (const f of msg.field) {
      if (!f.proto3Optional) continue;
      f.oneofIndex = msg.oneofDecl.length;
      msg.oneofDecl.push(create(OneofDescriptorProtoSchema, { name: `_${f.name}` }));
    }
    return msg;
  }

  private field(scope: string, msg: DescriptorProto, oneofIndex: number | undefined): FieldDescriptorProto {
    const line = this.line();
    let label = FieldDescriptorProto_Label.OPTIONAL;
    let optional = false;
    let typeName = this.identifier();
    if (typeName === 'repeated' || typeName === 'optional') {
      if (oneofIndex !== undefined) throw new Error(`line ${line}: ${typeName} is not allowed inside a oneof`);
      if (typeName === 'repeated') label = FieldDescriptorProto_Label.REPEATED;
      else optional = true;
      typeName = this.identifier();
    }
    let mapTypes: [string, string] | undefined;
    if (typeName === 'map') {
      this.expect('<');
      const k = this.identifier();
      this.expect(',');
      const v = this.identifier();
      this.expect('>');
      mapTypes = [k, v];
      label = FieldDescriptorProto_Label.REPEATED;
    }
    const name = this.identifier();
    this.expect('=');
    const number = this.integer();
    this.expect(';');
    const field = create(FieldDescriptorProtoSchema, { name, number, label, jsonName: camel(name) });
    if (optional) field.proto3Optional = true;
    if (oneofIndex !== undefined) field.oneofIndex = oneofIndex;
    if (mapTypes) {
      const entryName = `${name
        .split('_')
        .map((s) => s.charAt(0).toUpperCase() + s.slice(1))
        .join('')}Entry`;
      const entry = create(DescriptorProtoSchema, { name: entryName, options: create(MessageOptionsSchema, { mapEntry: true }) });
      const key = create(FieldDescriptorProtoSchema, {
        name: 'key',
        number: 1,
        label: FieldDescriptorProto_Label.OPTIONAL,
        jsonName: 'key',
      });
      const value = create(FieldDescriptorProtoSchema, {
        name: 'value',
        number: 2,
        label: FieldDescriptorProto_Label.OPTIONAL,
        jsonName: 'value',
      });
      this.setType(key, mapTypes[0], scope, line);
      this.setType(value, mapTypes[1], scope, line);
      entry.field.push(key, value);
      msg.nestedType.push(entry);
      this.kinds.set(`${scope}.${entryName}`, 'message');
      field.type = FieldDescriptorProto_Type.MESSAGE;
      field.typeName = `${scope}.${entryName}`;
    } else {
      this.setType(field, typeName, scope, line);
    }
    return field;
  }

  private setType(field: FieldDescriptorProto, typeName: string, scope: string, line: number): void {
    const scalar = SCALARS[typeName];
    if (scalar !== undefined) field.type = scalar;
    else this.pending.push({ field, name: typeName, scope, line });
  }

  /** Resolves a type name the way protoc does: innermost scope outwards. */
  private resolve(p: PendingType): void {
    let candidates: string[];
    if (p.name.startsWith('.')) {
      candidates = [p.name];
    } else {
      candidates = [];
      const parts = p.scope.split('.');
      for (let i = parts.length; i >= 1; i--) candidates.push(`${parts.slice(0, i).join('.')}.${p.name}`);
      candidates.push(`.${p.name}`);
    }
    for (const c of candidates) {
      const kind = this.kinds.get(c);
      if (!kind) continue;
      p.field.type = kind === 'enum' ? FieldDescriptorProto_Type.ENUM : FieldDescriptorProto_Type.MESSAGE;
      p.field.typeName = c;
      return;
    }
    throw new Error(`line ${p.line}: unknown type ${JSON.stringify(p.name)}`);
  }

  private enumeration(scope: string): EnumDescriptorProto {
    const name = this.identifier();
    this.kinds.set(`${scope}.${name}`, 'enum');
    const e = create(EnumDescriptorProtoSchema, { name });
    this.expect('{');
    while (this.peek() !== '}') {
      const valueName = this.identifier();
      this.expect('=');
      const number = this.integer();
      this.expect(';');
      e.value.push(create(EnumValueDescriptorProtoSchema, { name: valueName, number }));
    }
    this.expect('}');
    return e;
  }

  private service(pkg: string) {
    const s = create(ServiceDescriptorProtoSchema, { name: this.identifier() });
    this.expect('{');
    while (this.peek() !== '}') {
      this.expect('rpc');
      const name = this.identifier();
      this.expect('(');
      const clientStreaming = this.peek() === 'stream' && this.next() === 'stream';
      const input = this.identifier();
      this.expect(')');
      this.expect('returns');
      this.expect('(');
      const serverStreaming = this.peek() === 'stream' && this.next() === 'stream';
      const output = this.identifier();
      this.expect(')');
      this.expect(';');
      const method = create(MethodDescriptorProtoSchema, { name, inputType: `.${pkg}.${input}`, outputType: `.${pkg}.${output}` });
      if (clientStreaming) method.clientStreaming = true;
      if (serverStreaming) method.serverStreaming = true;
      s.method.push(method);
    }
    this.expect('}');
    return s;
  }
}

function camel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** Parses one .proto file's text into the descriptor protoc would produce for it. */
export function parseProto(source: string, fileName: string): FileDescriptorProto {
  return new Parser(tokenize(source)).parseFile(fileName);
}
