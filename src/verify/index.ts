export * from './checks';
export * from './parse';
export * from './remote';
export * from './ssh';
