import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkpointIntact, CorruptCheckpoint, readCheckpoint, writeCheckpoint } from '../../src/backend/local/checkpoint.js';
import { tempDir, tinyCheckpoint } from './tinker/helpers.js';

describe('local checkpoint checksum', () => {
  it('keeps the SHA-256 of the tensors and refuses a file whose tensor bytes changed, naming it', async () => {
    const path = await tinyCheckpoint();
    const { header } = readCheckpoint(path);
    expect(header.sha256).toMatch(/^[0-9a-f]{64}$/u);
    expect(checkpointIntact(path)).toBe(true);
    const bytes = readFileSync(path);
    const bad = join(tempDir(), 'bad.sampler.ckpt');
    // One bit near the end: inside the last tensor, past the header.
    bytes[bytes.length - 7]! ^= 0x10;
    writeFileSync(bad, bytes);
    expect(() => readCheckpoint(bad)).toThrow(CorruptCheckpoint);
    expect(() => readCheckpoint(bad)).toThrow(`checkpoint ${bad}: corrupted`);
    expect(checkpointIntact(bad)).toBe(false);
  });

  it('reads a checkpoint written before the hash was kept (no sha256 in its header) unchecked', async () => {
    const { header, tensors } = readCheckpoint(await tinyCheckpoint());
    const path = join(tempDir(), 'old.sampler.ckpt');
    writeCheckpoint(path, header, tensors);
    // Rewrite the header without its sha256, as a checkpoint of the earlier format has it.
    const bytes = readFileSync(path);
    const length = bytes.readUInt32LE(8);
    const { sha256: _dropped, ...old } = JSON.parse(bytes.toString('utf8', 12, 12 + length)) as Record<string, unknown>;
    const json = Buffer.from(JSON.stringify(old), 'utf8');
    const pre = Buffer.alloc(12);
    pre.write('SLEUTHLM', 0, 'latin1');
    pre.writeUInt32LE(json.length, 8);
    const body = bytes.subarray(12 + length + ((4 - ((12 + length) % 4)) % 4));
    writeFileSync(path, Buffer.concat([pre, json, Buffer.alloc((4 - ((12 + json.length) % 4)) % 4), body]));
    const read = readCheckpoint(path);
    expect(read.header.sha256).toBeUndefined();
    expect(read.tensors.params).toEqual(tensors.params);
  });
});
