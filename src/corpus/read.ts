import { readFile, readdir, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { z } from 'zod';
import { InputError } from '../errors.js';
import { contentChunkId, normalizeWhitespace, type Chunk } from './chunk.js';
import { readLines } from './lines.js';
import { readParquetRows } from './parquet.js';
import { deriveTitle } from './title.js';

/**
 * Corpus layouts `sleuth index --format` accepts:
 *  - jsonl: one chunk per line, `{id, text, title?, ...}`; other fields become meta.
 *  - parquet / harness1: the Harness-1 corpora layout (chunk id column, text, metadata columns).
 *  - hotpotqa: IRCoT JSONL (`contexts`), the original corpus JSON (`{title: [sentences]}`) or the
 *    original question file (`[{context: [[title, [sentences]]]}]`).
 *  - musique: the corpus JSON (`[{title, text}]`) or a question file (`paragraphs`), JSON or JSONL.
 *  - auto: chosen from the extension and the first record.
 */
export const CORPUS_FORMATS = ['auto', 'jsonl', 'parquet', 'harness1', 'hotpotqa', 'musique'] as const;
export type CorpusFormat = (typeof CORPUS_FORMATS)[number];

export interface ReadOptions {
  /** Bytes of input consumed so far and the total, over every file being read. */
  onProgress?: (bytesRead: number, totalBytes: number) => void;
}

/** A chunk and where it came from, for error messages. */
interface Located {
  chunk: Chunk;
  where: string;
}

/** Paragraph datasets have no chunk ids: the id is a hash of the normalised title and text. */
function paragraph(title: string, sentencesOrText: string | string[]): Chunk {
  const t = normalizeWhitespace(title);
  const text = normalizeWhitespace(Array.isArray(sentencesOrText) ? sentencesOrText.join(' ') : sentencesOrText);
  return { id: contentChunkId(t, text), title: t, text };
}

function parseJsonLine(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InputError(`${where}: malformed JSON (${(err as Error).message})`);
  }
}

/** A JSONL or Parquet record `{id, text, title?, ...rest}` as a chunk; rest goes to meta. */
function recordChunk(rec: unknown, where: string, columns?: { id: string; text: string; title?: string }): Chunk {
  if (typeof rec !== 'object' || rec === null || Array.isArray(rec)) throw new InputError(`${where}: expected a JSON object, got ${Array.isArray(rec) ? 'an array' : typeof rec}`);
  const r = rec as Record<string, unknown>;
  const idKey = columns?.id ?? 'id';
  const textKey = columns?.text ?? 'text';
  const titleKey = columns?.title ?? 'title';
  const id = r[idKey];
  if (typeof id !== 'string' && typeof id !== 'number' && typeof id !== 'bigint') throw new InputError(`${where}: missing field "${idKey}" (a string chunk id)`);
  if (String(id).length === 0) throw new InputError(`${where}: field "${idKey}" is empty`);
  const text = r[textKey];
  if (typeof text !== 'string') throw new InputError(`${where}: missing field "${textKey}" (a string)`);
  const title = r[titleKey];
  if (title !== undefined && title !== null && typeof title !== 'string') throw new InputError(`${where}: field "${titleKey}" must be a string`);
  let meta: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(r)) {
    if (k === idKey || k === textKey || k === titleKey) continue;
    (meta ??= {})[k] = typeof v === 'bigint' ? Number(v) : v;
  }
  const chunk: Chunk = { id: String(id), title: typeof title === 'string' ? title : deriveTitle(text, meta), text };
  if (meta) chunk.meta = meta;
  return chunk;
}

const Sentences = z.array(z.string());
const HotpotCorpus = z.record(z.string(), Sentences);
const HotpotQuestions = z.array(z.object({ context: z.array(z.tuple([z.string(), Sentences])) }));
const MusiqueCorpus = z.array(z.object({ title: z.string(), text: z.string() }));
const MusiqueParagraphs = z.object({ paragraphs: z.array(z.object({ title: z.string(), paragraph_text: z.string() })) });
const IrcotContexts = z.object({ contexts: z.array(z.object({ title: z.string(), paragraph_text: z.string() })) });

