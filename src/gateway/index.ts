/** The shared sandbox gateway: routing by header (or host), a catalog of sandboxes, streaming proxy. */
export { startGateway, type RunningGateway } from './server';
export { DEFAULT_LIMITS, type GatewayLimits, type GatewayOptions } from './options';
export type { ResumeSandbox } from './resume';
export {
  decideRoute,
  routeFromHost,
  routingHeadersFor,
  parsePort,
  type RouteDecision,
  type RoutingHeaders,
  type RoutingSettings,
} from './routing';
