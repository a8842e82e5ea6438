/** Jest runs the TypeScript sources directly; type errors are caught by `npm run typecheck`. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }],
  },
  testTimeout: 60000,
  // Every test file is a separate process; labs and servers use unique names and free ports. The e2e tests share the
  // lab's one link into the root namespace (and its route to the sandbox subnet), so npm test runs them one at a time.
  maxWorkers: 2,
};