function zodWhere(err: z.ZodError): string {
  const issue = err.issues[0]!;
  return `${issue.path.length ? `at ${issue.path.join('.')}: ` : ''}${issue.message}`;
}

function parseWith<T>(schema: z.ZodType<T>, value: unknown, where: string, layout: string): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new InputError(`${where}: not the ${layout} layout (${zodWhere(r.error)})`);
  return r.data;
}

/** One line of a JSONL file in any of the line layouts. */
function* lineChunks(rec: unknown, where: string, layout: 'jsonl' | 'hotpotqa' | 'musique'): Generator<Chunk> {
  if (layout === 'jsonl') {
    yield recordChunk(rec, where);
  } else if (layout === 'hotpotqa') {
    for (const c of parseWith(IrcotContexts, rec, where, 'HotpotQA IRCoT (contexts)').contexts) yield paragraph(c.title, c.paragraph_text);
  } else {
    for (const p of parseWith(MusiqueParagraphs, rec, where, 'MuSiQue question (paragraphs)').paragraphs) yield paragraph(p.title, p.paragraph_text);
  }
}

/** Which line layout a JSONL record is in, from its fields. */
function sniffRecord(rec: unknown): 'jsonl' | 'hotpotqa' | 'musique' {
  if (typeof rec === 'object' && rec !== null) {
    if ('contexts' in rec) return 'hotpotqa';
    if ('paragraphs' in rec) return 'musique';
  }
  return 'jsonl';
}

async function* readJsonl(path: string, layout: 'auto' | 'jsonl' | 'hotpotqa' | 'musique', onBytes: (b: number) => void): AsyncGenerator<Located> {
  let resolved = layout === 'auto' ? undefined : layout;
  for await (const line of readLines(path, onBytes)) {
    if (line.text.trim() === '') continue;
    const where = `${path}:${line.number}`;
    const rec = parseJsonLine(line.text, where);
    resolved ??= sniffRecord(rec);
    for (const chunk of lineChunks(rec, where, resolved)) yield { chunk, where };
  }
}

/** Whole-file JSON layouts (HotpotQA and MuSiQue corpora and question files): small, parsed at once. */
async function* readJson(path: string, layout: 'auto' | 'jsonl' | 'hotpotqa' | 'musique'): AsyncGenerator<Located> {
  const raw = path.endsWith('.gz') ? gunzipSync(await readFile(path)).toString('utf8') : await readFile(path, 'utf8');
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw new InputError(`${path}: malformed JSON (${(err as Error).message})`);
  }
  const where = (i: number | string) => `${path} (record ${i})`;
  if (!Array.isArray(value)) {
    if (layout === 'jsonl' || layout === 'musique') throw new InputError(`${path}: expected a JSON array of records for --format ${layout}`);
    const corpus = parseWith(HotpotCorpus, value, path, 'HotpotQA corpus {title: [sentences]}');
    for (const [title, sentences] of Object.entries(corpus)) yield { chunk: paragraph(title, sentences), where: where(JSON.stringify(title)) };
    return;
  }
  for (let i = 0; i < value.length; i++) {
    const rec: unknown = value[i];
    const w = where(i);
    if (typeof rec === 'object' && rec !== null && 'context' in rec && layout !== 'jsonl') {
      const [q] = parseWith(HotpotQuestions, [rec], w, 'HotpotQA question (context)');
      for (const [title, sentences] of q!.context) yield { chunk: paragraph(title, sentences), where: w };
    } else if (typeof rec === 'object' && rec !== null && 'paragraphs' in rec && layout !== 'jsonl') {
      for (const chunk of lineChunks(rec, w, 'musique')) yield { chunk, where: w };
    } else if (typeof rec === 'object' && rec !== null && 'contexts' in rec && layout !== 'jsonl') {
      for (const chunk of lineChunks(rec, w, 'hotpotqa')) yield { chunk, where: w };
    } else if (layout === 'musique' || (layout === 'auto' && typeof rec === 'object' && rec !== null && !('id' in rec) && 'title' in rec)) {
      const [p] = parseWith(MusiqueCorpus, [rec], w, 'MuSiQue corpus [{title, text}]');
      yield { chunk: paragraph(p!.title, p!.text), where: w };
    } else {
      yield { chunk: recordChunk(rec, w), where: w };
    }
  }
}

