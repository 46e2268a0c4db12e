import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parquetWriteFile } from 'hyparquet-writer';

/**
 * A tiny download of `pat-jj/harness-1-train-data` in its published layout: the task rows in
 * data/train-00000-of-00001.parquet (columns stage, source, dataset_name, query_id, query, answer,
 * document_ids_json, payload_json; both stages present) and SEC chunks under corpora/sec/, with
 * `{accession}_{i}` ids and the Company / Filing Date / Form / Item header.
 */
export interface Harness1Row {
  stage: string;
  query_id: string;
  query: string;
  answer: string;
  document_ids_json: string;
}

export const SEC_CHUNKS = [
  { id: '0000320193-23-000106_0', company: 'Apple Inc.', date: '2023-11-03', form: '10-K', item: 'Item 7', body: 'Total net sales decreased 3% or $10.9 billion during 2023 compared to 2022.' },
  { id: '0000320193-23-000106_1', company: 'Apple Inc.', date: '2023-11-03', form: '10-K', item: 'Item 7', body: 'iPhone net sales decreased during 2023 compared to 2022 due to lower net sales of non-Pro iPhone models.' },
  { id: '0000789019-23-000014_0', company: 'MICROSOFT CORP', date: '2023-07-27', form: '10-K', item: 'Item 1A', body: 'Our business depends on our ability to attract and retain talented employees.' },
  { id: '0000789019-23-000014_1', company: 'MICROSOFT CORP', date: '2023-07-27', form: '10-K', item: 'Item 8', body: 'Revenue was $211.9 billion, increased $13.6 billion or 7%.' },
];

export function secText(c: (typeof SEC_CHUNKS)[number]): string {
  return `Company: ${c.company}\nFiling Date: ${c.date}\nForm: ${c.form}\nItem: ${c.item}\n\n${c.body}`;
}

export const DEFAULT_ROWS: Harness1Row[] = [
  {
    stage: 'rl',
    query_id: 'sec_train_0001',
    query: 'A consumer electronics maker saw net sales fall 3% in fiscal 2023. Which product line drove the decline?',
    answer: 'iPhone',
    document_ids_json: JSON.stringify([
      { fact: 'Total net sales decreased 3% in 2023', chunk_ids: ['0000320193-23-000106_0'], is_final_answer: false },
      { fact: 'iPhone net sales decreased in 2023', chunk_ids: ['0000320193-23-000106_1', '0000320193-23-000106_0'], is_final_answer: true },
    ]),
  },
  {
    stage: 'rl',
    query_id: 'sec_train_0002',
    query: 'What was the software company\'s fiscal 2023 revenue?',
    answer: '$211.9 billion',
    document_ids_json: JSON.stringify([{ fact: 'Revenue was $211.9 billion in fiscal 2023', chunk_ids: ['0000789019-23-000014_1'], is_final_answer: true }]),
  },
  {
    stage: 'sft',
    query_id: 'sec_sft_0001',
    query: 'A trajectory row that the RL loader must leave out.',
    answer: '',
    document_ids_json: JSON.stringify([{ fact: 'x', chunk_ids: ['0000789019-23-000014_0'], is_final_answer: true }]),
  },
];

export function writeHarness1Download(dir: string, rows: Harness1Row[] = DEFAULT_ROWS): string {
  mkdirSync(join(dir, 'data'), { recursive: true });
  mkdirSync(join(dir, 'corpora', 'sec'), { recursive: true });
  parquetWriteFile({
    filename: join(dir, 'data', 'train-00000-of-00001.parquet'),
    columnData: [
      { name: 'stage', data: rows.map((r) => r.stage), type: 'STRING' },
      { name: 'source', data: rows.map(() => 'sec'), type: 'STRING' },
      { name: 'dataset_name', data: rows.map(() => 'sec_1_4'), type: 'STRING' },
      { name: 'query_id', data: rows.map((r) => r.query_id), type: 'STRING' },
      { name: 'query', data: rows.map((r) => r.query), type: 'STRING' },
      { name: 'answer', data: rows.map((r) => r.answer), type: 'STRING' },
      { name: 'document_ids_json', data: rows.map((r) => r.document_ids_json), type: 'STRING' },
      { name: 'payload_json', data: rows.map((r) => JSON.stringify({ stage: r.stage })), type: 'STRING' },
    ],
  });
  parquetWriteFile({
    filename: join(dir, 'corpora', 'sec', 'part-00000.parquet'),
    columnData: [
      { name: 'chunk_id', data: SEC_CHUNKS.map((c) => c.id), type: 'STRING' },
      { name: 'text', data: SEC_CHUNKS.map(secText), type: 'STRING' },
      { name: 'company', data: SEC_CHUNKS.map((c) => c.company), type: 'STRING' },
      { name: 'filing_date', data: SEC_CHUNKS.map((c) => c.date), type: 'STRING' },
      { name: 'form', data: SEC_CHUNKS.map((c) => c.form), type: 'STRING' },
    ],
  });
  return dir;
}
