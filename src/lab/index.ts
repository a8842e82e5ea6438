/** The lab: the whole egress path in network namespaces, for tests, `sandbox-kit lab` and the local system. */
export { ADDRESS_PLAN, type AddressPlan, checkElasticIp, MAX_SANDBOXES, nextElasticIp, sandboxAddress } from './address-plan';
export { eipRestoreScript, type ElasticIpMapping } from './eip-nat';
export { type EgressCheck, whoamiUrl } from './egress-check';
export { attachLab, downLab, Lab, labExists, labUp, type LabOptions, type LabStatus } from './lab';
export { checkLabName, DEFAULT_LAB_NAME, hostLinkName, LAB_NAME, namespaceName, namespacePrefix } from './names';
export type { LabProgress, ProgressFn } from './progress';
export type { RunResult } from './run';
export type { LabState } from './state';
export type { SupervisorStatus } from './supervisor';
export { builtEntry } from './dist-path';
export { findLeftovers, hasLeftovers, removeLab } from './teardown';
export { parseServiceUnit, type ServiceUnit } from './unit-file';
