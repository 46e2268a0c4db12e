export { TinkerServer, parseFaults, parsePath, type FaultRule, type FaultKind, type TinkerServerOptions } from './server.js';
