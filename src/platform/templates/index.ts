export { createTemplateService, type ImageSources, TemplateService, type TemplateServiceOptions } from './service';
export { templateRoutes } from './routes';
export { BUILD_CHECK_METADATA, sandboxValidator, type SandboxStarter, stepValidator, type TemplateValidator } from './validate';
export { DEFAULT_KEY_PREFIX, TemplateStore } from './store';
