/** The whole system on one machine: `sandbox-kit up`, `status`, `rotate`, `down`. */
export { downLocal, type LocalRemoved } from './down';
export { localPrerequisites, PreflightError } from './preflight';
export { type RotateOptions, type RotationReport, rotateEgress } from './rotate';
export { DEFAULT_LOCAL_NAME, type LocalSandbox, type LocalState, LOCAL_DIR, readLocalState } from './state';
export { type LocalStatus, localStatus, type SandboxHealth } from './status';
export { type SummaryFacts, summaryText, type UpJson, upJson } from './summary';
export { SANDBOX_SOURCES, type SandboxSource, type UpOptions, type UpResult, upLocal } from './up';
export { type RecreateReport, recreateProxy } from './recreate';
