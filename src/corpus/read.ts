import { readFile, readdir, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { z } from 'zod';
import { InputError } from '../errors.js';
import { contentChunkId, isUtf8Chunk, normalizeWhitespace, type Chunk, type SourceChunk } from './chunk.js';
import { IdTable } from './id-table.js';
import { parseJsonRecord } from './json-depth.js';
import { JsonlScanner, LINE_BLANK, LINE_OK, NO_TITLE, line as scanned } from './jsonl-scan.js';
import { decodeLine, readLineBatches, readLineBytes } from './lines.js';
import { readParquetRowGroups } from './parquet.js';
import { deriveTitle } from './title.js';
import { regularFile } from './regular-file.js';
import { decodeWhole } from './utf8.js';

/**
 * Corpus layouts `sleuth index --format` accepts:
 *  - jsonl: one chunk per line, `{id, text, title?, ...}`; other fields become meta.
 *  - parquet / harness1: the Harness-1 corpora layout (chunk id column, text, metadata columns).
 *  - hotpotqa: IRCoT JSONL (`contexts`), the original corpus JSON (`{title: [sentences]}`) or the
 *    original question file (`[{context: [[title, [sentences]]]}]`).
 *  - musique: the corpus JSON (`[{title, text}]`) or a question file (`paragraphs`), JSON or JSONL.
 *  - beir: BEIR's corpus.jsonl, `{_id, title, text, metadata?}` per line (an empty title is derived).
 *  - auto: chosen from the extension and the first record.
 */
export const CORPUS_FORMATS = ['auto', 'jsonl', 'parquet', 'harness1', 'hotpotqa', 'musique', 'beir'] as const;
export type CorpusFormat = (typeof CORPUS_FORMATS)[number];

export interface ReadOptions {
  /** Bytes of input consumed so far and the total, over every file being read. */
  onProgress?: (bytesRead: number, totalBytes: number) => void;
}

/** A chunk and where it came from, for error messages. */
interface Located {
  chunk: SourceChunk;
  where: string;
  /** The chunk's fingerprint(), when the reader has it already. */
  print?: number;
}

/** Paragraph datasets have no chunk ids: the id is a hash of the normalised title and text. */
function paragraph(title: string, sentencesOrText: string | string[]): Chunk {
  const t = normalizeWhitespace(title);
  const text = normalizeWhitespace(Array.isArray(sentencesOrText) ? sentencesOrText.join(' ') : sentencesOrText);
  return { id: contentChunkId(t, text), title: t, text };
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

/** The chunks of one line of a JSONL file in any of the line layouts, appended to `out`. */
function lineChunks(rec: unknown, where: string, layout: LineLayout, out: Located[]): void {
  if (layout === 'jsonl') {
    out.push({ chunk: recordChunk(rec, where), where });
  } else if (layout === 'beir') {
    const chunk = recordChunk(rec, where, BEIR_COLUMNS);
    // BEIR leaves the title empty where the source has none (most of SciFact's claims, MS MARCO).
    if (chunk.title === '') chunk.title = deriveTitle(chunk.text, chunk.meta);
    out.push({ chunk, where });
  } else if (layout === 'hotpotqa') {
    for (const c of parseWith(IrcotContexts, rec, where, 'HotpotQA IRCoT (contexts)').contexts) out.push({ chunk: paragraph(c.title, c.paragraph_text), where });
  } else {
    for (const p of parseWith(MusiqueParagraphs, rec, where, 'MuSiQue question (paragraphs)').paragraphs) out.push({ chunk: paragraph(p.title, p.paragraph_text), where });
  }
}

/** BEIR's corpus.jsonl names its id `_id`. */
const BEIR_COLUMNS = { id: '_id', text: 'text', title: 'title' };

/** Which line layout a JSONL record is in, from its fields. */
function sniffRecord(rec: unknown): LineLayout {
  if (typeof rec === 'object' && rec !== null) {
    if ('contexts' in rec) return 'hotpotqa';
    if ('paragraphs' in rec) return 'musique';
    if ('_id' in rec && !('id' in rec)) return 'beir';
  }
  return 'jsonl';
}

type LineLayout = 'jsonl' | 'hotpotqa' | 'musique' | 'beir';

/**
 * One JSONL line the JSON.parse way (a blank one is skipped): its chunks appended to `out`; returns
 * the file's line layout, taken from its first record when not known yet.
 */
function jsonLine(text: string, where: string, resolved: LineLayout | undefined, out: Located[]): LineLayout | undefined {
  if (text.trim() === '') return resolved;
  const rec = parseJsonRecord(text, where);
  const layout = resolved ?? sniffRecord(rec);
  lineChunks(rec, where, layout, out);
  return layout;
}

async function* readJsonl(path: string, layout: 'auto' | LineLayout, onBytes: (b: number) => void, utf8Texts: boolean): AsyncGenerator<Located[]> {
  if (utf8Texts && (layout === 'auto' || layout === 'jsonl')) {
    const scanner = JsonlScanner.create();
    if (scanner) {
      yield* readJsonlUtf8(path, layout, onBytes, scanner);
      return;
    }
  }
  let resolved = layout === 'auto' ? undefined : layout;
  for await (const lines of readLineBatches(path, onBytes)) {
    const out: Located[] = [];
    for (const line of lines) resolved = jsonLine(line.text, `${path}:${line.number}`, resolved, out);
    if (out.length > 0) yield out;
  }
}

const utf8Decoder = new TextDecoder();

/**
 * readJsonl with the texts of plain chunk lines left as UTF-8 (Utf8Chunk): the scanner takes those
 * lines a batch at a time (./jsonl-scan.ts); every other line goes the JSON.parse way, line by line,
 * and makes the same chunks and the same errors as readJsonl's.
 */
async function* readJsonlUtf8(path: string, layout: 'auto' | 'jsonl', onBytes: (b: number) => void, scanner: JsonlScanner): AsyncGenerator<Located[]> {
  let resolved: LineLayout | undefined = layout === 'auto' ? undefined : layout;
  for await (const { bytes, firstLine, invalid } of readLineBytes(path, onBytes)) {
    const { lines, records, arena } = scanner.scan(bytes);
    // A line that is not UTF-8 goes the decoding way, where its bad bytes become U+FFFD (and are counted).
    const notUtf8 = invalid.length > 0 ? new Set(invalid) : undefined;
    const out: Located[] = [];
    const text = (at: [number, number]) => utf8Decoder.decode(arena.subarray(at[0], at[0] + at[1]));
    for (let i = 0; i < lines; i++) {
      const number = firstLine + i;
      const status = scanned.status(records, i);
      if (status === LINE_BLANK) continue;
      const where = `${path}:${number}`;
      // A plain record is the jsonl layout; in a file already taken for another, JSON.parse's way says why not.
      if (status === LINE_OK && !notUtf8?.has(number) && (resolved ??= 'jsonl') === 'jsonl') {
        const id = text(scanned.id(records, i));
        const [titleAt, titleLength] = scanned.title(records, i);
        const [textAt, textLength] = scanned.text(records, i);
        const utf8 = arena.subarray(textAt, textAt + textLength);
        if (titleLength === NO_TITLE) {
          const body = utf8Decoder.decode(utf8);
          out.push({ chunk: { id, title: deriveTitle(body, undefined), text: body }, where });
        } else {
          out.push({ chunk: { id, title: text([titleAt, titleLength]), utf8, units: scanned.units(records, i) }, where, print: scanned.fingerprint(records, i) });
        }
        continue;
      }
      const [start, end] = scanned.span(records, i);
      resolved = jsonLine(decodeLine(bytes, start, end, number === 1), where, resolved, out);
    }
    if (out.length > 0) yield out;
  }
}

/** Whole-file JSON layouts (HotpotQA and MuSiQue corpora and question files): small, parsed at once. */
async function* readJson(path: string, layout: 'auto' | 'jsonl' | 'hotpotqa' | 'musique'): AsyncGenerator<Located[]> {
  yield [...jsonChunks(path, layout, await readJsonValue(path))];
}

async function readJsonValue(path: string): Promise<unknown> {
  const raw = decodeWhole(path, path.endsWith('.gz') ? gunzipSync(await readFile(path)) : await readFile(path));
  return parseJsonRecord(raw, path);
}

function* jsonChunks(path: string, layout: 'auto' | 'jsonl' | 'hotpotqa' | 'musique', value: unknown): Generator<Located> {
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
      yield* lineLocated(rec, w, 'musique');
    } else if (typeof rec === 'object' && rec !== null && 'contexts' in rec && layout !== 'jsonl') {
      yield* lineLocated(rec, w, 'hotpotqa');
    } else if (layout === 'musique' || (layout === 'auto' && typeof rec === 'object' && rec !== null && !('id' in rec) && 'title' in rec)) {
      const [p] = parseWith(MusiqueCorpus, [rec], w, 'MuSiQue corpus [{title, text}]');
      yield { chunk: paragraph(p!.title, p!.text), where: w };
    } else {
      yield { chunk: recordChunk(rec, w), where: w };
    }
  }
}

