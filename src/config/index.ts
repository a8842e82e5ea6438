export * from './fields';
export * from './methods';
export * from './parse';
export * from './schema';
export * from './stack-file';
export * from './schema-walk';
export * from './reference';
export * from './limits';
