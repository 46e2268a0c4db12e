import { create, createFileRegistry, fromBinary, toBinary, type DescMessage, type Message } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { InputError } from '../errors.js';
import type { TensorData, WireDatum } from '../backend/tinker/wire.js';

/**
 * Tinker's protobuf wire (SDK 0.25.0 and later): forward_backward requests, and the results of
 * forward_backward and sampling when retrieve_future is asked for `Accept: application/x-protobuf`.
 * Converted at the HTTP boundary to and from the JSON shapes of wire.ts, so the server has one
 * request model.
 *
 * The schema is the SDK's published one: the FileDescriptorProto that tinker-python 0.25.0 embeds
 * in src/tinker/proto/tinker_public_pb2.py (tinker_public.proto, Apache-2.0), base64-encoded
 * unchanged. Tensors travel as raw little-endian bytes (tokens as int32, logprobs as float32);
 * a missing prompt logprob is NaN.
 */

const TINKER_PUBLIC_PROTO = 'ChN0aW5rZXJfcHVibGljLnByb3RvEg10aW5rZXJfcHVibGljIvUBCg5TYW1wbGVSZXNwb25zZRIxCglzZXF1ZW5jZXMYASADKAsyHi50aW5rZXJfcHVibGljLlNhbXBsZWRTZXF1ZW5jZRIcCg9wcm9tcHRfbG9ncHJvYnMYAiABKAxIAIgBARJEChR0b3BrX3Byb21wdF9sb2dwcm9icxgDIAEoCzIhLnRpbmtlcl9wdWJsaWMuVG9wa1Byb21wdExvZ3Byb2JzSAGIAQESHwoXcHJvbXB0X2NhY2hlX2hpdF90b2tlbnMYBCABKAVCEgoQX3Byb21wdF9sb2dwcm9ic0IXChVfdG9wa19wcm9tcHRfbG9ncHJvYnMidQoPU2FtcGxlZFNlcXVlbmNlEi4KC3N0b3BfcmVhc29uGAEgASgOMhkudGlua2VyX3B1YmxpYy5TdG9wUmVhc29uEg4KBnRva2VucxgCIAEoDBIVCghsb2dwcm9icxgDIAEoDEgAiAEBQgsKCV9sb2dwcm9icyJbChJUb3BrUHJvbXB0TG9ncHJvYnMSEQoJdG9rZW5faWRzGAEgASgMEhAKCGxvZ3Byb2JzGAIgASgMEgkKAWsYAyABKA0SFQoNcHJvbXB0X2xlbmd0aBgEIAEoDSJGCglTcGFyc2VDc3ISDgoGdmFsdWVzGAEgASgMEhQKDGNyb3dfaW5kaWNlcxgCIAEoDBITCgtjb2xfaW5kaWNlcxgDIAEoDCKJAQoGVGVuc29yEg8KBWRlbnNlGAEgASgMSAASLgoKc3BhcnNlX2NzchgCIAEoCzIYLnRpbmtlcl9wdWJsaWMuU3BhcnNlQ3NySAASIwoFZHR5cGUYAyABKA4yFC50aW5rZXJfcHVibGljLkRUeXBlEg0KBXNoYXBlGAQgAygDQgoKCGVuY29kaW5nImsKDUJhdGNoZWRUZW5zb3ISDAoEZGF0YRgBIAEoDBIPCgdvZmZzZXRzGAIgASgMEiMKBWR0eXBlGAMgASgOMhQudGlua2VyX3B1YmxpYy5EVHlwZRIWCg50cmFpbGluZ19zaGFwZRgEIAMoAyK4AQoLQXJyYXlSZWNvcmQSEAoIdHlwZV90YWcYASABKAkSNgoGZmllbGRzGAIgAygLMiYudGlua2VyX3B1YmxpYy5BcnJheVJlY29yZC5GaWVsZHNFbnRyeRISCgpudW1fZGF0dW1zGAMgASgDGksKC0ZpZWxkc0VudHJ5EgsKA2tleRgBIAEoCRIrCgV2YWx1ZRgCIAEoCzIcLnRpbmtlcl9wdWJsaWMuQmF0Y2hlZFRlbnNvcjoCOAEi3QEKFUZvcndhcmRCYWNrd2FyZE91dHB1dBIbChNsb3NzX2ZuX291dHB1dF90eXBlGAEgASgJEjMKD2xvc3NfZm5fb3V0cHV0cxgCIAMoCzIaLnRpbmtlcl9wdWJsaWMuQXJyYXlSZWNvcmQSQgoHbWV0cmljcxgDIAMoCzIxLnRpbmtlcl9wdWJsaWMuRm9yd2FyZEJhY2t3YXJkT3V0cHV0Lk1ldHJpY3NFbnRyeRouCgxNZXRyaWNzRW50cnkSCwoDa2V5GAEgASgJEg0KBXZhbHVlGAIgASgBOgI4ASKLAgoWRm9yd2FyZEJhY2t3YXJkUmVxdWVzdBIQCghtb2RlbF9pZBgBIAEoCRIOCgZzZXFfaWQYAiABKAUSIgoEZGF0YRgDIAMoCzIULnRpbmtlcl9wdWJsaWMuRGF0dW0SDwoHbG9zc19mbhgEIAEoCRJPCg5sb3NzX2ZuX2NvbmZpZxgFIAMoCzI3LnRpbmtlcl9wdWJsaWMuRm9yd2FyZEJhY2t3YXJkUmVxdWVzdC5Mb3NzRm5Db25maWdFbnRyeRIUCgxmb3J3YXJkX29ubHkYBiABKAgaMwoRTG9zc0ZuQ29uZmlnRW50cnkSCwoDa2V5GAEgASgJEg0KBXZhbHVlGAIgASgBOgI4ASK+AQoFRGF0dW0SKQoLbW9kZWxfaW5wdXQYASADKAsyFC50aW5rZXJfcHVibGljLkNodW5rEj4KDmxvc3NfZm5faW5wdXRzGAIgAygLMiYudGlua2VyX3B1YmxpYy5EYXR1bS5Mb3NzRm5JbnB1dHNFbnRyeRpKChFMb3NzRm5JbnB1dHNFbnRyeRILCgNrZXkYASABKAkSJAoFdmFsdWUYAiABKAsyFS50aW5rZXJfcHVibGljLlRlbnNvcjoCOAEinwEKBUNodW5rEjcKDGVuY29kZWRfdGV4dBgBIAEoCzIfLnRpbmtlcl9wdWJsaWMuRW5jb2RlZFRleHRDaHVua0gAEioKBWltYWdlGAIgASgLMhkudGlua2VyX3B1YmxpYy5JbWFnZUNodW5rSAASKAoEZG1lbBgDIAEoCzIYLnRpbmtlcl9wdWJsaWMuRG1lbENodW5rSABCBwoFY2h1bmsiIgoQRW5jb2RlZFRleHRDaHVuaxIOCgZ0b2tlbnMYASABKAwiXAoKSW1hZ2VDaHVuaxIMCgRkYXRhGAEgASgMEg4KBmZvcm1hdBgCIAEoCRIcCg9leHBlY3RlZF90b2tlbnMYAyABKAVIAIgBAUISChBfZXhwZWN0ZWRfdG9rZW5zIhkKCURtZWxDaHVuaxIMCgRkbWVsGAEgASgMIqUCCg5TYW1wbGluZ1BhcmFtcxIXCgptYXhfdG9rZW5zGAEgASgFSAGIAQESEQoEc2VlZBgCIAEoBEgCiAEBEhgKC3RlbXBlcmF0dXJlGAMgASgCSAOIAQESEgoFdG9wX2sYBCABKAVIBIgBARISCgV0b3BfcBgFIAEoAkgFiAEBEi8KCXN0b3Bfc3RycxgGIAEoCzIaLnRpbmtlcl9wdWJsaWMuU3RvcFN0cmluZ3NIABIwCgtzdG9wX3Rva2VucxgHIAEoCzIZLnRpbmtlcl9wdWJsaWMuU3RvcFRva2Vuc0gAQgYKBHN0b3BCDQoLX21heF90b2tlbnNCBwoFX3NlZWRCDgoMX3RlbXBlcmF0dXJlQggKBl90b3Bfa0IICgZfdG9wX3AiHQoLU3RvcFN0cmluZ3MSDgoGdmFsdWVzGAEgAygJIhwKClN0b3BUb2tlbnMSDgoGdmFsdWVzGAEgAygFKjoKClN0b3BSZWFzb24SFAoQU1RPUF9SRUFTT05fU1RPUBAAEhYKElNUT1BfUkVBU09OX0xFTkdUSBABKmcKBURUeXBlEhUKEURUWVBFX1VOU1BFQ0lGSUVEEAASEQoNRFRZUEVfRkxPQVQzMhABEg8KC0RUWVBFX0lOVDY0EAISDwoLRFRZUEVfSU5UMzIQAxISCg5EVFlQRV9CRkxPQVQxNhAEYgZwcm90bzM=';

