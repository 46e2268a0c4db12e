import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLocalBackend, DEFAULT_MODEL, LONG_MODEL } from '../../src/backend/local/backend.js';
import { shippedBasePath } from '../../src/backend/local/base-model.js';
import { BASE_BUILD, LONG_BUILD } from '../../src/demo/base-build.js';

const ASSETS = join(process.cwd(), 'src/backend/local/assets');
const readme = readFileSync(join(ASSETS, 'README.md'), 'utf8');

/** The sha256 the assets README gives under the section that names the file first. */
function documentedSha256(file: string): string | undefined {
  const sections = readme.split(/^# /m);
  const own = sections.find((s) => s.includes(`\`${file}\``));
  return own?.match(/^sha256: ([0-9a-f]{64})$/m)?.[1];
}

describe('the shipped local models', () => {
  for (const [size, build, dims] of [
    ['base', BASE_BUILD, { dModel: DEFAULT_MODEL.dModel, nLayers: DEFAULT_MODEL.nLayers, nHeads: DEFAULT_MODEL.nHeads }],
    ['long', LONG_BUILD, { dModel: LONG_MODEL.dModel, nLayers: LONG_MODEL.nLayers, nHeads: LONG_MODEL.nHeads }],
  ] as const) {
    it(`local-${size}.sampler.ckpt is the file the assets README describes, of its build's size`, () => {
      const path = shippedBasePath(size);
      expect(path, `src/backend/local/assets/local-${size}.sampler.ckpt`).toBeDefined();
      const sha = createHash('sha256').update(readFileSync(path!)).digest('hex');
      expect(sha).toBe(documentedSha256(`local-${size}.sampler.ckpt`));
      const b = createLocalBackend({ checkpoint: path!, dir: mkdtempSync(join(tmpdir(), 'sleuth-shipped-')) });
      expect(b.config).toMatchObject({ ...dims, context: build.context });
      expect(b.tokenizer.vocabSize).toBe(2048);
    });
  }
});