function lineLocated(rec: unknown, where: string, layout: 'hotpotqa' | 'musique'): Located[] {
  const out: Located[] = [];
  lineChunks(rec, where, layout, out);
  return out;
}

async function* readParquet(path: string, onBytes: (b: number) => void): AsyncGenerator<Located[]> {
  for await (const { rows, first, columns } of readParquetRowGroups(path, onBytes)) {
    yield rows.map((row, i) => {
      const where = `${path} (row ${first + i + 1})`;
      return { chunk: recordChunk(row, where, columns), where };
    });
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
  if (!st.isDirectory()) return [{ file: path, bytes: regularFile(path, st).size }];
  const names = (await readdir(path)).filter((n) => ['.jsonl', '.json', '.parquet', '.ndjson'].includes(extname(n.replace(/\.gz$/i, '')).toLowerCase())).sort();
  if (names.length === 0) throw new InputError(`corpus directory ${path} holds no .jsonl, .json or .parquet files`);
  return Promise.all(names.map(async (n) => ({ file: join(path, n), bytes: regularFile(join(path, n), await stat(join(path, n))).size })));
}

/**
 * The chunks of one file, a batch at a time (a read buffer, a row group, a whole JSON file);
 * `utf8Texts`: JSONL lines' texts may stay UTF-8 (Utf8Chunk).
 */
async function* readFileLocated(file: string, format: CorpusFormat, onBytes: (b: number) => void, utf8Texts: boolean): AsyncGenerator<Located[]> {
  const ext = extname(file.replace(/\.gz$/i, '')).toLowerCase();
  const isParquet = format === 'parquet' || format === 'harness1' || (format === 'auto' && ext === '.parquet');
  try {
    if (isParquet) yield* readParquet(file, onBytes);
    else if (ext === '.json') {
      if (format === 'beir') throw new InputError(`${file}: --format beir reads BEIR's corpus.jsonl (one {_id, title, text} per line), not a .json file`);
      yield* readJson(file, format === 'auto' ? 'auto' : format);
    }
    else yield* readJsonl(file, format, onBytes, utf8Texts);
  } catch (err) {
    if (err instanceof InputError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code) throw new InputError(`cannot read corpus ${file}: ${code}`);
    throw err;
  }
}

/** UTF-8 bytes hashed from each end of a text by fingerprint(). */
const FINGERPRINT_ENDS = 64;
const fingerprintEncoder = new TextEncoder();
const fingerprintBytes = new Uint8Array(3 * (FINGERPRINT_ENDS + 1));

/**
 * A cheap content fingerprint for telling a repeated chunk from a different chunk under the same
 * id: FNV-1a over the title, the text's length and the first and last 64 bytes of its UTF-8 (the
 * same whether the text came as a string or as UTF-8). Hashing every character of a corpus costs
 * 3 s per million chunks (measured) for a check that almost never fires; two different chunks
 * under one id with the same title, length and ends pass as one.
 */
function fingerprint(chunk: SourceChunk): number {
  const title = chunk.title;
  let h = 0x811c9dc5;
  for (let i = 0; i < title.length; i++) h = Math.imul(h ^ title.charCodeAt(i), 0x01000193);
  const hash = (bytes: Uint8Array) => {
    for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  };
  if (isUtf8Chunk(chunk)) {
    const n = chunk.utf8.length;
    h = Math.imul(h ^ chunk.units, 0x01000193);
    hash(chunk.utf8.subarray(0, Math.min(n, FINGERPRINT_ENDS)));
    hash(chunk.utf8.subarray(Math.max(FINGERPRINT_ENDS, n - FINGERPRINT_ENDS)));
  } else {
    const text = chunk.text;
    const n = Buffer.byteLength(text, 'utf8');
    h = Math.imul(h ^ text.length, 0x01000193);
    // 65 code units hold the first (last) 64 bytes, and a surrogate pair cut at the slice's far
    // end (start) falls outside them.
    const head = fingerprintEncoder.encodeInto(text.slice(0, FINGERPRINT_ENDS + 1), fingerprintBytes).written;
    hash(fingerprintBytes.subarray(0, Math.min(head, FINGERPRINT_ENDS)));
    const tail = fingerprintEncoder.encodeInto(text.slice(-(FINGERPRINT_ENDS + 1)), fingerprintBytes).written;
    hash(fingerprintBytes.subarray(tail - (n - Math.min(n, Math.max(FINGERPRINT_ENDS, n - FINGERPRINT_ENDS))), tail));
  }
  return h >>> 0;
}

export interface CorpusSource {
  path: string;
  format?: CorpusFormat;
}

/**
 * Chunks of one or more corpus files (or directories of them), in file order, deduplicated by id.
 * A repeated id with the same content is dropped; with different content it is an InputError
 * naming both places. An input without chunks is an InputError.
 */
export async function* readCorpora(sources: CorpusSource[], options: ReadOptions = {}): AsyncGenerator<Chunk> {
  for await (const batch of readCorporaBatches(sources, options)) yield* batch;
}

/**
 * readCorpora a batch at a time (a read buffer of lines, a Parquet row group): what the indexer
 * reads, since an asynchronous step per chunk costs seconds per million chunks.
 */
export function readCorporaBatches(sources: CorpusSource[], options: ReadOptions = {}): AsyncGenerator<Chunk[]> {
  return readBatches(sources, options, false) as AsyncGenerator<Chunk[]>;
}

/**
 * readCorporaBatches for the index builder: the texts of plain JSONL chunk lines stay the UTF-8
 * they were read as (Utf8Chunk), never made strings (a third of the reading time at a million
 * chunks, measured, and the encoding back to UTF-8 after).
 */
export function readSourceBatches(sources: CorpusSource[], options: ReadOptions = {}): AsyncGenerator<SourceChunk[]> {
  return readBatches(sources, options, true);
}

async function* readBatches(sources: CorpusSource[], options: ReadOptions, utf8Texts: boolean): AsyncGenerator<SourceChunk[]> {
  const files: { file: string; bytes: number; format: CorpusFormat }[] = [];
  for (const s of sources) for (const f of await expandPath(s.path)) files.push({ ...f, format: s.format ?? 'auto' });
  const total = files.reduce((n, f) => n + f.bytes, 0);
  // id -> content fingerprint; one small entry per chunk is the memory this check needs.
  const seen = new IdTable();
  let done = 0;
  for (const f of files) {
    let fromFile = 0;
    for await (const located of readFileLocated(f.file, f.format, (b) => options.onProgress?.(done + b, total), utf8Texts)) {
      const batch: SourceChunk[] = [];
      for (const { chunk, where, print: known } of located) {
        fromFile++;
        const print = known ?? fingerprint(chunk);
        const before = seen.setIfAbsent(chunk.id, print);
        if (before !== undefined) {
          if (before !== print) throw new InputError(`${where}: duplicate chunk id "${chunk.id}" with different content than its first occurrence`);
          continue;
        }
        batch.push(chunk);
      }
      if (batch.length > 0) yield batch;
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

/** readChunks a batch at a time (see readCorporaBatches). */
export function readChunkBatches(path: string, format: CorpusFormat = 'auto', options: ReadOptions = {}): AsyncGenerator<Chunk[]> {
  return readCorporaBatches([{ path, format }], options);
}
