/**
 * Builds the embedded default corpus from the shared datasets:
 *   node dist/scripts/build-embedded-corpus.js [DATA_DIR] [OUT_DIR]
 * (defaults: ../shared/data beside the package, data/embedded). Reads the HotpotQA dev-500 paragraphs (IRCoT
 * layout), the MuSiQue-100 paragraphs (question file and corpus) and the HotpotQA train-100 corpus
 * (corpus and question file), deduplicates by content id, sorts by id, decodes the HTML
 * character references the sources leave in titles and text (`Anchor &amp; Braille`), and writes
 * corpus.jsonl.gz and ATTRIBUTION.md. Same inputs, same bytes. The ids stay the content ids of the
 * paragraphs as published, which the task files' facts name.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Chunk } from '../src/corpus/chunk.js';
import { decodeHtmlEntities } from '../src/corpus/entities.js';
import { readCorpora } from '../src/corpus/read.js';
import { packageRoot } from '../src/tasks/store.js';

const dataDir = process.argv[2] ?? join(packageRoot(), '..', 'shared', 'data');
const outDir = process.argv[3] ?? 'data/embedded';

const SOURCES = [
  { path: join(dataDir, 'hotpotqa/dev500.ircot.jsonl'), format: 'hotpotqa' as const },
  { path: join(dataDir, 'musique/train100.json'), format: 'musique' as const },
  { path: join(dataDir, 'musique/train100_corpus.json'), format: 'musique' as const },
  { path: join(dataDir, 'hotpotqa/train100_corpus.json'), format: 'hotpotqa' as const },
  { path: join(dataDir, 'hotpotqa/train100.json'), format: 'hotpotqa' as const },
];

const chunks: Chunk[] = [];
const perSource: Record<string, number> = {};
for (const source of SOURCES) {
  let n = 0;
  for await (const c of readCorpora([source])) {
    chunks.push(c);
    n++;
  }
  perSource[source.path] = n;
}
// Deduplicate across sources (the id is a hash of title and text, so equal ids are equal paragraphs).
const byId = new Map<string, Chunk>();
for (const c of chunks) if (!byId.has(c.id)) byId.set(c.id, c);
const sorted = [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
const jsonl = sorted.map((c) => JSON.stringify({ id: c.id, title: decodeHtmlEntities(c.title), text: decodeHtmlEntities(c.text) })).join('\n') + '\n';

// The attribution lines: the table rows of the data README for the datasets used here.
const readme = readFileSync(join(dataDir, 'README.md'), 'utf8');
const rows = readme.split('\n').filter((l) => l.startsWith('| hotpotqa/') || l.startsWith('| musique/'));
const attribution = [
  '# Attribution of the embedded default corpus',
  '',
  'data/embedded/corpus.jsonl.gz holds the paragraphs of the datasets below, deduplicated, with ids',
  'contentChunkId(title, text) (src/corpus/chunk.ts). HotpotQA is licensed CC BY-SA 4.0, so this corpus,',
  'a derivative, is distributed under CC BY-SA 4.0 as well; MuSiQue is licensed CC BY 4.0.',
  '',
  '- HotpotQA: Zhilin Yang, Peng Qi, Saizheng Zhang, Yoshua Bengio, William W. Cohen, Ruslan Salakhutdinov,',
  '  Christopher D. Manning. "HotpotQA: A Dataset for Diverse, Explainable Multi-hop Question Answering",',
  '  EMNLP 2018. https://hotpotqa.github.io/ — CC BY-SA 4.0.',
  '- MuSiQue: Harsh Trivedi, Niranjan Balasubramanian, Tushar Khot, Ashish Sabharwal. "MuSiQue: Multihop',
  '  Questions via Single-hop Question Composition", TACL 2022. https://github.com/StonyBrookNLP/musique — CC BY 4.0.',
  '',
  'As listed in the source data README:',
  '',
  '| path | what | records | source | licence |',
  '|---|---|---|---|---|',
  ...rows,
  '',
  `Paragraphs: ${sorted.length} unique (${Object.entries(perSource).map(([p, n]) => `${p.slice(dataDir.length + 1)}: ${n}`).join('; ')}).`,
  '',
].join('\n');

mkdirSync(outDir, { recursive: true });
const tmp = join(outDir, '.corpus.jsonl.gz.tmp');
writeFileSync(tmp, gzipSync(Buffer.from(jsonl), { level: 9 }));
renameSync(tmp, join(outDir, 'corpus.jsonl.gz'));
writeFileSync(join(outDir, 'ATTRIBUTION.md'), attribution);
console.log(`wrote ${sorted.length} chunks to ${join(outDir, 'corpus.jsonl.gz')}`);
