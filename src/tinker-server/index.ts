export { TinkerServer, type TinkerServerOptions } from './server.js';
export { parseFaults, type FaultRule, type FaultKind } from './faults.js';
export { parsePath } from './registry.js';
