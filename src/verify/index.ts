export * from './checks';
export * from './parse';
export * from './remote';
export * from './ssh';
export * from './sandbox-checks';
export * from './sandbox-parse';
export * from './sandbox-probe';