const registry = createFileRegistry(fromBinary(FileDescriptorProtoSchema, Buffer.from(TINKER_PUBLIC_PROTO, 'base64')), () => undefined);

function schema(name: string): DescMessage {
  const m = registry.getMessage(`tinker_public.${name}`);
  if (!m) throw new Error(`tinker_public.proto has no message ${name}`);
  return m;
}

const ForwardBackwardRequestSchema = schema('ForwardBackwardRequest');
const ForwardBackwardOutputSchema = schema('ForwardBackwardOutput');
const SampleResponseSchema = schema('SampleResponse');

export const PROTO_CONTENT_TYPE = 'application/x-protobuf';

/** tinker_public.DType */
const DTYPE = { float32: 1, int64: 2, int32: 3, bfloat16: 4 } as const;
/** tinker_public.StopReason */
const STOP_REASON = { stop: 0, length: 1 } as const;

/** The decoded message shapes this module reads (field names as @bufbuild/protobuf gives them). */
interface TensorMsg {
  encoding: { case: 'dense'; value: Uint8Array } | { case: 'sparseCsr'; value: { values: Uint8Array; crowIndices: Uint8Array; colIndices: Uint8Array } } | { case: undefined };
  dtype: number;
  shape: bigint[];
}
interface ChunkMsg {
  chunk: { case: 'encodedText'; value: { tokens: Uint8Array } } | { case: 'image' | 'dmel' | undefined; value?: unknown };
}
interface ForwardBackwardRequestMsg {
  modelId: string;
  seqId: number;
  data: { modelInput: ChunkMsg[]; lossFnInputs: Record<string, TensorMsg> }[];
  lossFn: string;
  lossFnConfig: Record<string, number>;
  forwardOnly: boolean;
}

