import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { embeddedTokenizerTexts } from '../../src/backend/local/tokenizer.js';

/**
 * The shipped base model's tokenizer is trained from this text (base-model.ts: 400,000 characters of
 * the embedded corpus and 200 synthetic transcripts), so any change to it changes the shipped model's
 * vocabulary. The hash pins it: a change here must be a deliberate new base model.
 */
describe('the tokenizer training text of the shipped base model', () => {
  it('is unchanged', async () => {
    const texts = await embeddedTokenizerTexts(400_000, 200);
    const hash = createHash('sha256');
    for (const t of texts) hash.update(t).update('\u0000');
    expect({ texts: texts.length, sha256: hash.digest('hex') }).toEqual({ texts: 902, sha256: '7e1942a2855dd94493b20ae5dbc641ddedee9e183a23be6c5ab5f1861ca21107' });
  });
});
