export { createTemplateService, TemplateService, type TemplateServiceOptions } from './service';
export { templateRoutes } from './routes';
export { stepValidator, type TemplateValidator } from './validate';
export { DEFAULT_KEY_PREFIX, TemplateStore } from './store';
export { templatesForPlatform, type PlatformTemplateOptions } from './platform-hook';