/** A forward_backward request body (JSON shape), and whether it asks for the forward pass only. */
export interface DecodedForwardBackward {
  body: { model_id: string; seq_id: number; forward_backward_input: { data: WireDatum[]; loss_fn: string; loss_fn_config: Record<string, number> | null } };
  forwardOnly: boolean;
}

export function decodeForwardBackwardRequest(bytes: Uint8Array): DecodedForwardBackward {
  let msg: ForwardBackwardRequestMsg;
  try {
    msg = fromBinary(ForwardBackwardRequestSchema, bytes) as unknown as ForwardBackwardRequestMsg;
  } catch (err) {
    throw new InputError(`forward_backward: the body is not a tinker_public.ForwardBackwardRequest (${(err as Error).message})`);
  }
  const data = msg.data.map((d, i): WireDatum => ({
    model_input: {
      chunks: d.modelInput.map((c, k) => {
        if (c.chunk.case !== 'encodedText') throw new InputError(`forward_backward: datum ${i}: chunk ${k} is ${c.chunk.case ?? 'empty'}; this text-only model takes encoded_text chunks`);
        return { type: 'encoded_text' as const, tokens: view(c.chunk.value.tokens, 'int32', `datum ${i} chunk ${k} tokens`) };
      }),
    },
    loss_fn_inputs: Object.fromEntries(Object.entries(d.lossFnInputs).map(([name, t]) => [name, tensorOf(t, `datum ${i} loss_fn_inputs.${name}`)])),
  }));
  const config = Object.keys(msg.lossFnConfig).length ? { ...msg.lossFnConfig } : null;
  return { body: { model_id: msg.modelId, seq_id: msg.seqId, forward_backward_input: { data, loss_fn: msg.lossFn, loss_fn_config: config } }, forwardOnly: msg.forwardOnly };
}

function tensorOf(t: TensorMsg, what: string): TensorData {
  const dtype = t.dtype === DTYPE.float32 ? 'float32' : t.dtype === DTYPE.int64 ? 'int64' : undefined;
  if (!dtype) throw new InputError(`forward_backward: ${what}: dtype ${t.dtype} is not float32 or int64`);
  const shape = t.shape.map(Number);
  if (t.encoding.case === 'dense') return { data: view(t.encoding.value, dtype, what), dtype, shape };
  if (t.encoding.case === 'sparseCsr') {
    // CSR of a 2-D tensor: values, row starts (rows + 1) and column indices, as in the SDK's writer.
    const [rows, cols] = shape;
    if (shape.length !== 2 || rows === undefined || cols === undefined) throw new InputError(`forward_backward: ${what}: a sparse tensor must have a 2-D shape, got [${shape.join(', ')}]`);
    const values = view(t.encoding.value.values, dtype, what), crow = view(t.encoding.value.crowIndices, 'int64', what), col = view(t.encoding.value.colIndices, 'int64', what);
    if (crow.length !== rows + 1 || col.length !== values.length) throw new InputError(`forward_backward: ${what}: sparse indices do not match the shape [${rows}, ${cols}]`);
    const dense = new Array<number>(rows * cols).fill(0);
    for (let r = 0; r < rows; r++) {
      for (let k = Number(crow[r]); k < Number(crow[r + 1]); k++) {
        const c = Number(col[k]);
        if (!(c >= 0 && c < cols) || k >= values.length) throw new InputError(`forward_backward: ${what}: sparse column index out of range`);
        dense[r * cols + c] = values[k]!;
      }
    }
    return { data: dense, dtype, shape };
  }
  throw new InputError(`forward_backward: ${what}: the tensor has no data`);
}