async function* readParquet(path: string, onBytes: (b: number) => void): AsyncGenerator<Located> {
  for await (const { row, index, columns } of readParquetRows(path, onBytes)) {
    yield { chunk: recordChunk(row, `${path} (row ${index + 1})`, columns), where: `${path} (row ${index + 1})` };
  }
}

/** The files a path stands for: itself, or the corpus files directly inside a directory, sorted. */
async function expandPath(path: string): Promise<{ file: string; bytes: number }[]> {
  let st;
  try {
    st = await stat(path);
  } catch (err) {
    throw new InputError(`cannot read corpus ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (!st.isDirectory()) return [{ file: path, bytes: st.size }];
  const names = (await readdir(path)).filter((n) => ['.jsonl', '.json', '.parquet', '.ndjson'].includes(extname(n.replace(/\.gz$/i, '')).toLowerCase())).sort();
  if (names.length === 0) throw new InputError(`corpus directory ${path} holds no .jsonl, .json or .parquet files`);
  return Promise.all(names.map(async (n) => ({ file: join(path, n), bytes: (await stat(join(path, n))).size })));
}

async function* readFileLocated(file: string, format: CorpusFormat, onBytes: (b: number) => void): AsyncGenerator<Located> {
  const ext = extname(file.replace(/\.gz$/i, '')).toLowerCase();
  const isParquet = format === 'parquet' || format === 'harness1' || (format === 'auto' && ext === '.parquet');
  try {
    if (isParquet) yield* readParquet(file, onBytes);
    else if (ext === '.json') yield* readJson(file, format === 'auto' ? 'auto' : format);
    else yield* readJsonl(file, format, onBytes);
  } catch (err) {
    if (err instanceof InputError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code) throw new InputError(`cannot read corpus ${file}: ${code}`);
    throw err;
  }
}

/**
 * A cheap content fingerprint for telling a repeated chunk from a different chunk under the same
 * id: FNV-1a over the title, the length and the two ends of the text. Hashing every byte of a
 * multi-gigabyte corpus would cost seconds for a check that almost never fires.
 */
function fingerprint(c: Chunk): number {
  let h = 0x811c9dc5;
  const mix = (s: string) => {
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  };
  mix(c.title);
  mix(String(c.text.length));
  mix(c.text.length <= 1024 ? c.text : c.text.slice(0, 512) + c.text.slice(-512));
  return h >>> 0;
}

/**
 * Chunks of one or more corpus files (or directories of them), in file order, deduplicated by id.
 * A repeated id with the same content is dropped; with different content it is an InputError
 * naming both places. An input without chunks is an InputError.
 */
export async function* readCorpora(sources: { path: string; format?: CorpusFormat }[], options: ReadOptions = {}): AsyncGenerator<Chunk> {
  const files: { file: string; bytes: number; format: CorpusFormat }[] = [];
  for (const s of sources) for (const f of await expandPath(s.path)) files.push({ ...f, format: s.format ?? 'auto' });
  const total = files.reduce((n, f) => n + f.bytes, 0);
  // id -> content fingerprint; one small entry per chunk is the memory this check needs.
  const seen = new Map<string, number>();
  let done = 0;
  for (const f of files) {
    let fromFile = 0;
    for await (const { chunk, where } of readFileLocated(f.file, f.format, (b) => options.onProgress?.(done + b, total))) {
      fromFile++;
      const print = fingerprint(chunk);
      const before = seen.get(chunk.id);
      if (before !== undefined) {
        if (before !== print) throw new InputError(`${where}: duplicate chunk id "${chunk.id}" with different content than its first occurrence`);
        continue;
      }
      seen.set(chunk.id, print);
      yield chunk;
    }
    if (fromFile === 0) throw new InputError(`${f.file}: no chunks found (empty corpus)`);
    done += f.bytes;
    options.onProgress?.(done, total);
  }
}

/** Chunks of one corpus file or directory. */
export function readChunks(path: string, format: CorpusFormat = 'auto', options: ReadOptions = {}): AsyncGenerator<Chunk> {
  return readCorpora([{ path, format }], options);
}
