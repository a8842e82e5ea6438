/** Jest runs the TypeScript sources directly; type errors are caught by `npm run typecheck`. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }],
  },
  testTimeout: 60000,
  // Every test file is a separate process; labs and servers use unique names and free ports.
  maxWorkers: 2,
};
