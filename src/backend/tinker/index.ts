export { connectTinker, createTinkerBackend, createTinkerSampler, TinkerBackend, TinkerSampler, HOSTED_BASE_URL, isHostedUrl, type TinkerBackendOptions, type TinkerUsage, type TokenPrice, type ConnectOptions } from './backend.js';
export { TinkerClient, type ClientOptions } from './client.js';
export { TinkerAuthError, TinkerBillingError, TinkerRequestError, TinkerServerError } from './http.js';
export { estimateRunCost, formatCostEstimate, episodeTokens, SEED_EPISODE, type CostConfig, type EpisodeShape, type PricesTable, type RunCostEstimate } from './cost.js';
export type { Flavor } from './wire.js';
export { rendererForModel } from './agent.js';
