export { type CollectorOptions, type GcReport, StorageCollector } from './collector';
export { storageRoutes } from './routes';
