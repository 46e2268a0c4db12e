export { createLocalBackend, loadSampler, LocalBackend, DEFAULT_MODEL, LONG_MODEL, type LocalBackendOptions } from './backend.js';
export { LocalSampler } from './sampler.js';
export { Model, ModelConfigSchema, paramCount, type ModelConfig } from './model.js';
export { readCheckpoint, CHECKPOINT_VERSION } from './checkpoint.js';
export { pretrain, PRETRAIN_ADAM, type PretrainOptions } from './pretrain.js';
export { DEFAULT_VOCAB, embeddedTokenizerTexts, syntheticTranscripts, tokenizerTexts, trainLocalTokenizer } from './tokenizer.js';