/** A bytes field as numbers, read little-endian (copied first: the field may not be aligned). */
function view(bytes: Uint8Array, dtype: 'int32' | 'float32' | 'int64', what: string): number[] {
  const size = dtype === 'int64' ? 8 : 4;
  if (bytes.length % size) throw new InputError(`forward_backward: ${what}: ${bytes.length} bytes is not a whole number of ${dtype} values`);
  const buf = new Uint8Array(bytes).buffer;
  if (dtype === 'int64') return Array.from(new BigInt64Array(buf), Number);
  return Array.from(dtype === 'int32' ? new Int32Array(buf) : new Float32Array(buf));
}

function bytesOf(a: Float32Array | Int32Array | BigInt64Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** A forward_backward result (JSON shape) as tinker_public.ForwardBackwardOutput: one ArrayRecord, one BatchedTensor per output field. */
export function encodeForwardBackwardOutput(r: { loss_fn_output_type?: string; loss_fn_outputs: Record<string, TensorData>[]; metrics: Record<string, number> }): Uint8Array {
  const names = Object.keys(r.loss_fn_outputs[0] ?? {});
  const fields: Record<string, unknown> = {};
  for (const name of names) {
    const tensors = r.loss_fn_outputs.map((o) => o[name]!);
    const int = tensors[0]!.dtype === 'int64';
    const offsets = new BigInt64Array(tensors.length + 1);
    let total = 0;
    tensors.forEach((t, i) => {
      total += t.data.length;
      offsets[i + 1] = BigInt(total * (int ? 8 : 4));
    });
    const data = int ? BigInt64Array.from(tensors.flatMap((t) => t.data.map(BigInt))) : Float32Array.from(tensors.flatMap((t) => t.data));
    fields[name] = { data: bytesOf(data), offsets: bytesOf(offsets), dtype: int ? DTYPE.int64 : DTYPE.float32, trailingShape: [] };
  }
  const msg = create(ForwardBackwardOutputSchema, {
    lossFnOutputType: r.loss_fn_output_type ?? 'ArrayRecord',
    lossFnOutputs: [{ typeTag: r.loss_fn_output_type ?? 'ArrayRecord', fields, numDatums: BigInt(r.loss_fn_outputs.length) }],
    metrics: r.metrics,
  } as never);
  return toBinary(ForwardBackwardOutputSchema, msg as Message);
}

/** A sample result (JSON shape) as tinker_public.SampleResponse. */
export function encodeSampleResponse(r: { sequences: { tokens: number[]; logprobs: number[]; stop_reason: 'stop' | 'length' }[]; prompt_logprobs?: (number | null)[] }): Uint8Array {
  const init: Record<string, unknown> = {
    sequences: r.sequences.map((s) => ({ stopReason: STOP_REASON[s.stop_reason], tokens: bytesOf(Int32Array.from(s.tokens)), logprobs: bytesOf(Float32Array.from(s.logprobs)) })),
    promptCacheHitTokens: 0,
  };
  if (r.prompt_logprobs) init['promptLogprobs'] = bytesOf(Float32Array.from(r.prompt_logprobs, (v) => v ?? Number.NaN));
  return toBinary(SampleResponseSchema, create(SampleResponseSchema, init as never) as Message);
}

/** Decode for tests and for sleuth's own client: the inverse of the encoders above, in JSON shape. */
export function decodeSampleResponse(bytes: Uint8Array): { sequences: { tokens: number[]; logprobs: number[]; stop_reason: 'stop' | 'length' }[]; prompt_logprobs?: (number | null)[] } {
  const m = fromBinary(SampleResponseSchema, bytes) as unknown as { sequences: { stopReason: number; tokens: Uint8Array; logprobs?: Uint8Array }[]; promptLogprobs?: Uint8Array };
  const out: ReturnType<typeof decodeSampleResponse> = {
    sequences: m.sequences.map((s) => ({
      tokens: view(s.tokens, 'int32', 'tokens'),
      logprobs: s.logprobs ? view(s.logprobs, 'float32', 'logprobs') : [],
      stop_reason: s.stopReason === STOP_REASON.stop ? 'stop' : 'length',
    })),
  };
  if (m.promptLogprobs) out.prompt_logprobs = view(m.promptLogprobs, 'float32', 'prompt_logprobs').map((v) => (Number.isNaN(v) ? null : v));
  return out;
}
